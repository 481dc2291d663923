package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/internal/oai"
	"github.com/sift-search/sift/llm"
	"github.com/sift-search/sift/semantic"
)

// families is a parsed scrape.
type families map[string]*dto.MetricFamily

// scrape reads GET /metrics and parses it with the Prometheus text parser.
func (ts *testServer) scrape(t testing.TB, header ...string) families {
	t.Helper()
	r := ts.get(t, "/metrics", header...)
	if r.status != 200 {
		t.Fatalf("GET /metrics: %d %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, r.body)
	}
	return fams
}

// value sums the samples of a family whose labels include these name,
// value pairs (a histogram's samples: their counts); ok is false when none
// matches.
func (f families) value(name string, labels ...string) (sum float64, ok bool) {
	mf := f[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		ok = true
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			sum += float64(m.GetHistogram().GetSampleCount())
		default:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, ok
}

// want checks a sample's value.
func (f families) want(t testing.TB, want float64, name string, labels ...string) {
	t.Helper()
	if got, ok := f.value(name, labels...); !ok || got != want {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
	}
}

// wantSome checks a sample exists with a value of at least min.
func (f families) wantSome(t testing.TB, min float64, name string, labels ...string) {
	t.Helper()
	if got, ok := f.value(name, labels...); !ok || got < min {
		t.Errorf("%s%v = %v (present %v), want at least %v", name, labels, got, ok, min)
	}
}

func TestMetrics(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 2 })
	seedChat(t, ts.eng)

	// Admin access by default.
	wantError(t, ts.get(t, "/metrics"), 401)
	wantError(t, ts.get(t, "/metrics", "Authorization", "Bearer wrong"), 401)
	if r := ts.get(t, "/metrics", "Authorization", "Basic "+basic(testUser, testPass)); r.status != 200 {
		t.Fatalf("with Basic Auth: %d", r.status)
	}

	for i := 0; i < 2; i++ {
		if r := ts.get(t, "/api/search?q=webhook"); r.status != 200 {
			t.Fatalf("search: %d %s", r.status, r.body)
		}
	}
	wantError(t, ts.get(t, "/api/search?q=webhook"), 429)
	wantError(t, ts.get(t, "/no/such/page"), 404)
	if r := ts.get(t, "/c/help"); r.status != 200 {
		t.Fatalf("/c/help: %d", r.status)
	}
	if r := ts.get(t, "/c/no-such-channel"); r.status != 404 {
		t.Fatalf("/c/no-such-channel: %d", r.status)
	}
	wantError(t, ts.do(t, "PUT", "/api/search", nil), 405)
	wantError(t, ts.do(t, "BREW", "/api/search", nil), 405)

	m := ts.scrape(t, bearer...)
	// Requests by route pattern, never the raw path.
	m.want(t, 2, "sift_http_requests_total", "route", "/api/search", "method", "GET", "code", "200")
	m.want(t, 1, "sift_http_requests_total", "route", "/api/search", "method", "GET", "code", "429")
	m.want(t, 1, "sift_http_requests_total", "route", "/c/{slug}", "code", "200")
	m.want(t, 1, "sift_http_requests_total", "route", "/c/{slug}", "code", "404")
	m.want(t, 1, "sift_http_requests_total", "route", "none", "method", "GET", "code", "404")
	m.want(t, 1, "sift_http_requests_total", "route", "none", "method", "PUT", "code", "405")
	m.want(t, 1, "sift_http_requests_total", "route", "none", "method", "other", "code", "405")
	m.want(t, 2, "sift_http_requests_total", "route", "/metrics", "code", "401")
	m.want(t, 1, "sift_http_requests_total", "route", "/metrics", "code", "200")
	m.want(t, 2, "sift_http_request_duration_seconds", "route", "/api/search", "method", "GET", "class", "2xx")
	m.want(t, 1, "sift_http_request_duration_seconds", "route", "/api/search", "class", "4xx")
	for _, mt := range m["sift_http_requests_total"].GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == "route" && (strings.Contains(lp.GetValue(), "help") || strings.Contains(lp.GetValue(), "such")) {
				t.Errorf("a raw path as route label: %v", mt)
			}
		}
	}
	m.want(t, 1, "sift_rate_limited_requests_total")
	m.want(t, 0, "sift_ask_refused_total")
	// Sizes, read when scraped.
	m.want(t, float64(ts.eng.Counts(true).Sources), "sift_sources")
	m.want(t, 1, "sift_channels")
	m.want(t, 0, "sift_threads")
	m.want(t, 2, "sift_messages")
	m.want(t, 0, "sift_documents")
	m.wantSome(t, 1, "sift_index_terms", "index", "messages")
	m.wantSome(t, 1, "sift_semantic_chunks")
	m.wantSome(t, 0, "sift_semantic_vectors")
	m.wantSome(t, 0, "sift_semantic_pending_chunks")
	m.wantSome(t, 1, "sift_wal_sequence")
	m.want(t, 0, "sift_snapshot_last_attempt_failed")
	if _, ok := m.value("sift_wal_segments"); ok {
		t.Error("an in-memory engine reports log segments")
	}
	m.want(t, 1, "sift_build_info", "version", "dev")
	// The Go runtime and the process.
	m.wantSome(t, 1, "go_goroutines")
	m.wantSome(t, 1, "process_start_time_seconds")

	// Counts move between scrapes.
	ts.get(t, "/healthz")
	m = ts.scrape(t, bearer...)
	m.want(t, 1, "sift_http_requests_total", "route", "/healthz", "method", "GET", "code", "200")
	m.want(t, 2, "sift_http_requests_total", "route", "/metrics", "method", "GET", "code", "200") // with Basic Auth, the first scrape
	m.want(t, 1, "sift_rate_limited_requests_total")
}

func TestMetricsAccess(t *testing.T) {
	ts := start(t, func(o *Options) { o.MetricsAccess = "public" })
	m := ts.scrape(t) // anonymous
	m.wantSome(t, 0, "sift_messages")
	if r := ts.get(t, "/metrics", bearer...); r.status != 200 {
		t.Fatalf("public metrics with the key: %d", r.status)
	}

	// With no credentials configured, admin access is closed to everyone.
	closed := start(t, func(o *Options) { *o = Options{} })
	wantError(t, closed.get(t, "/metrics"), 403)
	wantError(t, closed.get(t, "/metrics", bearer...), 403)
}

// TestMetricsLogAndSnapshot reads the log's and the snapshot's figures of
// an engine with a data dir.
func TestMetricsLogAndSnapshot(t *testing.T) {
	eng, idx, err := semantic.Open(engine.Options{DataDir: t.TempDir()}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey})
	seedChat(t, eng)
	m := ts.scrape(t, bearer...)
	m.wantSome(t, 1, "sift_wal_segments")
	m.wantSome(t, 1, "sift_wal_size_bytes")
	if _, ok := m.value("sift_snapshot_size_bytes"); ok {
		t.Error("a snapshot before the first")
	}
	if err := eng.Snapshot(); err != nil {
		t.Fatal(err)
	}
	m = ts.scrape(t, bearer...)
	seq, _ := m.value("sift_wal_sequence")
	m.want(t, seq, "sift_snapshot_sequence")
	m.wantSome(t, 1, "sift_snapshot_size_bytes")
	m.wantSome(t, 0, "sift_snapshot_duration_seconds")
	if at, _ := m.value("sift_snapshot_timestamp_seconds"); time.Since(time.Unix(int64(at), 0)) > time.Minute {
		t.Errorf("snapshot timestamp %v", at)
	}
	m.want(t, 0, "sift_snapshot_last_attempt_failed")
}

// TestMetricsCrawlsAndImports counts a crawl, a crawl its connector
// refuses, and imports, per source.
func TestMetricsCrawlsAndImports(t *testing.T) {
	site := newSiteServer(t)
	ts := start(t)
	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"docs","name":"Docs","type":"web","config":{"urls":["`+site.URL+`/"],"allowPrivate":true,"delayMs":1}}`), adminJSON...)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/sources/docs/crawl", nil, bearer...); r.status != 200 || r.json(t)["documents"] != 2.0 {
		t.Fatalf("crawl: %d %s", r.status, r.body)
	}
	ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"chat","name":"Chat","type":"discord","config":{"guildId":"1102345678901234567"}}`), adminJSON...)
	if r := ts.do(t, "POST", "/api/sources/chat/crawl", nil, bearer...); r.status != 400 {
		t.Fatalf("crawl without a token: %d %s", r.status, r.body)
	}
	export, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	imp := ts.do(t, "POST", "/api/sources/chat/import", bytes.NewReader(export), bearer...)
	if imp.status != 200 {
		t.Fatalf("import: %d %s", imp.status, imp.body)
	}
	changed := imp.json(t)["changed"].(float64)
	wantError(t, ts.do(t, "POST", "/api/sources/chat/import", strings.NewReader(`{"guild":{"id":"1"},"channel":{"id":"2","name":"x"},"messages":[{"id":"3","type":"Default","timestamp":"yesterday","content":"hi"}]}`), bearer...), 400)

	m := ts.scrape(t, bearer...)
	m.want(t, 1, "sift_crawls_total", "source", "docs", "status", "ok")
	m.want(t, 2, "sift_crawl_documents_total", "source", "docs")
	m.want(t, 0, "sift_crawl_messages_total", "source", "docs")
	m.want(t, 0, "sift_crawl_failed_items_total", "source", "docs")
	m.want(t, 1, "sift_crawls_total", "source", "chat", "status", "error")
	m.want(t, 1, "sift_imports_total", "source", "chat", "status", "ok")
	m.want(t, 1, "sift_imports_total", "source", "chat", "status", "error")
	m.want(t, changed, "sift_import_messages_total", "source", "chat")
	m.want(t, float64(ts.eng.Counts(true).Sources), "sift_sources")
	m.wantSome(t, changed, "sift_messages")
	m.wantSome(t, 2, "sift_documents")
}

// TestMetricsModelCalls counts the calls of a chat model by outcome, and
// the questions refused while the model is busy.
func TestMetricsModelCalls(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("cron", "Use five fields [1].")
	metrics := NewMetrics()
	ts := startAsk(t, srv, func(o *Options, a *ask.Options) {
		o.Metrics = metrics
		a.Model.(*llm.Client).Transport().Observe = metrics.ObserveModelCall
		a.MaxConcurrent, a.MaxQueued = 1, 1
	})
	ts.askJSON(t, "/api/ask", "cron syntax")
	srv.Fail(500, 500, 500, 500)
	if r := ts.do(t, "POST", "/api/ask", askBody("cron syntax"), jsonCT...); r.status != 502 {
		t.Fatalf("failing model: %d %s", r.status, r.body)
	}
	// Two places taken, the third question is refused.
	var releases []func()
	for i := 0; i < 2; i++ {
		release, err := ts.srv.asker.Admit()
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	wantError(t, ts.do(t, "POST", "/api/ask", askBody("cron syntax"), jsonCT...), 503)
	for _, release := range releases {
		release()
	}

	m := ts.scrape(t, bearer...)
	m.want(t, 1, "sift_model_calls_total", "kind", "chat", "outcome", "ok")
	m.want(t, 1, "sift_model_calls_total", "kind", "chat", "outcome", "5xx")
	m.want(t, 2, "sift_model_call_duration_seconds", "kind", "chat")
	m.want(t, 1, "sift_ask_refused_total")
	m.want(t, 1, "sift_http_requests_total", "route", "/api/ask", "code", "503")
	m.wantSome(t, 1, "sift_semantic_vectors")
	m.want(t, 0, "sift_semantic_pending_chunks")
}

func TestModelOutcome(t *testing.T) {
	timeout := &net.OpError{Op: "dial", Err: timeoutErr{}}
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&oai.APIError{Status: 429}, "4xx"},
		{fmt.Errorf("chat: %w", &oai.APIError{Status: 503}), "5xx"},
		{fmt.Errorf("model server: %w", &url.Error{Op: "Post", Err: timeout}), "timeout"},
		{fmt.Errorf("x: %w", errors.Join(errors.New("y"), context.Canceled)), "canceled"},
		{errors.New("connection refused"), "error"},
	} {
		if got := modelOutcome(c.err); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
