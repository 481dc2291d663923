package httpapi

import (
	"fmt"
	"runtime"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/engine"
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
		writeError(ctx, fasthttp.StatusUnauthorized, "the dashboard needs Basic Auth (ADMIN_USER and ADMIN_PASSWORD); a Bearer token does not open it")
	}
}

type dashboardData struct {
	Head     head
	Version  string
	Uptime   time.Duration
	Counts   engine.Counts
	Sources  []dashboardSource
	Semantic engine.SemanticStatus
	Snapshot *engine.SnapshotInfo
	Log      engine.LogStatus
	Recent   []queryRecord
	Latency  []latencyRow
	Memory   struct {
		HeapMB, SysMB float64
		GC            uint32
		Goroutines    int
	}
	RateLimit string
	Model     string
}

type dashboardSource struct {
	engine.Source
	Stats   engine.SourceStats
	Running string // kind of the job running for it, if any
}

// dashboard serves GET /dashboard.
func (s *Server) dashboard(ctx *fasthttp.RequestCtx) {
	d := dashboardData{
		Head:     head{Title: s.title("Dashboard"), NoIndex: true},
		Version:  s.opts.Version,
		Uptime:   time.Since(s.stats.started).Round(time.Second),
		Counts:   s.eng.Counts(true),
		Semantic: s.eng.SemanticStatus(),
		Snapshot: s.eng.LastSnapshot(),
		Log:      s.eng.LogStatus(),
	}
	for _, src := range s.eng.Sources() {
		ds := dashboardSource{Source: src, Stats: s.eng.SourceStats(src.ID, true)}
		if _, kind, ok := s.crawler.Running(src.ID); ok {
			ds.Running = kind
		}
		d.Sources = append(d.Sources, ds)
	}
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
	if s.opts.Ask.Model != nil {
		d.Model = "chat model server"
	}
	s.render(ctx, "dashboard.html", pageOpts{private: true}, d)
}
