package wvstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/semantic/chunk"
	"github.com/sift-search/sift/semantic/training"
)

var (
	_ httpapi.Semantic = (*Semantic)(nil)
	_ ask.Retriever    = (*Semantic)(nil)
)

// The memory index's fixtures (semantic/semantic_test.go): three documents,
// a conversation in #help, and — so the built-in embedder trains (64 chunks
// and more) and learns which words go together — a #general channel of
// one-message windows in the words of embed/model_test.go's corpus.
var semDocs = []record.Document{
	{SourceID: record.UploadsSourceID, Title: "Cron syntax", Content: "# Cron syntax\n\nA schedule has six fields, seconds first.\n\n## Daylight saving time\n\nWhen clocks move forward an hour, a run scheduled inside the missing hour is skipped. When clocks move back, Wren runs it once, not twice. Set tz on every schedule."},
	{SourceID: record.UploadsSourceID, Title: "Postgres backend", Content: "# Postgres backend\n\nSize the connection pool: max_open_conns of every node must stay below the server's max_connections. PgBouncer in transaction mode helps when many nodes connect."},
	{SourceID: record.UploadsSourceID, Title: "Webhooks", Content: "# Webhooks\n\nEvery delivery carries an HMAC-SHA256 signature of the raw body in X-Wren-Signature. Verify it before parsing JSON: a proxy that re-serialises the body breaks the signature. Call verifyWrenSignature from the SDK."},
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var bridge = []string{
	"the postgres database connection pool ran out of connections %d",
	"raise max_open_conns or use pgbouncer for the database pool %d",
	"the cron schedule fires twice after the daylight saving change %d",
	"set tz on the schedule so daylight saving is handled %d",
}

// corpusMessages returns the chat source's messages: n bridging messages in
// #general an hour apart (one window each), from the i-th on, and the #help
// conversation.
func corpusMessages(from, n int) []record.Message {
	var out []record.Message
	for i := from; i < from+n; i++ {
		out = append(out, record.Message{SourceID: "chat", ChannelID: "c1", ID: fmt.Sprint("g", i), Author: fmt.Sprint("u", i%4),
			Content: fmt.Sprintf(bridge[i%4], i), Timestamp: t0.Add(time.Duration(i) * time.Hour)})
	}
	for i, text := range []string{
		"our nightly export ran two times on Sunday morning",
		"that was the autumn clock change, upgrade to 2.0.1",
		"thanks, upgrading fixed the double run",
	} {
		out = append(out, record.Message{SourceID: "chat", ChannelID: "c2", ID: fmt.Sprint("conv", i), Author: []string{"ana", "bo"}[i%2],
			Content: text, Timestamp: t0.Add(100*time.Hour + time.Duration(i)*time.Minute)})
	}
	return out
}

// corpusStore is the writes corpus makes, to a cluster's store or the
// memory one.
type corpusStore interface {
	PutSource(record.Source) (record.Source, error)
	PutChannels([]record.Channel) ([]record.Channel, error)
	PutMessages([]record.Message) (int, error)
	PutDocuments([]record.Document) ([]record.Document, error)
}

func corpus(t testing.TB, s corpusStore) {
	t.Helper()
	corpusStart(t, s)
	if _, err := s.PutMessages(corpusMessages(0, 64)); err != nil {
		t.Fatal(err)
	}
}

// corpusStart writes the corpus but #general's messages: too few chunks
// to train on.
func corpusStart(t testing.TB, s corpusStore) {
	t.Helper()
	if _, err := s.PutSource(record.Source{ID: "chat", Name: "Acme Chat", Type: "discord", Enabled: true, Visibility: record.VisibilityPublic}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutChannels([]record.Channel{{SourceID: "chat", ID: "c1", Name: "general"}, {SourceID: "chat", ID: "c2", Name: "help"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages(corpusMessages(0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutDocuments(semDocs); err != nil {
		t.Fatal(err)
	}
}

// openNS opens a store of namespace ns on the cluster's first node (with
// grpc, writing batches over gRPC); its collections are dropped with the
// test.
func openNS(t *testing.T, cl *weaviatetest.Cluster, ns string, grpc ...bool) *Store {
	t.Helper()
	opts := Options{URL: cl.Nodes[0].URL(), Namespace: ns}
	if len(grpc) > 0 && grpc[0] {
		opts.GRPCAddr = cl.Nodes[0].GRPCAddr()
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropNamespace(t, s) })
	return s
}

// stepped is the options of a Semantic whose indexer the test steps
// itself (settle): its searches do not wait for an indexer that is not
// running (they may say Stale).
func stepped() SemanticOptions { return SemanticOptions{FreshWait: -1} }

// settle runs the indexer until it has nothing left to do, waiting for a
// due training that waits for writes to pause; it returns the steps taken.
func settle(t testing.TB, x *Semantic) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	steps := 0
	for {
		worked, err := x.Step(ctx)
		if err != nil {
			t.Fatalf("indexer step %d: %v", steps, err)
		}
		steps++
		if worked {
			continue
		}
		if x.opts.Embedder == nil && trainingDue(t, x) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		return steps
	}
}

func trainingDue(t testing.TB, x *Semantic) bool {
	ctx := context.Background()
	live, err := x.s.count(ctx, x.s.class("Chunk"), nil)
	if err != nil {
		t.Fatal(err)
	}
	trained := 0
	if emb, err := x.current(ctx, true); err != nil {
		t.Fatal(err)
	} else if m, ok := emb.(*embed.Model); ok {
		trained = m.Trained()
	}
	return training.Due(live, trained)
}

func search(t testing.TB, x *Semantic, req semantic.Request) *semantic.Result {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = 10
	}
	r, err := x.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	return r
}

func titles(hits []semantic.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Title
	}
	return out
}

// ownerChunks counts the chunks of an owner.
func ownerChunks(t testing.TB, s *Store, owner string) int {
	t.Helper()
	n, err := s.count(context.Background(), s.class("Chunk"), eqText("owner", ownerProp(owner)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSemantic runs semantic search on a one-node cluster, each case in a
// namespace of its own.
func TestSemantic(t *testing.T) {
	cl := weaviatetest.Start(t, 1)
	t.Run("Meaning", func(t *testing.T) { testMeaning(t, cl) })
	t.Run("Visibility", func(t *testing.T) { testVisibility(t, cl) })
	t.Run("Deletion", func(t *testing.T) { testDeletion(t, cl) })
	t.Run("Edit", func(t *testing.T) { testEdit(t, cl) })
	t.Run("Watermark", func(t *testing.T) { testWatermark(t, cl) })
	t.Run("EmbeddingsServer", func(t *testing.T) { testEmbeddingsServer(t, cl) })
	t.Run("Paging", func(t *testing.T) { testPaging(t, cl) })
	t.Run("FreshWrites", func(t *testing.T) { testFreshWrites(t, cl) })
}

// testPaging: the change log read two changes at a time, when a write
// made more at one time, indexes every owner; a channel read a page at a
// time in time order, when times repeat across the pages' edges, is the
// channel.
func testPaging(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemP")
	x := s.Semantic(stepped())
	defer func(n int) { changesPerPage = n }(changesPerPage)
	changesPerPage = 2
	var docs []record.Document
	for i := range 7 {
		docs = append(docs, record.Document{SourceID: record.UploadsSourceID, Title: fmt.Sprint("Note ", i), Content: fmt.Sprint("Note number ", i, ".")})
	}
	for _, batch := range [][]record.Document{docs[:5], docs[5:6], docs[6:]} { // five changes at one time, then two
		if _, err := s.PutDocuments(batch); err != nil {
			t.Fatal(err)
		}
	}
	if steps := settle(t, x); steps < 3 {
		t.Fatalf("%d steps for pages of two", steps)
	}
	for _, d := range docs {
		if n := ownerChunks(t, s, documentOwner(record.DocumentID(d.SourceID, d.Title))); n != 1 {
			t.Fatalf("%s: %d chunks", d.Title, n)
		}
	}
	changesPerPage = 100

	if _, err := s.PutSource(record.Source{ID: "chat", Name: "Acme Chat", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	chs, err := s.PutChannels([]record.Channel{{SourceID: "chat", ID: "c3", Name: "busy"}})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []record.Message
	for i := range 25 { // three at each time
		msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: "c3", ID: fmt.Sprintf("m%02d", i), Author: "a",
			Content: fmt.Sprint("message ", i), Timestamp: t0.Add(time.Duration(i/3) * time.Second)})
	}
	if _, err := s.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	want, err := s.ChannelMessageIDs(chs[0].Slug)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []int{1, 2, 3, 4, 7, 25, 1000} {
		keysetPage = page
		objs, err := s.keysetAll(context.Background(), getQuery{class: s.class("Message"), fields: msgFields,
			where: channelWhere(chanKey{"chat", "c3"}), sort: timeOrder}, dateKey)
		keysetPage = 1000
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range objs {
			m, err := decodeMessage(o)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, m.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages of %d: %v, want %v", page, got, want)
		}
	}
}

// testMeaning: documents and channels indexed, the built-in model trained
// and shared, found by meaning; fields, cuts, filters, boosts, bounds;
// agreement with the memory index.
func testMeaning(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemA")
	x := s.Semantic(stepped())
	// Channels and stored chunks are read ten at a time.
	defer func(n int) { keysetPage = n }(keysetPage)
	keysetPage = 10
	if r := search(t, x, semantic.Request{Query: "connection pool"}); r.Vectors || len(r.Hits) != 0 {
		t.Fatalf("an empty store: %+v", r)
	}
	corpusStart(t, s)
	// Before a model exists: BM25 over chunks only.
	settle(t, x)
	if st := x.Status(); st.Embedder != "" || st.Chunks != 5 || st.Vectors != 0 || st.Pending != 0 {
		t.Fatalf("before training: %+v", st)
	}
	r := search(t, x, semantic.Request{Query: "postgres connection pool"})
	if r.Vectors || len(r.Hits) == 0 || r.Hits[0].Title != "Postgres backend" {
		t.Fatalf("BM25 alone: vectors %v, %q", r.Vectors, titles(r.Hits))
	}
	if _, err := s.PutMessages(corpusMessages(0, 64)); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	settle(t, x)
	x.statusAt = time.Time{}
	st := x.Status()
	t.Logf("indexed and trained: %+v in %v", st, time.Since(start))
	if !strings.HasPrefix(st.Embedder, "builtin-ri1-") || strings.Contains(st.Embedder, "untrained") ||
		st.Chunks != 64+1+4 || st.Vectors != st.Chunks || st.Pending != 0 || st.Error != "" {
		t.Fatalf("status %+v", st)
	}

	// A paraphrase sharing no word with the passage: only the vectors can
	// find it (BM25 has no candidate among the documents).
	if words := queryWords("database ran out"); slices.ContainsFunc(words, func(w string) bool {
		return slices.Contains(analysis.IndexTerms(nil, semDocs[1].Title+" "+semDocs[1].Content, 1), w)
	}) {
		t.Fatalf("the paraphrase shares a word with the passage: %v", words)
	}
	if lex, err := x.lexical(context.Background(), "database ran out", eqText("sourceId", record.UploadsSourceID)); err != nil || len(lex) != 0 {
		t.Fatalf("BM25 finds %d documents for the paraphrase (%v)", len(lex), err)
	}
	r = search(t, x, semantic.Request{Query: "database ran out", Sources: []string{record.UploadsSourceID}})
	if !r.Vectors || len(r.Hits) == 0 || r.Hits[0].Title != "Postgres backend" {
		t.Fatalf("paraphrase: vectors %v, %q", r.Vectors, titles(r.Hits))
	}

	hits := search(t, x, semantic.Request{Query: "clocks move back and the job runs twice", HyDE: true}).Hits
	if len(hits) == 0 || hits[0].Type != "document" || hits[0].Title != "Cron syntax — Daylight saving time" ||
		hits[0].DocSlug == "" || hits[0].DocumentID != record.DocumentID(record.UploadsSourceID, "Cron syntax") ||
		!strings.HasPrefix(hits[0].Fragment, "#:~:text=") || hits[0].Source != "Uploads" || hits[0].Time.IsZero() {
		t.Fatalf("top hit: %+v", hits)
	}
	for i, h := range hits {
		if h.Score < 0 || h.Score > 1 || (i > 0 && h.Score > hits[i-1].Score) {
			t.Fatalf("scores out of [0,1] or order: %+v", hits)
		}
	}
	i := slices.IndexFunc(hits, func(h semantic.Hit) bool { return h.Type == "message" && h.Channel == "help" })
	if i < 0 {
		t.Fatalf("no conversation window: %q", titles(hits))
	}
	if chat := hits[i]; chat.Content != "ana: our nightly export ran two times on Sunday morning\nbo: that was the autumn clock change, upgrade to 2.0.1\nana: thanks, upgrading fixed the double run" ||
		chat.ChannelSlug != "help" || chat.MessageID != "conv0" || chat.Title != "help — 2026-03-05" || chat.Source != "Acme Chat" ||
		chat.SourceType != "discord" || !slices.Equal(chat.Authors, []string{"ana", "bo"}) || !chat.Time.Equal(t0.Add(100*time.Hour)) {
		t.Fatalf("chat window: %+v", chat)
	}
	// Exact identifiers rank first.
	if hits := search(t, x, semantic.Request{Query: "verifyWrenSignature", HyDE: true}).Hits; len(hits) == 0 || hits[0].Title != "Webhooks" {
		t.Fatalf("identifier: %q", titles(hits))
	}
	// Content is cut on a word boundary; its length stays the whole chunk's.
	docs := []string{record.UploadsSourceID}
	h := search(t, x, semantic.Request{Query: "postgres connection pool", MaxChars: 40, Sources: docs}).Hits[0]
	if !h.Truncated || utf8.RuneCountInString(h.Content) > 40 || h.ContentLength <= 40 || strings.HasSuffix(h.Content, " ") ||
		!strings.HasPrefix(semDocs[1].Content, h.Content) {
		t.Fatalf("cut: %+v", h)
	}
	if h := search(t, x, semantic.Request{Query: "postgres connection pool", MaxChars: 100000, Sources: docs}).Hits[0]; h.Truncated || utf8.RuneCountInString(h.Content) != h.ContentLength {
		t.Fatalf("uncut: %+v", h)
	}
	// Limits, boost and source filter.
	if hits := search(t, x, semantic.Request{Query: "schedule", Limit: 2}).Hits; len(hits) != 2 {
		t.Fatalf("limit 2: %d", len(hits))
	}
	if hits := search(t, x, semantic.Request{Query: "database pool", Limit: 1000}).Hits; len(hits) <= 10 || len(hits) > semantic.MaxLimit {
		t.Fatalf("limit 1000: %d hits", len(hits))
	}
	plain := search(t, x, semantic.Request{Query: "upgrade fixed the double run"}).Hits
	boosted := search(t, x, semantic.Request{Query: "upgrade fixed the double run", Boost: map[string]float64{record.UploadsSourceID: 10}}).Hits
	if boosted[0].SourceID != record.UploadsSourceID || boosted[0].Score <= 1 || plain[0].SourceID == boosted[0].SourceID && plain[0].Score == boosted[0].Score {
		t.Fatalf("boost: plain %+v boosted %+v", plain[0], boosted[0])
	}
	for _, h := range search(t, x, semantic.Request{Query: "upgrade", Sources: []string{"chat"}}).Hits {
		if h.SourceID != "chat" {
			t.Fatalf("source filter let through %+v", h)
		}
	}
	if _, err := x.Search(context.Background(), semantic.Request{Query: "  "}); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("empty query: %v", err)
	}
	if r := search(t, x, semantic.Request{Query: "???", Limit: 3}); len(r.Hits) > 3 {
		t.Fatalf("punctuation: %+v", r)
	}
	checkCosine(t, x)

	// HyDE with a model's hypothetical answer, asked once per query.
	var calls atomic.Int32
	xh := s.Semantic(SemanticOptions{FreshWait: -1, Hypothesize: func(_ context.Context, q string) (string, error) {
		calls.Add(1)
		return "Set max_open_conns below max_connections and use PgBouncer.", nil
	}})
	for range 3 {
		r := search(t, xh, semantic.Request{Query: "my server keeps saying no", HyDE: true, Sources: docs})
		if !r.Vectors || r.Hits[0].Title != "Postgres backend" {
			t.Fatalf("with a hypothetical answer: %v %q", r.Vectors, titles(r.Hits))
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d model calls for three equal queries", calls.Load())
	}

	// A second process on the namespace loads the model from the cluster:
	// its searches use the vectors without indexing anything itself.
	s2, err := Open(context.Background(), Options{URL: cl.Nodes[0].URL(), Namespace: "SemA"})
	if err != nil {
		t.Fatal(err)
	}
	x2 := s2.Semantic(stepped())
	r = search(t, x2, semantic.Request{Query: "database ran out", Sources: []string{record.UploadsSourceID}})
	if !r.Vectors || len(r.Hits) == 0 || r.Hits[0].Title != "Postgres backend" || x2.Status().Embedder != st.Embedder {
		t.Fatalf("second process: vectors %v, %q, status %+v", r.Vectors, titles(r.Hits), x2.Status())
	}

	// Search latency on this corpus.
	qs := []string{"database ran out", "clocks move back and the job runs twice", "verifyWrenSignature", "upgrade fixed the double run"}
	start = time.Now()
	const rounds = 10
	for range rounds {
		for _, q := range qs {
			search(t, x2, semantic.Request{Query: q, HyDE: true})
		}
	}
	t.Logf("search latency: %v a query (%d queries, HyDE by feedback, %d chunks)", time.Since(start)/time.Duration(rounds*len(qs)), rounds*len(qs), st.Chunks)

	compareWithMemory(t, x, append(qs, "postgres connection pool", "HMAC signature of the raw body", "set tz on the schedule"))

	// The corpus grows by a quarter and more: the model is trained again,
	// every chunk embedded again by it, and the second process follows.
	if _, err := s.PutMessages(corpusMessages(64, 64)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	settle(t, x)
	x.statusAt = time.Time{}
	st2 := x.Status()
	t.Logf("re-trained and re-embedded: %+v in %v", st2, time.Since(start))
	if st2.Embedder == st.Embedder || st2.Vectors != st2.Chunks || st2.Chunks != 128+1+4 || st2.Pending != 0 {
		t.Fatalf("after growth: %+v (was %+v)", st2, st)
	}
	time.Sleep(modelCheck)
	if r := search(t, x2, semantic.Request{Query: "database ran out", Sources: []string{record.UploadsSourceID}}); !r.Vectors || r.Hits[0].Title != "Postgres backend" {
		t.Fatalf("second process after retraining: %v %q", r.Vectors, titles(r.Hits))
	}
	x2.statusAt = time.Time{}
	if got := x2.Status().Embedder; got != st2.Embedder {
		t.Fatalf("second process uses %s, the indexer %s", got, st2.Embedder)
	}
}

// checkCosine: Weaviate's distance of each returned chunk is 1 − the dot
// product of the query's vector and the chunk's, as Sift computes it.
func checkCosine(t *testing.T, x *Semantic) {
	emb, err := x.current(context.Background(), false)
	if err != nil || emb == nil {
		t.Fatalf("no embedder: %v", err)
	}
	qv, err := x.emb.QueryVector(context.Background(), emb, "database pool connections", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := x.s.chunkGet(context.Background(), chunkQuery{near: qv, limit: 20, vector: true})
	if err != nil || len(hits) == 0 {
		t.Fatalf("%d hits: %v", len(hits), err)
	}
	var worst float64
	for _, h := range hits {
		d := float64(1 - h.distance - ann.Dot(qv, h.vector))
		worst = max(worst, d, -d)
	}
	t.Logf("cosine: the largest difference between 1 − Weaviate's distance and Sift's dot product is %.2g", worst)
	if worst > 1e-5 {
		t.Fatalf("Weaviate's distance differs from Sift's cosine by %g", worst)
	}
}

// compareWithMemory runs queries on the memory index over the same corpus
// and reports where the top results differ; it fails only when none agree.
func compareWithMemory(t *testing.T, x *Semantic, queries []string) {
	e, mx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	corpus(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := mx.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	agree := 0
	for _, q := range queries {
		for _, hyde := range []bool{false, true} {
			req := semantic.Request{Query: q, Limit: 3, HyDE: hyde}
			mr, err := mx.Search(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			wr := search(t, x, req)
			top := func(hits []semantic.Hit) string {
				if len(hits) == 0 {
					return ""
				}
				return hits[0].Title + " | " + hits[0].Content[:min(len(hits[0].Content), 40)]
			}
			same := top(mr.Hits) == top(wr.Hits)
			if same {
				agree++
			}
			t.Logf("agree=%v hyde=%v %q\n\tmemory:  %q\n\tcluster: %q", same, hyde, q, titles(mr.Hits), titles(wr.Hits))
		}
	}
	t.Logf("the memory index (embedder %s) and the cluster agree on the top result of %d of %d queries",
		mx.Status().Embedder, agree, 2*len(queries))
	if agree == 0 {
		t.Fatal("no query's top result agrees with the memory index")
	}
}

// testVisibility: a private channel's and a private source's chunks are
// kept from callers without credentials; made public, they show at once,
// without indexing again.
func testVisibility(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemV")
	x := s.Semantic(stepped())
	corpus(t, s)
	if _, err := s.PutChannels([]record.Channel{{SourceID: "chat", ID: "dm", Name: "ana-bo", Private: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessages([]record.Message{{SourceID: "chat", ChannelID: "dm", ID: "dm1", Author: "ana",
		Content: "the zanzibar password rotates weekly", Timestamp: t0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSource(record.Source{ID: "intranet", Name: "Intranet", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutDocuments([]record.Document{{SourceID: "intranet", Title: "Zanzibar rota", Content: "Who rotates the zanzibar keys, and when."}}); err != nil {
		t.Fatal(err)
	}
	settle(t, x)
	found := func(private bool) (dm, doc bool) {
		for _, h := range search(t, x, semantic.Request{Query: "zanzibar password rotates", Private: private}).Hits {
			dm = dm || h.Channel == "ana-bo"
			doc = doc || h.Title == "Zanzibar rota"
		}
		return dm, doc
	}
	if dm, doc := found(false); dm || doc {
		t.Fatalf("anonymous: the private channel %v, the private source's document %v", dm, doc)
	}
	if dm, doc := found(true); !dm || !doc {
		t.Fatalf("with credentials: the private channel %v, the private source's document %v", dm, doc)
	}
	if _, err := s.SetChannelVisibility("chat", "dm", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSource("intranet", func(src *record.Source) error { src.Visibility = record.VisibilityPublic; return nil }); err != nil {
		t.Fatal(err)
	}
	if dm, doc := found(false); !dm || !doc { // no indexer step in between
		t.Fatalf("made public: the channel %v, the document %v", dm, doc)
	}
	if _, err := s.SetChannelVisibility("chat", "c2", record.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	for _, h := range search(t, x, semantic.Request{Query: "autumn clock change double run"}).Hits {
		if h.Channel == "help" {
			t.Fatalf("a channel made private still shows: %+v", h)
		}
	}
}

// testDeletion: a deleted document's, channel's and source's chunks are
// left out at once and deleted by the indexer, and never come back — not
// even those a pass wrote while their source was being deleted.
func testDeletion(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemD")
	x := s.Semantic(stepped())
	corpus(t, s)
	settle(t, x)
	webhooks := record.DocumentID(record.UploadsSourceID, "Webhooks")
	if n := ownerChunks(t, s, documentOwner(webhooks)); n != 1 {
		t.Fatalf("%d chunks of Webhooks", n)
	}
	if err := s.DeleteDocument(webhooks); err != nil {
		t.Fatal(err)
	}
	for _, h := range search(t, x, semantic.Request{Query: "HMAC signature of the raw body", HyDE: true}).Hits {
		if strings.Contains(h.Content, "HMAC") {
			t.Fatalf("deleted document found before the indexer ran: %+v", h)
		}
	}
	if err := s.ExcludeChannel("chat", "c2"); err != nil {
		t.Fatal(err)
	}
	for _, h := range search(t, x, semantic.Request{Query: "autumn clock change double run", Private: true}).Hits {
		if h.Channel == "help" {
			t.Fatalf("excluded channel found before the indexer ran: %+v", h)
		}
	}
	settle(t, x)
	if a, b := ownerChunks(t, s, documentOwner(webhooks)), ownerChunks(t, s, channelOwner("chat", "c2")); a+b != 0 {
		t.Fatalf("after indexing: %d chunks of the deleted document, %d of the excluded channel", a, b)
	}

	// A source deleted while a pass indexes its new document: the pass
	// writes the chunks after the deletion; the next step deletes them.
	if _, err := s.PutSource(record.Source{ID: "temp", Name: "Temp", Type: "upload", Enabled: true, Visibility: record.VisibilityPublic}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutDocuments([]record.Document{{SourceID: "temp", Title: "Ephemeral", Content: "A quokka note that will not last."}}); err != nil {
		t.Fatal(err)
	}
	x.testHookChunked = func() {
		x.testHookChunked = nil
		if err := s.DeleteSource("temp"); err != nil {
			t.Error(err)
		}
	}
	settle(t, x)
	for _, src := range []string{"temp", "chat"} {
		if src == "chat" {
			if err := s.DeleteSource("chat"); err != nil {
				t.Fatal(err)
			}
			for _, h := range search(t, x, semantic.Request{Query: "database pool connections", Private: true}).Hits {
				if h.SourceID == "chat" {
					t.Fatalf("deleted source's window found: %+v", h)
				}
			}
			settle(t, x)
		}
		n, err := s.count(context.Background(), s.class("Chunk"), eqText("sourceId", src))
		if err != nil || n != 0 {
			t.Fatalf("source %s deleted: %d chunks left (%v)", src, n, err)
		}
	}
	for _, h := range search(t, x, semantic.Request{Query: "quokka note", Private: true}).Hits {
		if h.SourceID == "temp" {
			t.Fatalf("deleted source's document found: %+v", h)
		}
	}
	// Writes to the other content do not bring them back.
	if _, err := s.PutDocuments([]record.Document{{SourceID: record.UploadsSourceID, Title: "Later", Content: "A later note about quokkas."}}); err != nil {
		t.Fatal(err)
	}
	settle(t, x)
	// Left: Cron syntax (two passages), Postgres backend, Later.
	if n, err := s.count(context.Background(), s.class("Chunk"), nil); err != nil || n != 4 {
		t.Fatalf("%d chunks left (%v)", n, err)
	}
}

// testEdit: an edited document is chunked again — the old text is gone,
// the new found, and only its passages remain. Batches go over gRPC.
func testEdit(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemE", true)
	x := s.Semantic(stepped())
	corpus(t, s)
	settle(t, x)
	long := "# Webhooks\n\nDeliveries are signed with Ed25519 now.\n\n## Retries\n\nA failed delivery is retried five times, backing off each time.\n\n## Ordering\n\nDeliveries may arrive out of order."
	if _, err := s.PutDocuments([]record.Document{{SourceID: record.UploadsSourceID, Title: "Webhooks", Content: long}}); err != nil {
		t.Fatal(err)
	}
	// At once, before the indexer runs, the old passage is not served: its
	// text is gone.
	for _, h := range search(t, x, semantic.Request{Query: "HMAC signature"}).Hits {
		if h.Title == "Webhooks" {
			t.Fatalf("before re-chunking, the old passage: %+v", h)
		}
	}
	settle(t, x)
	owner := documentOwner(record.DocumentID(record.UploadsSourceID, "Webhooks"))
	if n, want := ownerChunks(t, s, owner), len(chunk.SplitDocument(long)); n != want {
		t.Fatalf("%d chunks, want %d", n, want)
	}
	for _, h := range search(t, x, semantic.Request{Query: "HMAC signature"}).Hits {
		if strings.Contains(h.Content, "HMAC") {
			t.Fatalf("the old text is found: %+v", h)
		}
	}
	hits := search(t, x, semantic.Request{Query: "retried five times"}).Hits
	if len(hits) == 0 || hits[0].Title != "Webhooks — Retries" || !strings.Contains(hits[0].Content, "retried five times") || hits[0].Fragment == "" {
		t.Fatalf("the new text: %+v", hits)
	}
	// A message edited and one added re-window the channel.
	if _, err := s.PutMessages([]record.Message{{SourceID: "chat", ChannelID: "c2", ID: "conv2", Author: "ana",
		Content: "thanks, the wombat release fixed it", Timestamp: t0.Add(100*time.Hour + 2*time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	settle(t, x)
	hits = search(t, x, semantic.Request{Query: "wombat release"}).Hits
	if len(hits) == 0 || hits[0].Channel != "help" || !strings.HasSuffix(hits[0].Content, "ana: thanks, the wombat release fixed it") {
		t.Fatalf("edited window: %+v", hits)
	}
	if n := ownerChunks(t, s, channelOwner("chat", "c2")); n != 1 {
		t.Fatalf("%d windows in #help", n)
	}
}

// testWatermark: a change made while a pass runs is taken in by the next
// pass; the watermark is the start of the last complete pass. Run keeps
// indexing until its context ends.
func testWatermark(t *testing.T, cl *weaviatetest.Cluster) {
	s := openNS(t, cl, "SemW")
	x := s.Semantic(stepped())
	if _, err := s.PutDocuments(semDocs); err != nil { // too few chunks to train on
		t.Fatal(err)
	}
	late := record.DocumentID(record.UploadsSourceID, "Late note")
	before := time.Now().UnixMicro()
	x.testHookPage = func() {
		x.testHookPage = nil
		if _, err := s.PutDocuments([]record.Document{{SourceID: record.UploadsSourceID, Title: "Late note", Content: "An axolotl arrived during the pass."}}); err != nil {
			t.Error(err)
		}
	}
	if worked, err := x.Step(context.Background()); err != nil || !worked {
		t.Fatalf("first step: %v %v", worked, err)
	}
	w, err := s.watermark(context.Background())
	if err != nil || w < before || w > time.Now().UnixMicro() {
		t.Fatalf("watermark %d, the pass started after %d: %v", w, before, err)
	}
	if n := ownerChunks(t, s, documentOwner(late)); n != 0 {
		t.Fatalf("the late note was indexed by the pass it arrived in: %d chunks", n)
	}
	x.statusAt = time.Time{}
	if st := x.Status(); st.Pending != 1 {
		t.Fatalf("pending after the first pass: %+v", st)
	}
	if worked, err := x.Step(context.Background()); err != nil || !worked {
		t.Fatalf("second step: %v %v", worked, err)
	}
	if n := ownerChunks(t, s, documentOwner(late)); n != 1 {
		t.Fatalf("the late note: %d chunks after the next pass", n)
	}
	// The overlap is read again, but what this process indexed is skipped.
	if worked, err := x.Step(context.Background()); err != nil || worked {
		t.Fatalf("third step: %v %v", worked, err)
	}
	// A new indexer (another process taking the lease over) reads the
	// overlap again and finds nothing to change.
	x2 := s.Semantic(stepped())
	if worked, err := x2.Step(context.Background()); err != nil || worked {
		t.Fatalf("a new indexer's first step: %v %v", worked, err)
	}
	if hits := search(t, x, semantic.Request{Query: "axolotl"}).Hits; len(hits) != 1 || hits[0].Title != "Late note" {
		t.Fatalf("late note: %q", titles(hits))
	}

	// Run indexes what is written while it runs, and returns when its
	// context ends.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); x.Run(ctx) }()
	if _, err := s.PutDocuments([]record.Document{{SourceID: record.UploadsSourceID, Title: "Run note", Content: "A narwhal surfaced."}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if hits := search(t, x, semantic.Request{Query: "narwhal"}).Hits; len(hits) > 0 && hits[0].Title == "Run note" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not index a new document")
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

// testEmbeddingsServer: with an embeddings server, its vectors; a chunk it
// refuses is searchable by its words; a failing server leaves searches to
// BM25 for a while. Batches go over gRPC.
func testEmbeddingsServer(t *testing.T, cl *weaviatetest.Cluster) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Refuse("POISON")
	remote := embed.NewOpenAI(srv.URL, "", "fake-embed")
	remote.Client().Backoff = time.Millisecond
	s := openNS(t, cl, "SemO", true)
	x := s.Semantic(SemanticOptions{FreshWait: -1, Embedder: remote})
	defer x.emb.Close()
	if _, err := s.PutDocuments(append([]record.Document{{SourceID: record.UploadsSourceID, Title: "Poison", Content: "POISON pill text that the model refuses"}}, semDocs...)); err != nil {
		t.Fatal(err)
	}
	settle(t, x)
	x.statusAt = time.Time{}
	st := x.Status()
	if st.Embedder != remote.Name() || st.Chunks != 5 || st.Vectors != 4 || st.Skipped != 1 || st.Pending != 0 || st.Error != "" {
		t.Fatalf("status %+v", st)
	}
	if len(srv.Received()) == 0 {
		t.Fatal("the server embedded nothing")
	}
	r := search(t, x, semantic.Request{Query: "connection pool", Limit: 3})
	if !r.Vectors || r.Hits[0].Title != "Postgres backend" {
		t.Fatalf("%v %q", r.Vectors, titles(r.Hits))
	}
	if r := search(t, x, semantic.Request{Query: "poison pill", Limit: 3}); !slices.ContainsFunc(r.Hits, func(h semantic.Hit) bool { return h.Title == "Poison" }) {
		t.Fatalf("the refused chunk: %q", titles(r.Hits))
	}
	// The indexer does not ask again for what the server refused.
	n := len(srv.Received())
	if worked, err := x.Step(context.Background()); err != nil || worked || len(srv.Received()) != n {
		t.Fatalf("idle step: %v %v, %d requests", worked, err, len(srv.Received())-n)
	}
	// A section added in the middle of a document: only it is embedded;
	// the passage it moved keeps its vector.
	inputs := func() (n int) {
		for _, r := range srv.Received() {
			n += len(r.Input)
		}
		return n
	}
	guide := record.Document{SourceID: record.UploadsSourceID, Title: "Guide", Content: "# Guide\n\n## Alpha\n\nalpha text.\n\n## Beta\n\nbeta text."}
	if _, err := s.PutDocuments([]record.Document{guide}); err != nil {
		t.Fatal(err)
	}
	settle(t, x)
	before := inputs()
	guide.Content = "# Guide\n\n## Alpha\n\nalpha text.\n\n## Zeta\n\nzeta text.\n\n## Beta\n\nbeta text."
	if _, err := s.PutDocuments([]record.Document{guide}); err != nil {
		t.Fatal(err)
	}
	settle(t, x)
	if got := inputs() - before; got != 1 {
		t.Fatalf("%d texts embedded for one new section", got)
	}
	if hits := search(t, x, semantic.Request{Query: "beta text", Limit: 1}).Hits; len(hits) != 1 || hits[0].Title != "Guide — Beta" || hits[0].Content != "## Beta\n\nbeta text." {
		t.Fatalf("the moved passage: %+v", hits)
	}
	srv.Fail(500, 500, 500, 500)
	for i := range 3 {
		r := search(t, x, semantic.Request{Query: "connection pool", Limit: 3})
		if r.Vectors || len(r.Hits) == 0 || r.Hits[0].Title != "Postgres backend" {
			t.Fatalf("search %d with the server failing: %v %q", i, r.Vectors, titles(r.Hits))
		}
	}
	// An indexer error is reported by every process.
	srv.Fail(500, 500, 500, 500, 500, 500, 500, 500)
	if _, err := s.PutDocuments([]record.Document{{SourceID: record.UploadsSourceID, Title: "New", Content: "a new note about retries"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Step(context.Background()); err == nil {
		t.Fatal("a step with the server failing succeeded")
	}
	other := s.Semantic(SemanticOptions{FreshWait: -1, Embedder: remote})
	if st := other.Status(); st.Error == "" || st.Pending == 0 {
		t.Fatalf("status while the server fails: %+v", st)
	}
	settle(t, x)
	other.statusAt = time.Time{}
	if st := other.Status(); st.Error != "" || st.Pending != 0 || st.Vectors != 5+3 {
		t.Fatalf("status once it works: %+v", st)
	}
}

// BenchmarkSemantic indexes n one-message windows (reporting chunks a
// second: chunked and written, then embedded again by the model trained on
// them) and then searches them, HyDE by feedback, right after the writes
// (Weaviate answers faster once its memtables are flushed, a minute later).
func BenchmarkSemantic(b *testing.B) {
	cl := weaviatetest.Start(b, 1)
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprint("chunks=", n), func(b *testing.B) {
			s, err := Open(context.Background(), Options{URL: cl.Nodes[0].URL(), Namespace: fmt.Sprint("SemBench", n)})
			if err != nil {
				b.Fatal(err)
			}
			x := s.Semantic(stepped())
			corpusStart(b, s)
			msgs := corpusMessages(0, n)
			for start := 0; start < len(msgs); start += 500 {
				if _, err := s.PutMessages(msgs[start:min(start+500, len(msgs))]); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			start := time.Now()
			for {
				worked, err := x.followChanges(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if !worked {
					break
				}
			}
			chunked := time.Since(start)
			time.Sleep(time.Second) // writes pause: the training is due
			if ok, err := x.trainIfDue(ctx); err != nil || !ok {
				b.Fatalf("training: %v %v", ok, err)
			}
			start = time.Now()
			for {
				worked, err := x.reembed(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if !worked {
					break
				}
			}
			embedded := time.Since(start)
			qs := []string{"database ran out", "clocks move back and the job runs twice", "verifyWrenSignature", "upgrade fixed the double run"}
			for i := 0; b.Loop(); i++ {
				if _, err := x.Search(ctx, semantic.Request{Query: qs[i%len(qs)], Limit: 10, HyDE: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/chunked.Seconds(), "chunked/s")
			b.ReportMetric(float64(n)/embedded.Seconds(), "embedded/s")
		})
	}
}
