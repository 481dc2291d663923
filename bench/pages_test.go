package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

// BenchmarkChannelPage renders pages of a 10,000-message channel through
// the server's handler (routing, the engine's read, the template, the
// ETag; no network, no gzip): the first page, the last page, and the page
// found from a message id (?m=). It reports p50 and p99 per kind.
func BenchmarkChannelPage(b *testing.B) {
	e, err := engine.Open(engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.PutSource(record.Source{ID: "chat", Name: "Chat", Type: "discord", Enabled: true}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{{SourceID: "chat", ID: "c", Name: "general"}}); err != nil {
		b.Fatal(err)
	}
	s := NewSynth(3, vocabSize, 1)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	msgs := make([]record.Message, 10_000)
	for i := range msgs {
		m := s.Next()
		msgs[i] = record.Message{SourceID: "chat", ChannelID: "c", ID: fmt.Sprint(i), Author: m.Author, Content: m.Content,
			Timestamp: t0.Add(time.Duration(i) * time.Minute)}
	}
	if _, err := e.PutMessages(msgs); err != nil {
		b.Fatal(err)
	}
	h := newServer(b, e, nil, "http://sift.test").Handler()
	for _, c := range []struct{ name, uri string }{
		{"first", "/c/general"},
		{"last", "/c/general?page=100"},
		{"by-message", "/c/general?m=5555"},
	} {
		b.Run(c.name, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			var ctx fasthttp.RequestCtx
			size := 0
			for i := 0; i < b.N; i++ {
				ctx.Request.Reset()
				ctx.Response.Reset()
				ctx.Request.SetRequestURI(c.uri)
				start := time.Now()
				h(&ctx)
				took = append(took, time.Since(start))
				if ctx.Response.StatusCode() != 200 {
					b.Fatalf("%s: %d", c.uri, ctx.Response.StatusCode())
				}
				size = len(ctx.Response.Body())
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(size)/1024, "page-KB")
		})
	}
}
