package httpapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/semantic"
)

// BenchmarkInsights measures GET /api/search through a real listening
// server, with insights recorded (on: flushed every second into the
// engine on a data dir, fsync included) and not (off): parallel fasthttp
// clients over loopback, the demo content, a fixed-seed mix of 20,000
// distinct queries (two or three words of the demo's vocabulary, some
// with a number, so some find nothing), so the recorder's map keeps
// growing. req/s is the figure to compare; client and server share the
// machine's cores.
func BenchmarkInsights(b *testing.B) {
	words := []string{"webhook", "signature", "retry", "backoff", "cron", "schedule", "dst", "timezone", "postgres",
		"queue", "worker", "deploy", "helm", "docker", "timeout", "job", "twice", "install", "upgrade", "token",
		"nginx", "redis", "metrics", "logs", "lock", "lease", "pool", "fiber", "sqlite", "backup"}
	rng := rand.New(rand.NewPCG(1, 2))
	queries := make([]string, 20_000)
	for i := range queries {
		q := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
		switch rng.IntN(3) {
		case 1:
			q += " " + words[rng.IntN(len(words))]
		case 2:
			q += fmt.Sprint(" ", rng.IntN(1000))
		}
		queries[i] = "/api/search?limit=5&q=" + url.QueryEscape(q)
	}
	for _, mode := range []string{"on", "off"} {
		b.Run(mode, func(b *testing.B) {
			eng, idx, err := semantic.Open(engine.Options{DataDir: b.TempDir()}.OpenWith, semantic.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := demo.Load(eng, nil); err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := idx.Wait(ctx); err != nil { // no indexing beside the benchmark
				b.Fatal(err)
			}
			opts := Options{APISecretKey: testKey}
			var rec *insights.Recorder
			if mode == "on" {
				if rec, err = insights.Open(insights.Options{Store: eng, FlushEvery: time.Second}); err != nil {
					b.Fatal(err)
				}
				opts.Insights = rec
			}
			ts := serveAsking(b, eng, idx, opts, ask.Options{})
			if rec != nil {
				b.Cleanup(func() { rec.Close() })
			}
			client := &fasthttp.Client{MaxConnsPerHost: 256, ReadTimeout: 10 * time.Second}
			b.SetParallelism(4)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(res)
				i := rand.IntN(len(queries))
				for pb.Next() {
					req.SetRequestURI(ts.url + queries[i%len(queries)])
					i++
					if err := client.Do(req, res); err != nil || res.StatusCode() != 200 {
						b.Errorf("%s: %v %d", queries[i%len(queries)], err, res.StatusCode())
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			if rec != nil {
				b.ReportMetric(float64(rec.Dropped()), "dropped")
			}
		})
	}
}
