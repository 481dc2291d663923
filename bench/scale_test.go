package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// scaleSizes are BenchmarkScale's corpora: 1M, and 10M with SIFT_BENCH_10M=1
// (about 5 minutes to generate and index, and 2–4 GB).
func scaleSizes() []int {
	if os.Getenv("SIFT_BENCH_10M") == "1" {
		return []int{1_000_000, 10_000_000}
	}
	return []int{1_000_000}
}

// scaleQueries is how many queries BenchmarkScale draws (as BenchmarkQuery
// draws them) and scaleK the hits each asks for.
const (
	scaleQueries = 2000
	scaleK       = 10
)

// fullTextEngine indexes the n-message synthetic corpus into a new
// in-memory engine for full-text search alone, generating it batch by
// batch, and returns it with every 50th message, the text's size and the
// time PutMessages took.
func fullTextEngine(tb testing.TB, n int) (e *engine.Engine, sample []record.Message, text int64, took time.Duration) {
	return fullTextEngineWith(tb, n, engine.Options{})
}

// fullTextEngineWith is fullTextEngine with the engine's options (a data
// dir, say).
func fullTextEngineWith(tb testing.TB, n int, opts engine.Options) (e *engine.Engine, sample []record.Message, text int64, took time.Duration) {
	e, err := engine.Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	s := NewSynth(42, vocabSize, channels)
	load(tb, e, "synth", s.Channels(), nil)
	batch := make([]record.Message, 0, batchSize)
	for i := 0; i < n; i++ {
		m := s.Next()
		text += int64(len(m.Content))
		if i%50 == 0 {
			sample = append(sample, m)
		}
		if batch = append(batch, m); len(batch) == batchSize || i == n-1 {
			t := time.Now()
			if _, err := e.PutMessages(batch); err != nil {
				tb.Fatal(err)
			}
			took += time.Since(t)
			batch = batch[:0]
		}
	}
	return e, sample, text, took
}

// BenchmarkScale: how the engine grows with the corpus. For each size, one
// full-text engine (as BenchmarkMemoryFullText builds it) and 2,000 queries
// drawn as BenchmarkQuery draws them, top 10: latency one query at a time
// (p50, p99, after one warm-up pass), throughput with one and with
// GOMAXPROCS workers, resident memory against the raw text, and the
// indexing rate (all cores). Before timing, every query is run once
// exhaustively (no pruning) and must give the same hits and totals: the
// benchmark fails otherwise.
//
//	SIFT_BENCH_10M=1 go test ./bench -run '^$' -bench 'BenchmarkScale' -benchtime 1x -timeout 90m
func BenchmarkScale(b *testing.B) {
	for _, n := range scaleSizes() {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			builtMu.Lock() // no other benchmark's engine stays beside this one
			for k, c := range built {
				c.e.Close()
				delete(built, k)
			}
			builtMu.Unlock()
			runtime.GC()
			e, sample, text, took := fullTextEngine(b, n)
			defer e.Close()
			runtime.GC()
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			rss := rssBytes()

			queries := queriesFor(NewSynth(7, vocabSize, channels), sample, scaleQueries)
			reqs := make([]query.SearchRequest, len(queries))
			for i, q := range queries {
				reqs[i] = query.SearchRequest{Query: q, Limit: scaleK}
			}
			if err := sameAsExhaustive(e, reqs); err != nil {
				b.Fatal(err)
			}
			// The exhaustive runs leave garbage (dense arrays the size of
			// the corpus): collect it, then warm up, so the timed runs pay
			// for neither.
			runtime.GC()
			latencyRun(b, e, reqs)
			b.ResetTimer()
			var lat []time.Duration
			var qps1, qpsN float64
			for i := 0; i < b.N; i++ {
				lat = latencyRun(b, e, reqs)
				qps1 = throughput(b, e, reqs, 1)
				qpsN = throughput(b, e, reqs, runtime.GOMAXPROCS(0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e6, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e6, "p99-ms")
			b.ReportMetric(qps1, "qps-1")
			b.ReportMetric(qpsN, fmt.Sprintf("qps-%d", runtime.GOMAXPROCS(0)))
			b.ReportMetric(float64(text)/1e6, "text-MB")
			b.ReportMetric(float64(rss)/1e6, "rss-MB")
			b.ReportMetric(float64(rss)/float64(text), "rss/text")
			b.ReportMetric(float64(ms.HeapInuse)/float64(n), "heap-B/msg")
			b.ReportMetric(float64(n)/took.Seconds(), "index-msg/s")
		})
	}
}

// sameAsExhaustive runs every request pruned and exhaustively and returns
// the first difference in hits, scores or totals.
func sameAsExhaustive(e *engine.Engine, reqs []query.SearchRequest) error {
	for _, req := range reqs {
		got, err := e.Search(req)
		if err != nil {
			return err
		}
		req.Exhaustive = true
		want, err := e.Search(req)
		if err != nil {
			return err
		}
		if got.TotalMessages != want.TotalMessages || got.TotalDocuments != want.TotalDocuments {
			return fmt.Errorf("%q: totals %d/%d, exhaustive %d/%d", req.Query, got.TotalMessages, got.TotalDocuments, want.TotalMessages, want.TotalDocuments)
		}
		if len(got.Messages) != len(want.Messages) {
			return fmt.Errorf("%q: %d hits, exhaustive %d", req.Query, len(got.Messages), len(want.Messages))
		}
		for i := range got.Messages {
			g, w := got.Messages[i], want.Messages[i]
			if g.ID != w.ID || g.Score != w.Score {
				return fmt.Errorf("%q: hit %d is %s (%v), exhaustive %s (%v)", req.Query, i, g.ID, g.Score, w.ID, w.Score)
			}
		}
	}
	return nil
}

// latencyRun runs each request once, one at a time, and returns the
// latencies.
func latencyRun(b *testing.B, e *engine.Engine, reqs []query.SearchRequest) []time.Duration {
	lat := make([]time.Duration, 0, len(reqs))
	for _, req := range reqs {
		t := time.Now()
		if _, err := e.Search(req); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	return lat
}

// throughput runs the requests over workers goroutines and returns the
// queries per second.
func throughput(b *testing.B, e *engine.Engine, reqs []query.SearchRequest, workers int) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	t := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(reqs)); i = next.Add(1) - 1 {
				if _, err := e.Search(reqs[i]); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return float64(len(reqs)) / time.Since(t).Seconds()
}

// TestScaleQueriesExact runs BenchmarkScale's check on a 300k corpus (100k
// with -short; BenchmarkScale itself checks 1M and 10M): every benchmark
// query gives the same hits, scores and totals pruned and exhaustively,
// public and private, on later pages too.
func TestScaleQueriesExact(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 100_000
	}
	e, sample, _, _ := fullTextEngine(t, n)
	defer e.Close()
	queries := queriesFor(NewSynth(7, vocabSize, channels), sample, scaleQueries)
	var reqs []query.SearchRequest
	for i, q := range queries {
		req := query.SearchRequest{Query: q, Limit: scaleK, Private: i%2 == 0}
		if i%7 == 0 {
			req.Limit, req.Offset = 20, 40
		}
		reqs = append(reqs, req)
	}
	if err := sameAsExhaustive(e, reqs); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSnapshotFullText: the time to write a snapshot of a full-text
// engine built as BenchmarkScale builds it (the write-ahead log on disk,
// not synced), its size, and the time to open the data dir again from it.
//
//	SIFT_BENCH_10M=1 go test ./bench -run '^$' -bench 'BenchmarkSnapshotFullText' -benchtime 1x -timeout 90m
func BenchmarkSnapshotFullText(b *testing.B) {
	for _, n := range scaleSizes() {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			dir := b.TempDir()
			e, _, text, _ := fullTextEngineWith(b, n, engine.Options{DataDir: dir, NoSync: true})
			var write, load time.Duration
			var size int64
			for i := 0; i < b.N; i++ {
				t := time.Now()
				if err := e.Snapshot(); err != nil {
					b.Fatal(err)
				}
				write += time.Since(t)
				size = e.LastSnapshot().Bytes
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				t = time.Now()
				var err error
				if e, err = engine.Open(engine.Options{DataDir: dir, NoSync: true}); err != nil {
					b.Fatal(err)
				}
				load += time.Since(t)
				if got := e.Counts(true).Messages; got != n {
					b.Fatalf("loaded %d messages, want %d", got, n)
				}
			}
			e.Close()
			b.ReportMetric(write.Seconds()/float64(b.N), "write-s")
			b.ReportMetric(load.Seconds()/float64(b.N), "load-s")
			b.ReportMetric(float64(size)/1e6, "file-MB")
			b.ReportMetric(float64(size)/float64(text), "file/text")
		})
	}
}
