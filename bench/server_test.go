package bench

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
)

// newServer is the HTTP server over e that `sift serve` builds: the asker
// (the extractive answerer) and the crawl runner wired in as cmd/sift does.
func newServer(tb testing.TB, e *engine.Engine, baseURL string) *httpapi.Server {
	runner := crawl.NewRunner(e, crawl.RunnerOptions{})
	tb.Cleanup(runner.Close)
	return httpapi.New(e, httpapi.Options{BaseURL: baseURL,
		Asker: ask.New(e, ask.Options{Link: httpapi.HitLinks(baseURL)}), Crawler: runner})
}

// TestNewServer: the benchmarks' server answers, so `make test` finds a
// wiring change that would make every HTTP benchmark fail.
func TestNewServer(t *testing.T) {
	e, err := engine.Open(engine.Options{NoSemantic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h := newServer(t, e, "http://sift.test").Handler()
	for _, uri := range []string{"/api/search?q=x", "/healthz"} {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(uri)
		h(&ctx)
		if ctx.Response.StatusCode() != 200 {
			t.Errorf("%s: %d %s", uri, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}
