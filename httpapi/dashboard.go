package httpapi

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// basicOnly lets only Basic Auth through: the dashboard is for people with
// a browser, and a Bearer token (an integration's key) does not open it.
func (s *Server) basicOnly(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !s.auth.hasBasic {
			writeError(ctx, fasthttp.StatusForbidden, "the dashboard is disabled: set ADMIN_USER and ADMIN_PASSWORD")
			return
		}
		if s.auth.basicOK(ctx) {
			h(ctx)
			return
		}
		ctx.Response.Header.Set("WWW-Authenticate", `Basic realm="sift dashboard", charset="UTF-8"`)
		writeError(ctx, fasthttp.StatusUnauthorized, "%s", dashboardRefusal(ctx))
	}
}

// dashboardRefusal says what is wrong with the credentials a dashboard
// request carries.
func dashboardRefusal(ctx *fasthttp.RequestCtx) string {
	switch _, basic := credentials(ctx, "Basic"); {
	case basic:
		return "the user name or password is wrong"
	case len(ctx.Request.Header.Peek("Authorization")) == 0:
		return "the dashboard needs the operator's user name and password (Basic Auth: ADMIN_USER and ADMIN_PASSWORD)"
	default:
		if _, bearer := credentials(ctx, "Bearer"); bearer {
			return "a Bearer token does not open the dashboard; sign in with the operator's user name and password (Basic Auth)"
		}
		return "the dashboard takes Basic Auth (the operator's user name and password), not this Authorization scheme"
	}
}

type dashboardData struct {
	consolePage
	Version  string
	Uptime   time.Duration
	Counts   record.Counts
	Sources  []dashboardSource
	Types    []typeChoice // for the "add a source" links
	Settings settingsView
	Semantic semantic.Status
	Snapshot *record.SnapshotInfo
	Log      record.LogStatus
	// Elsewhere describes where the records are kept when not in this
	// process's data dir (a cluster), instead of the log and snapshots.
	Elsewhere string
	Recent    []queryRecord
	Latency   []latencyRow
	Memory    struct {
		HeapMB, SysMB float64
		GC            uint32
		Goroutines    int
	}
	RateLimit string
	Model     string
}

// dashboardSource is a source with what the console shows and offers for
// it. Its actions follow what it is: a source that can be crawled as it
// stands (crawl.CanCrawl: a web site, or a platform with what its
// crawler needs) is crawled and tested; one whose type takes an export
// format is imported; an upload source is fed by uploads only.
type dashboardSource struct {
	record.Source
	Stats      record.SourceStats
	Running    string // kind of the job running for it, if any
	Crawlable  bool   // it can be crawled and tested
	NoCrawl    string // why not, when its type has a crawler
	Importable string // the export format it imports, if any
	Uploads    bool   // it is fed by uploads
	Skips      string // why its last import skipped messages: "empty message: 3, …"
}

// settingsView is the site settings form: the stored values (empty = the
// default) and the values in effect.
type settingsView struct {
	Name, Description                 string
	NameInEffect, DescriptionInEffect string
	Accent                            string // "" = the default
	AccentShown                       string // what the colour input shows
	LogoURL                           string // "" = none
	DataDir                           bool   // the logo outlives a restart
}

func (s *console) dashboardSource(src record.Source) dashboardSource {
	ds := dashboardSource{Source: src, Stats: s.eng.SourceStats(src.ID, true),
		Importable: crawl.ImportFormat(src.Type), Uploads: src.Type == "upload"}
	switch err := crawl.CanCrawl(src); {
	case err == nil:
		ds.Crawlable = true
	case crawl.Crawlable(src.Type):
		ds.NoCrawl = strings.TrimPrefix(err.Error(), crawl.ErrNotCrawlable.Error()+": ")
	}
	if _, kind, ok := s.crawler.Running(src.ID); ok {
		ds.Running = kind
	}
	if li := src.LastImport; li != nil && len(li.Skipped) > 0 {
		reasons := make([]string, 0, len(li.Skipped))
		for why, n := range li.Skipped {
			reasons = append(reasons, why+": "+thousands(n))
		}
		slices.Sort(reasons)
		ds.Skips = strings.Join(reasons, ", ")
	}
	return ds
}

// dashboard serves GET /dashboard: the sources with their actions, the
// upload and settings forms, and the service's state.
func (s *console) dashboard(ctx *fasthttp.RequestCtx) {
	s.showDashboard(ctx, s.takeFlash(ctx))
}

func (s *console) showDashboard(ctx *fasthttp.RequestCtx, f *flash) {
	d := dashboardData{
		consolePage: s.consolePage(ctx, "Dashboard", f),
		Version:     s.opts.Version,
		Uptime:      time.Since(s.stats.started).Round(time.Second),
		Counts:      s.eng.Counts(true),
		Semantic:    s.semantic.Status(),
		Snapshot:    s.eng.LastSnapshot(),
		Log:         s.eng.LogStatus(),
	}
	if x, ok := s.eng.(interface{ Describe() string }); ok {
		d.Elsewhere = x.Describe()
	}
	for _, src := range s.eng.Sources() {
		d.Sources = append(d.Sources, s.dashboardSource(src))
	}
	for _, t := range crawl.Types() {
		d.Types = append(d.Types, typeChoice{t, typeAbout[t]})
	}
	settings := s.eng.Settings()
	d.Settings = settingsView{
		Name: settings[settingSiteName], Description: settings[settingSiteDescription],
		NameInEffect: s.siteName(), DescriptionInEffect: s.siteDescription(),
		Accent: s.siteAccent(), LogoURL: s.siteLogoURL(), DataDir: s.opts.DataDir != "",
	}
	d.Settings.AccentShown = cmp.Or(d.Settings.Accent, shownAccent)
	d.Recent, d.Latency = s.stats.report()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	d.Memory.HeapMB, d.Memory.SysMB = float64(m.HeapAlloc)/(1<<20), float64(m.Sys)/(1<<20)
	d.Memory.GC, d.Memory.Goroutines = m.NumGC, runtime.NumGoroutine()
	d.RateLimit = "off"
	if s.opts.PublicRateLimit > 0 {
		d.RateLimit = fmt.Sprintf("%d requests per minute per client", s.opts.PublicRateLimit)
	}
	d.Model = "extractive answerer (no LLM_BASE_URL)"
	if s.asker.UsesModel() {
		d.Model = "chat model server"
	}
	s.consoleShow(ctx, "dashboard.html", f, d)
}
