package bench

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/semantic"
)

// newServer is the HTTP server over e and x, the semantic index following
// it, that `sift serve` builds: the semantic index, the asker (the
// extractive answerer) and the crawl runner wired in as cmd/sift does. A
// nil x is an engine without a semantic index: the server gets an empty
// index that follows nothing, so searching by meaning fails.
func newServer(tb testing.TB, e *engine.Engine, x *semantic.Index, baseURL string) *httpapi.Server {
	if x == nil {
		x = semantic.New(semantic.Options{})
	}
	runner := crawl.NewRunner(e, crawl.RunnerOptions{})
	tb.Cleanup(runner.Close)
	return httpapi.New(e, httpapi.Options{BaseURL: baseURL, Semantic: x,
		Asker: ask.New(x, ask.Options{Link: httpapi.HitLinks(baseURL)}), Crawler: runner})
}

// TestNewServer: the benchmarks' server answers, so `make test` finds a
// wiring change that would make every HTTP benchmark fail.
func TestNewServer(t *testing.T) {
	e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := newServer(t, e, x, "http://sift.test").Handler()
	for _, uri := range []string{"/api/search?q=x", "/healthz"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		h(&ctx)
		if ctx.Response.StatusCode() != 200 {
			t.Errorf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
