package bench

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/semantic"
)

// BenchmarkSearchResponse measures GET /api/search?q=retry+backoff&limit=10
// on the demo content through the server's handler (routing, parameters,
// the engine's search and highlighting, the JSON answer of ten documents
// and ten messages, about 79 KB): the work a request costs past the
// network. SetBytes is the answer's size, so MB/s is JSON produced.
func BenchmarkSearchResponse(b *testing.B) {
	e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{}) // as sift serve runs
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := demo.Load(e, nil); err != nil {
		b.Fatal(err)
	}
	h := newServer(b, e, x, "http://sift.example").Handler()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api/search?q=retry+backoff&limit=10")
	h(&ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	b.SetBytes(int64(len(ctx.Response.Body())))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Response.Reset()
		h(&ctx)
	}
}
