// Package demo is Sift's demo content — the documentation and the #help
// channel of Wren, a fictional job scheduler (see README.md) — and loads it
// into an engine. `sift serve --demo` and tests use it.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/extract"
	"github.com/sift-search/sift/record"
)

//go:embed docs/*.md discord-export.json
var demoFS embed.FS

// The demo's source ids.
const (
	DocsSource = "wren-docs"
	ChatSource = "wren-discord"
)

// Store is where the demo content goes: either store.
type Store interface {
	crawl.Importer
	Counts(private bool) record.Counts
	PutSource(s record.Source) (record.Source, error)
	PutDocuments(docs []record.Document) ([]record.Document, error)
	Settings() map[string]string
	UpdateSettings(changes map[string]string) (map[string]string, error)
}

// The demo site's identity, set when the operator has set none.
const (
	siteName        = "Wren Community"
	siteDescription = "Questions and answers from the Wren scheduler's #help channel, and its documentation: search them, or ask in your own words."
)

// Load fills an empty store with the demo content. A store that holds
// anything is left alone. log may be nil.
func Load(eng Store, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c := eng.Counts(true); c.Messages > 0 || c.Documents > 0 {
		log.Info("data dir is not empty; demo content not loaded")
		return nil
	}
	if _, err := eng.PutSource(record.Source{ID: DocsSource, Name: "Wren documentation", Type: "upload", Enabled: true}); err != nil {
		return err
	}
	files, err := fs.Glob(demoFS, "docs/*.md")
	if err != nil {
		return err
	}
	var docs []record.Document
	for _, f := range files {
		b, err := demoFS.ReadFile(f)
		if err != nil {
			return err
		}
		content := string(b)
		title := extract.MarkdownTitle(content)
		if title == "" {
			title = extract.TitleFromFileName(f)
		}
		docs = append(docs, record.Document{
			SourceID: DocsSource, Key: path.Base(f), Title: title, Content: content, Format: record.FormatMarkdown,
		})
	}
	if _, err := eng.PutDocuments(docs); err != nil {
		return err
	}
	if _, err := eng.PutSource(record.Source{ID: ChatSource, Name: "Wren Community Discord", Type: "discord", Enabled: true,
		Config: map[string]any{"guildId": "1102345678901234567"}}); err != nil {
		return err
	}
	f, err := demoFS.Open("discord-export.json")
	if err != nil {
		return err
	}
	defer f.Close()
	x, err := crawl.ParseDiscordExport(f, ChatSource)
	if err != nil {
		return fmt.Errorf("demo export: %w", err)
	}
	n, err := crawl.Import(eng, x)
	if err != nil {
		return err
	}
	if cur := eng.Settings(); cur["site_name"] == "" && cur["site_description"] == "" {
		if _, err := eng.UpdateSettings(map[string]string{"site_name": siteName, "site_description": siteDescription}); err != nil {
			return err
		}
	}
	log.Info("demo content loaded", "documents", len(docs), "messages", n, "channels", len(x.Channels))
	return nil
}
