// Package crawl brings content into the engine from outside: platform
// connectors, the web crawler and importers of chat exports. It writes
// through its Sink (the engine's public API) only.
//
// The Runner runs one job at a time per source (jobs.go): a crawl
// (crawl_run.go: build the source's connector, run it, record the
// result), an import of an export file (import_run.go; the format is
// detected in detect.go) or a deletion, which cancels the running job
// first. The scheduler (schedule.go) starts the crawls that are due.
// Connectors are one file each (discord.go, slack.go, github.go,
// discourse.go, web.go), registered in source.go; importers are one
// file per format (*_export.go).
package crawl
