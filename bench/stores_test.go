package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/transfer"
	"github.com/sift-search/sift/wvstore"
)

// The stores compared by BenchmarkStores (issue 15): the memory store as
// `sift serve` runs it (a data dir, its semantic index following), and the
// Weaviate store (wvstore) on a 1-node and on a 3-node cluster at
// replication 3, the cluster started by the benchmark on loopback.
var storeKinds = []struct {
	name  string
	nodes int // 0: the memory store
}{{"memory", 0}, {"weaviate-1", 1}, {"weaviate-3", 3}}

const (
	storeWarmup  = 200  // queries before the measured ones
	storeQueries = 2000 // measured queries
)

// serverStore is what a server runs on, either store (cmd/sift's backend).
type serverStore interface {
	httpapi.Store
	crawl.Sink
}

// clusterStore is the cluster store with the backup cmd/sift gives it: a
// copy into a memory store, whose snapshot is the backup.
type clusterStore struct{ *wvstore.Store }

func (c clusterStore) Backup(w io.Writer) (uint64, error) {
	mem, err := engine.Open(engine.Options{})
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	if err := transfer.Copy(mem, c.Store); err != nil {
		return 0, err
	}
	return mem.Backup(w)
}

// storeBenchKey is the API key of newStoreServer's servers: the semantic
// search and the answers are measured with it (no public tier's limit);
// the full-text searches are a caller's without credentials.
const storeBenchKey = "bench-key"

// serverSemantic is a semantic layer the server and the asker use.
type serverSemantic interface {
	httpapi.Semantic
	ask.Retriever
}

// newStoreServer is newServer on either store: the server `sift serve`
// builds, with the semantic layer, the extractive asker and the crawl
// runner.
func newStoreServer(tb testing.TB, st serverStore, sem serverSemantic, baseURL string) *httpapi.Server {
	runner := crawl.NewRunner(st, crawl.RunnerOptions{})
	tb.Cleanup(runner.Close)
	return httpapi.New(st, httpapi.Options{BaseURL: baseURL, Semantic: sem, APISecretKey: storeBenchKey,
		Asker: ask.New(sem, ask.Options{Link: httpapi.HitLinks(baseURL)}), Crawler: runner})
}

// BenchmarkStores compares the stores on the synthetic peer-style corpora
// (100k and 1M messages; -short stops at 100k). Each run is one row:
//
//	go test ./bench -run '^$' -bench 'BenchmarkStores/weaviate-3/100k' -benchtime 1x -timeout 120m -v
//
// It reports the ingest rate (msgs/s: PutChannels then PutMessages in
// importer-sized batches of 4096, through the store's own API; ns/op is
// that ingest) and GET /api/search latency through the server's handler
// (p50-ms, p99-ms, mean-ms: top 10 with highlights, a caller without
// credentials, storeQueries queries of queriesFor after storeWarmup, the
// same on every store; also per kind: words-, from- and phrase-). On a
// cluster the queries start flushWait after the ingest, once Weaviate has
// flushed its memtables. The memory store's semantic index follows the
// writes as in `sift serve` and is waited for before the queries
// (semantic-s: how much longer it took). On a cluster the semantic indexer
// (run by the lease holder in `sift serve`) runs during the ingest only
// with SIFT_BENCH_INDEXER=1, and is then waited for the same way. The
// queries run on an idle store. When the semantic layer followed the
// writes, semantic-p50-ms/p99-ms and ask-p50-ms/p99-ms are GET
// /api/semantic-search (limit 10) and POST /api/ask (the extractive
// answer as one JSON body) over the first 300 and 100 of the same queries,
// after as many to warm up. After them, on a cluster, plain1-msgs/s and
// plain4-msgs/s are Weaviate's own import rate of the same messages
// (wvstore.PlainImport, one or four batches of 1,000 in flight), the
// ceiling Sift's ingest is measured against.
func BenchmarkStores(b *testing.B) {
	for _, k := range storeKinds {
		b.Run(k.name, func(b *testing.B) {
			for _, n := range sizes[1:] {
				b.Run(label(n), func(b *testing.B) {
					skipLarge(b, n)
					benchStore(b, k.nodes, n)
				})
			}
		})
	}
}

// storeUnderTest is a store being measured and its semantic layer; wait
// returns when the semantic layer has caught up with the writes.
type storeUnderTest struct {
	st      serverStore
	sem     serverSemantic
	wait    func(ctx context.Context) error
	indexed bool // a semantic indexer follows the writes
}

func benchStore(b *testing.B, nodes, n int) {
	c := synthCorpus(n)
	var sample []record.Message // every 50th message, as builtEngine draws them
	for i := 0; i < len(c.msgs); i += 50 {
		sample = append(sample, c.msgs[i])
	}
	queries := queriesFor(NewSynth(7, vocabSize, channels), sample, storeWarmup+storeQueries)
	var cl *weaviatetest.Cluster
	if nodes > 0 {
		cl = weaviatetest.Start(b, nodes)
	}
	var s *storeUnderTest
	var settle time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if nodes == 0 {
			s = openMemoryStore(b)
		} else {
			s = openClusterStore(b, cl, fmt.Sprint("Bench", i))
		}
		if _, err := s.st.PutSource(record.Source{ID: "synth", Name: "synth", Type: "discord", Enabled: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ingest(b, s.st, c)
		b.StopTimer()
		t := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
		err := s.wait(ctx)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		settle = time.Since(t)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "msgs/s")
	if s.indexed {
		b.ReportMetric(settle.Seconds(), "semantic-s")
	}
	if got := s.st.Counts(true).Messages; got != n {
		b.Fatalf("the store holds %d messages, want %d", got, n)
	}
	if nodes > 0 {
		time.Sleep(flushWait) // Weaviate flushes its memtables a minute after the last write
	}
	h := newStoreServer(b, s.st, s.sem, "http://sift.bench").Handler()
	lat, hits := searchLatencies(b, h, queries)
	all := slices.Concat(lat[queryWords], lat[queryFrom], lat[queryPhrase])
	reportLatencies(b, "", all)
	for k, name := range []string{"words-", "from-", "phrase-"} {
		reportLatencies(b, name, lat[k])
	}
	b.ReportMetric(float64(hits)/float64(len(all)), "hits/query")
	if s.indexed {
		sem, asks := semanticLatencies(b, h, queries)
		reportLatencies(b, "semantic-", sem)
		reportLatencies(b, "ask-", asks)
	}
	if nodes > 0 {
		for _, workers := range []int{1, 4} {
			b.ReportMetric(plainImport(b, cl, c, workers), fmt.Sprintf("plain%d-msgs/s", workers))
		}
	}
}

// plainImport writes the corpus's messages into namespace Plain<workers>
// of cl as a plain gRPC batch import does (wvstore.PlainImport: the same
// objects as Sift writes, batches of 1,000, workers in flight, nothing
// else) and returns its rate: Weaviate's own ceiling, measured in the
// same run as Sift's ingest.
func plainImport(b *testing.B, cl *weaviatetest.Cluster, c *corpus, workers int) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	defer cancel()
	st, err := wvstore.Open(ctx, wvstore.Options{URL: cl.Nodes[0].URL(), GRPCAddr: cl.Nodes[0].GRPCAddr(),
		Namespace: fmt.Sprint("Plain", workers), Replication: len(cl.Nodes)})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := st.PlainImport(ctx, c.msgs, 1000, workers); err != nil {
		b.Fatal(err)
	}
	return float64(len(c.msgs)) / time.Since(start).Seconds()
}

// reportLatencies reports the p50, p99 and mean of lat, their names
// prefixed by kind.
func reportLatencies(b *testing.B, kind string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), kind+"p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), kind+"p99-ms")
	if kind == "" {
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		b.ReportMetric(ms(sum/time.Duration(len(lat))), "mean-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// openMemoryStore opens the memory store as `sift serve` does: on a data
// dir (each batch fsynced to the write-ahead log), its semantic index
// following.
func openMemoryStore(b *testing.B) *storeUnderTest {
	e, x, err := semantic.Open(engine.Options{DataDir: b.TempDir()}.OpenWith, semantic.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return &storeUnderTest{st: e, sem: x, wait: x.Wait, indexed: true}
}

// openClusterStore opens the store in namespace ns of the cluster through
// its first node, at replication factor len(cl.Nodes), batches over gRPC.
func openClusterStore(b *testing.B, cl *weaviatetest.Cluster, ns string) *storeUnderTest {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := wvstore.Open(ctx, wvstore.Options{URL: cl.Nodes[0].URL(), GRPCAddr: cl.Nodes[0].GRPCAddr(),
		Namespace: ns, Replication: len(cl.Nodes)})
	if err != nil {
		b.Fatal(err)
	}
	x := st.Semantic(wvstore.SemanticOptions{FreshWait: -1}) // the run steps the indexer itself
	s := &storeUnderTest{st: clusterStore{st}, sem: x, wait: func(context.Context) error { return nil }}
	if os.Getenv("SIFT_BENCH_INDEXER") == "1" {
		ictx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); x.Run(ictx) }()
		b.Cleanup(func() { stop(); <-done })
		s.indexed = true
		s.wait = func(ctx context.Context) error {
			stop()
			<-done
			return SettleSemantic(ctx, x)
		}
	}
	return s
}

// ingest writes the corpus's channels, then its messages in importer-sized
// batches.
func ingest(b *testing.B, st serverStore, c *corpus) {
	if _, err := st.PutChannels(c.chans); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < len(c.msgs); i += batchSize {
		if _, err := st.PutMessages(c.msgs[i:min(i+batchSize, len(c.msgs))]); err != nil {
			b.Fatal(err)
		}
		if done := i + batchSize; testing.Verbose() && done/100_000 != i/100_000 {
			fmt.Fprintf(os.Stderr, "%s: %d messages in %s\n", b.Name(), min(done, len(c.msgs)), time.Since(start).Round(time.Second))
		}
	}
}

// The kinds of queries queriesFor makes, whose latencies are also
// reported apart: content words, the same with from:, a quoted phrase.
const (
	queryWords = iota
	queryFrom
	queryPhrase
)

func queryKind(q string) int {
	switch {
	case strings.Contains(q, `"`):
		return queryPhrase
	case strings.Contains(q, "from:"):
		return queryFrom
	}
	return queryWords
}

// searchLatencies runs queries through GET /api/search (top 10, with
// highlights, no credentials) and returns the latencies of all but the
// first storeWarmup, by kind, and the hits they found.
func searchLatencies(b *testing.B, h fasthttp.RequestHandler, queries []string) ([3][]time.Duration, int) {
	var ctx fasthttp.RequestCtx
	var lat [3][]time.Duration
	hits := 0
	type timed struct {
		q string
		d time.Duration
	}
	var slowest []timed
	for i, q := range queries {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.SetRequestURI("/api/search?q=" + url.QueryEscape(q) + "&limit=10")
		t := time.Now()
		h(&ctx)
		d := time.Since(t)
		if ctx.Response.StatusCode() != fasthttp.StatusOK {
			b.Fatalf("%q: %d %s", q, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		if i < storeWarmup {
			continue
		}
		lat[queryKind(q)] = append(lat[queryKind(q)], d)
		slowest = append(slowest, timed{q, d})
		var res struct{ Messages, Documents []json.RawMessage }
		if err := json.Unmarshal(ctx.Response.Body(), &res); err != nil {
			b.Fatal(err)
		}
		hits += len(res.Messages) + len(res.Documents)
	}
	slices.SortFunc(slowest, func(a, b timed) int { return cmp.Compare(b.d, a.d) })
	for _, t := range slowest[:min(5, len(slowest))] {
		b.Logf("slow: %q %s", t.q, t.d.Round(time.Millisecond/10))
	}
	return lat, hits
}

// Semantic searches and questions BenchmarkStores measures once the
// semantic layer has caught up, after as many to warm up.
const (
	semanticQueries = 300
	askQueries      = 100
)

// semanticLatencies runs GET /api/semantic-search (limit 10) for the
// first semanticQueries of queries and POST /api/ask (the extractive
// answer, one JSON body) for the first askQueries, each after a warm-up
// of as many, with the API key, and returns their latencies.
func semanticLatencies(b *testing.B, h fasthttp.RequestHandler, queries []string) (sem, asks []time.Duration) {
	var ctx fasthttp.RequestCtx
	run := func(method, uri, body string) time.Duration {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(uri)
		ctx.Request.Header.Set("Authorization", "Bearer "+storeBenchKey)
		if body != "" {
			ctx.Request.Header.SetContentType("application/json")
			ctx.Request.SetBodyString(body)
		}
		t := time.Now()
		h(&ctx)
		d := time.Since(t)
		if ctx.Response.StatusCode() != fasthttp.StatusOK {
			b.Fatalf("%s %s: %d %s", method, uri, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		return d
	}
	for i, q := range queries[:2*semanticQueries] {
		d := run("GET", "/api/semantic-search?limit=10&q="+url.QueryEscape(q), "")
		if i >= semanticQueries {
			sem = append(sem, d)
		}
	}
	for i, q := range queries[:2*askQueries] {
		body, _ := json.Marshal(map[string]string{"question": q})
		d := run("POST", "/api/ask", string(body))
		if i >= askQueries {
			asks = append(asks, d)
		}
	}
	return sem, asks
}
