package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// BenchmarkSemanticSearchHTTP measures GET /api/semantic-search end to end
// — HTTP on loopback, parsing, BM25 over chunks, query embedding with
// pseudo-relevance feedback, the vector search (IVF at this size), fusion,
// and the JSON answer — over 100k chunks (100k one-passage synthetic
// documents, embedded by the built-in embedder). It reports p50 and p99.
func BenchmarkSemanticSearchHTTP(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := NewSynth(5, vocabSize, channels)
	var sample []record.Message
	batch := make([]record.Document, 0, 1024)
	for i := 0; i < n; i++ {
		m := s.Next()
		m.Content = s.Text(40 + s.rng.IntN(40))
		if i%100 == 0 {
			sample = append(sample, m)
		}
		batch = append(batch, record.Document{Title: fmt.Sprintf("Note %d", i), Content: m.Content})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := e.PutDocuments(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := x.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("semantic index of %d chunks ready in %v", x.Status().Chunks, time.Since(start))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := newServer(b, e, x, "http://"+ln.Addr().String())
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	qs := NewSynth(8, vocabSize, channels)
	urls := make([]string, 500)
	for i := range urls {
		urls[i] = "http://" + ln.Addr().String() + "/api/semantic-search?q=" + url.QueryEscape(qs.Query(sample[qs.rng.IntN(len(sample))]))
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		res, err := client.Get(urls[i%len(urls)])
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(x.Status().Chunks), "chunks")
}
