package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// Sizes of the synthetic corpora. -short stops at 100k.
var sizes = []int{10_000, 100_000, 1_000_000}

const (
	vocabSize = 50_000
	channels  = 60
	batchSize = 4096 // messages per PutMessages, as an importer sends them
)

type corpus struct {
	synth *Synth
	chans []record.Channel
	msgs  []record.Message
	bytes int64
}

var (
	corpora   = map[int]*corpus{}
	corporaMu sync.Mutex
)

// synthCorpus returns the n-message corpus (generated once per process).
func synthCorpus(n int) *corpus {
	corporaMu.Lock()
	defer corporaMu.Unlock()
	if c, ok := corpora[n]; ok {
		return c
	}
	s := NewSynth(42, vocabSize, channels)
	c := &corpus{synth: s, chans: s.Channels(), msgs: make([]record.Message, n)}
	for i := range c.msgs {
		c.msgs[i] = s.Next()
		c.bytes += int64(len(c.msgs[i].Content))
	}
	corpora[n] = c
	return c
}

func skipLarge(b *testing.B, n int) {
	if testing.Short() && n > 100_000 {
		b.Skip("-short: skipping the 1M corpus")
	}
}

// load puts a corpus into e, in importer-sized batches.
func load(b testing.TB, e *engine.Engine, source string, chans []record.Channel, msgs []record.Message) {
	if _, err := e.PutSource(record.Source{ID: source, Name: source, Type: "discord", Enabled: true}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.PutChannels(chans); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(msgs); i += batchSize {
		if _, err := e.PutMessages(msgs[i:min(i+batchSize, len(msgs))]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchIndex measures how fast messages are indexed for full-text search,
// on one core (no semantic index follows the engine: see
// BenchmarkIndexSemantic).
func benchIndex(b *testing.B, source string, chans []record.Channel, msgs []record.Message, bytes int64, dataDir bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	b.ReportAllocs()
	b.SetBytes(bytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var opts engine.Options
		if dataDir {
			opts.DataDir = b.TempDir()
		}
		e, err := engine.Open(opts)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.StartTimer()
		load(b, e, source, chans, msgs)
		b.StopTimer()
		e.Close()
	}
	b.ReportMetric(float64(len(msgs)*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkIndex: messages indexed per second on one core, in memory.
func BenchmarkIndex(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := synthCorpus(n)
			benchIndex(b, "synth", c.chans, c.msgs, c.bytes, false)
		})
	}
}

// BenchmarkIndexSemantic: messages per second through the whole pipeline,
// on one core: full-text indexing, then conversation windows, chunk index,
// training of the built-in embedder and vectors, until the semantic index
// has caught up.
func BenchmarkIndexSemantic(b *testing.B) {
	for _, n := range sizes[:2] {
		b.Run(label(n), func(b *testing.B) {
			c := synthCorpus(n)
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				b.StartTimer()
				load(b, e, "synth", c.chans, c.msgs)
				if err := x.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(x.Status().Chunks), "chunks")
				e.Close()
			}
			b.ReportMetric(float64(len(c.msgs)*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkIndexDurable: the same with the write-ahead log on disk, each
// 4096-message batch fsynced before it is acknowledged.
func BenchmarkIndexDurable(b *testing.B) {
	for _, n := range sizes[:2] {
		b.Run(label(n), func(b *testing.B) {
			c := synthCorpus(n)
			benchIndex(b, "synth", c.chans, c.msgs, c.bytes, true)
		})
	}
}

type builtCorpus struct {
	e      *engine.Engine
	x      *semantic.Index  // the semantic index following e
	sample []record.Message // every 50th message, to draw queries from
	bytes  int64
}

var (
	built   = map[int]*builtCorpus{}
	builtMu sync.Mutex
)

// builtEngine returns an in-memory engine holding the n-message corpus,
// generated batch by batch so no copy of the corpus stays in memory (the
// memory benchmark measures the engine alone). It is kept for the
// benchmarks that follow, one size at a time.
func builtEngine(b *testing.B, n int) *builtCorpus {
	builtMu.Lock()
	defer builtMu.Unlock()
	if c, ok := built[n]; ok {
		return c
	}
	for k, c := range built {
		c.e.Close()
		delete(built, k)
	}
	corporaMu.Lock()
	clear(corpora) // the Index benchmarks' copies
	corporaMu.Unlock()
	e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := NewSynth(42, vocabSize, channels)
	c := &builtCorpus{e: e, x: x}
	load(b, e, "synth", s.Channels(), nil)
	batch := make([]record.Message, 0, batchSize)
	for i := 0; i < n; i++ {
		m := s.Next()
		c.bytes += int64(len(m.Content))
		if i%50 == 0 {
			c.sample = append(c.sample, m)
		}
		batch = append(batch, m)
		if len(batch) == batchSize || i == n-1 {
			if _, err := e.PutMessages(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := x.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	built[n] = c
	return c
}

// latencies runs queries b.N times and reports p50, p99 and the mean.
func latencies(b *testing.B, e *engine.Engine, queries []string) { latenciesWith(b, e, queries, false) }

// latenciesWith is latencies with typo tolerance on or off.
func latenciesWith(b *testing.B, e *engine.Engine, queries []string, noTypos bool) {
	lat := make([]time.Duration, 0, b.N)
	hits := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		r, err := e.Search(query.SearchRequest{Query: queries[i%len(queries)], Limit: 20, NoTypos: noTypos})
		lat = append(lat, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		hits += len(r.Messages)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e6, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e6, "p99-ms")
	b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
}

// queriesFor draws n queries from the corpus the way people write them.
func queriesFor(s *Synth, msgs []record.Message, n int) []string {
	q := make([]string, n)
	for i := range q {
		q[i] = s.Query(msgs[s.rng.IntN(len(msgs))])
	}
	return q
}

// BenchmarkQuery: full-text query latency (engine.Search, top 20 with
// highlights) over the synthetic corpora.
func BenchmarkQuery(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := builtEngine(b, n)
			latencies(b, c.e, queriesFor(NewSynth(7, vocabSize, channels), c.sample, 5000))
		})
	}
}

// BenchmarkQueryTypos: BenchmarkQuery's queries, clean and with one-edit
// typos in up to two words (Typo, seed 23), with typo tolerance on (the
// default) and off.
func BenchmarkQueryTypos(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := builtEngine(b, n)
			clean := queriesFor(NewSynth(7, vocabSize, channels), c.sample, 5000)
			typoed := make([]string, len(clean))
			for i, q := range clean {
				typoed[i] = Typo(strconv.Itoa(i), q, 23)
			}
			for _, run := range []struct {
				name    string
				queries []string
				off     bool
			}{{"clean/on", clean, false}, {"clean/off", clean, true}, {"typos/on", typoed, false}, {"typos/off", typoed, true}} {
				b.Run(run.name, func(b *testing.B) { latenciesWith(b, c.e, run.queries, run.off) })
			}
		})
	}
}

// BenchmarkQueryPrivate: BenchmarkQuery's queries from a caller without
// credentials while a quarter of the channels are private, so every query
// leaves their messages out (the same queries over an all-public corpus
// are BenchmarkQuery: the hidden set is skipped when empty).
func BenchmarkQueryPrivate(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := builtEngine(b, n)
			setPrivate := func(vis string) {
				for i := 0; i < channels; i += 4 {
					if _, err := c.e.SetChannelVisibility("synth", fmt.Sprint("c", i), vis); err != nil {
						b.Fatal(err)
					}
				}
			}
			setPrivate(record.VisibilityPrivate)
			defer setPrivate(record.VisibilityInherit) // the corpus is shared with other benchmarks
			latencies(b, c.e, queriesFor(NewSynth(7, vocabSize, channels), c.sample, 5000))
		})
	}
}

// BenchmarkQueryStopWords: the worst case, queries of function words only
// ("the", "it to the", "\"to the\""), whose terms occur in most messages.
func BenchmarkQueryStopWords(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := builtEngine(b, n)
			s := NewSynth(11, vocabSize, channels)
			q := make([]string, 500)
			for i := range q {
				q[i] = s.StopQuery()
			}
			latencies(b, c.e, q)
		})
	}
}

// BenchmarkMemoryFullText reports the heap and resident memory of an
// engine holding each corpus for full-text search alone (no semantic
// index), as BenchmarkIndex builds it, against the corpus's raw text, and
// the memory by structure (Engine.Footprint). The 10M corpus runs only
// with SIFT_BENCH_10M=1 (minutes, about 4 GB). Run it on its own; with
// SIFT_HEAP_PROFILE=prefix it writes the live heap by allocation site.
func BenchmarkMemoryFullText(b *testing.B) {
	ns := sizes
	if os.Getenv("SIFT_BENCH_10M") == "1" {
		ns = append(slices.Clone(sizes), 10_000_000)
	}
	for _, n := range ns {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			e, _, text, _ := fullTextEngine(b, n) // the sample is dropped before the GC below
			defer e.Close()
			for i := 0; i < b.N; i++ {
				runtime.GC()
			}
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(text)/1e6, "text-MB")
			b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
			b.ReportMetric(float64(rssBytes())/1e6, "rss-MB")
			b.ReportMetric(float64(rssBytes())/float64(text), "rss/text")
			b.ReportMetric(float64(ms.HeapInuse)/float64(n), "heap-B/msg")
			b.ReportMetric(float64(ms.HeapAlloc)/float64(n), "live-B/msg")
			reportFootprint(b, e.Footprint(), n)
			writeHeapProfile(b, label(n)) // the engine still open
		})
	}
}

// writeHeapProfile writes the live heap by allocation site to
// $SIFT_HEAP_PROFILE-name.prof when that variable is set.
func writeHeapProfile(b *testing.B, name string) {
	prefix := os.Getenv("SIFT_HEAP_PROFILE")
	if prefix == "" {
		return
	}
	f, err := os.Create(prefix + "-" + name + ".prof")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// reportFootprint reports the engine's memory by structure, in bytes per
// message.
func reportFootprint(b *testing.B, f engine.Footprint, n int) {
	per := func(v int64) float64 { return float64(v) / float64(n) }
	ix := f.Messages
	b.ReportMetric(per(f.Text), "text-B/msg")
	b.ReportMetric(per(f.Records), "records-B/msg")
	b.ReportMetric(per(f.Order), "order-B/msg")
	b.ReportMetric(per(ix.IDs), "ids-B/msg")
	b.ReportMetric(per(ix.Blocks), "blocks-B/msg")
	b.ReportMetric(per(ix.Positions), "positions-B/msg")
	b.ReportMetric(per(ix.Dictionary), "dictionary-B/msg")
	b.ReportMetric(per(ix.Documents), "docs-B/msg")
}

// BenchmarkMemory reports the heap and resident memory of an engine holding
// each corpus with its semantic index (windows, chunk index, embedder
// model, vectors), beside the corpus's raw text size, and both layers'
// memory by structure (the vectors as held: floats below 20,000 chunks,
// int8 codes above).
// Run it on its own (-bench Memory) for a resident size not inflated by
// earlier benchmarks.
func BenchmarkMemory(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := builtEngine(b, n)
			for i := 0; i < b.N; i++ {
				runtime.GC()
			}
			debug.FreeOSMemory()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(c.bytes)/1e6, "text-MB")
			b.ReportMetric(float64(ms.HeapInuse)/1e6, "heap-MB")
			b.ReportMetric(float64(rssBytes())/1e6, "rss-MB")
			b.ReportMetric(float64(ms.HeapInuse)/float64(c.bytes), "heap/text")
			sf := c.x.Footprint()
			vecBytes := float64(sf.Vectors)
			b.ReportMetric(vecBytes/1e6, "vectors-MB")
			b.ReportMetric(float64(ms.HeapInuse)/(float64(c.bytes)+vecBytes), "heap/(text+vectors)")
			reportFootprint(b, c.e.Footprint(), n)
			perMsg := func(v int64) float64 { return float64(v) / float64(n) }
			b.ReportMetric(perMsg(sf.Chunks), "chunks-B/msg")
			b.ReportMetric(perMsg(sf.ChunkIndex.Total()), "chunk-index-B/msg")
			b.ReportMetric(perMsg(sf.ChunkIndex.Dictionary), "chunk-dict-B/msg")
			b.ReportMetric(perMsg(sf.ChunkIndex.IDs), "chunk-ids-B/msg")
			b.ReportMetric(perMsg(sf.ChunkIndex.Blocks), "chunk-blocks-B/msg")
			b.ReportMetric(perMsg(sf.ChunkIndex.Positions), "chunk-pos-B/msg")
			b.ReportMetric(perMsg(sf.ChunkIndex.Documents), "chunk-docs-B/msg")
			b.ReportMetric(float64(sf.Model)/1e6, "model-MB")
			writeHeapProfile(b, "semantic-"+label(n))
		})
	}
}

// rssBytes reads the resident set size from /proc (0 elsewhere).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkSnapshot writes a snapshot of each corpus, with its semantic
// index (chunks, model, vectors), and loads it back.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range sizes {
		b.Run(label(n), func(b *testing.B) {
			skipLarge(b, n)
			c := synthCorpus(n)
			var write, read time.Duration
			var size int64
			var chunks int
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				e, x, err := semantic.Open(engine.Options{DataDir: dir, NoSync: true}.OpenWith, semantic.Options{})
				if err != nil {
					b.Fatal(err)
				}
				load(b, e, "synth", c.chans, c.msgs)
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				err = x.Wait(ctx) // the snapshot holds chunks and vectors too
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				chunks = x.Status().Chunks
				t := time.Now()
				if err := e.Snapshot(); err != nil {
					b.Fatal(err)
				}
				write += time.Since(t)
				size = e.LastSnapshot().Bytes
				e.Close()
				t = time.Now()
				e, _, err = semantic.Open(engine.Options{DataDir: dir, NoSync: true}.OpenWith, semantic.Options{})
				if err != nil {
					b.Fatal(err)
				}
				read += time.Since(t)
				if got := e.Counts(true).Messages; got != n {
					b.Fatalf("loaded %d messages, want %d", got, n)
				}
				e.Close()
			}
			b.ReportMetric(write.Seconds()/float64(b.N), "write-s")
			b.ReportMetric(read.Seconds()/float64(b.N), "load-s")
			b.ReportMetric(float64(size)/1e6, "file-MB")
			b.ReportMetric(float64(chunks), "chunks")
		})
	}
}

var (
	monero     []record.Message
	moneroCh   []record.Channel
	moneroOnce sync.Once
	moneroErr  error
)

func moneroCorpus(b *testing.B) ([]record.Channel, []record.Message) {
	moneroOnce.Do(func() { moneroCh, monero, moneroErr = MoneroMessages() })
	if moneroErr != nil {
		b.Skipf("../shared/datasets/chat/monero not available (%v): skipping the real-chat benchmarks", moneroErr)
	}
	return moneroCh, monero
}

// BenchmarkMonero: indexing and query latency over the 52,518 real chat
// messages of the Monero project's meetings.
func BenchmarkMonero(b *testing.B) {
	b.Run("index", func(b *testing.B) {
		chans, msgs := moneroCorpus(b)
		var bytes int64
		for _, m := range msgs {
			bytes += int64(len(m.Content))
		}
		benchIndex(b, "monero", chans, msgs, bytes, false)
	})
	b.Run("query", func(b *testing.B) {
		chans, msgs := moneroCorpus(b)
		e, _, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		load(b, e, "monero", chans, msgs)
		latencies(b, e, queriesFor(NewSynth(9, 1000, 2), msgs, 5000))
	})
}

func label(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}
