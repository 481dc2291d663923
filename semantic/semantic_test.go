package semantic

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/semantic/chunk"
	"github.com/sift-search/sift/semantic/fusion"
)

var semDocs = []Document{
	{Title: "Cron syntax", Content: "# Cron syntax\n\nA schedule has six fields, seconds first.\n\n## Daylight saving time\n\nWhen clocks move forward an hour, a run scheduled inside the missing hour is skipped. When clocks move back, Wren runs it once, not twice. Set tz on every schedule."},
	{Title: "Postgres backend", Content: "# Postgres backend\n\nSize the connection pool: max_open_conns of every node must stay below the server's max_connections. PgBouncer in transaction mode helps when many nodes connect."},
	{Title: "Webhooks", Content: "# Webhooks\n\nEvery delivery carries an HMAC-SHA256 signature of the raw body in X-Wren-Signature. Verify it before parsing JSON: a proxy that re-serialises the body breaks the signature. Call verifyWrenSignature from the SDK."},
}

// semEngine returns an engine with the documents above and a chat channel,
// its semantic index caught up.
func semEngine(t *testing.T, mod ...func(*Options)) testEngine {
	t.Helper()
	e := openMem(t, mod...)
	if _, err := e.PutDocuments(semDocs); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for i := 0; i < 30; i++ {
		msgs = append(msgs, fmt.Sprintf("u%d: filler chatter about lunch and the weather number %d", i%4, i))
	}
	seed(t, e, msgs...)
	var conv []Message
	for i, text := range []string{
		"our nightly export ran two times on Sunday morning",
		"that was the autumn clock change, upgrade to 2.0.1",
		"thanks, upgrading fixed the double run",
	} {
		conv = append(conv, Message{SourceID: "chat", ChannelID: "c2", ID: fmt.Sprint("conv", i), Author: []string{"ana", "bo"}[i%2],
			Content: text, Timestamp: t0.Add(100*time.Hour + time.Duration(i)*time.Minute)})
	}
	if _, err := e.PutMessages(conv); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	return e
}

func waitSem(t testing.TB, e testEngine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func semSearch(t testing.TB, e testEngine, req Request) []Hit {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = 10
	}
	r, err := e.SemanticSearch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return r.Hits
}

func TestSemanticSearch(t *testing.T) {
	e := semEngine(t)
	hits := semSearch(t, e, Request{Query: "clocks move back and the job runs twice", HyDE: true})
	if len(hits) == 0 || hits[0].Type != "document" || !strings.Contains(hits[0].Title, "Daylight saving") {
		t.Fatalf("top hit: %+v", hits)
	}
	for i, h := range hits {
		if h.Score < 0 || h.Score > 1 || (i > 0 && h.Score > hits[i-1].Score) {
			t.Fatalf("scores out of [0,1] or order: %+v", hits)
		}
	}
	// A paraphrase with no word of the window still finds the chat
	// conversation (the embedder relates "clock change" and "double run").
	var chat *Hit
	for i := range hits {
		if hits[i].Type == "message" {
			chat = &hits[i]
			break
		}
	}
	if chat == nil || chat.Content != "ana: our nightly export ran two times on Sunday morning\nbo: that was the autumn clock change, upgrade to 2.0.1\nana: thanks, upgrading fixed the double run" ||
		chat.ChannelSlug != "help" || chat.MessageID != "conv0" || chat.Title != "help — 2026-03-05" || chat.Source != "Acme Chat" {
		t.Fatalf("chat window: %+v", chat)
	}
	// Exact identifiers rank first.
	hits = semSearch(t, e, Request{Query: "verifyWrenSignature", HyDE: true})
	if len(hits) == 0 || hits[0].Title != "Webhooks" {
		t.Fatalf("identifier: %+v", hits)
	}
	// Content is cut on a word boundary; its length stays the whole chunk's.
	hits = semSearch(t, e, Request{Query: "postgres connection pool", MaxChars: 40})
	h := hits[0]
	if !h.Truncated || utf8.RuneCountInString(h.Content) > 40 || h.ContentLength <= 40 || strings.HasSuffix(h.Content, " ") ||
		!strings.HasPrefix(semDocs[1].Content, h.Content) {
		t.Fatalf("cut: %+v", h)
	}
	if hits := semSearch(t, e, Request{Query: "postgres connection pool", MaxChars: 100000}); hits[0].Truncated || utf8.RuneCountInString(hits[0].Content) != hits[0].ContentLength {
		t.Fatalf("uncut: %+v", hits[0])
	}
	// Limit, boost and source filter.
	if hits := semSearch(t, e, Request{Query: "schedule", Limit: 2}); len(hits) != 2 {
		t.Fatalf("limit 2: %d", len(hits))
	}
	plain := semSearch(t, e, Request{Query: "upgrade fixed the double run"})
	boosted := semSearch(t, e, Request{Query: "upgrade fixed the double run", Boost: map[string]float64{UploadsSourceID: 10}})
	if boosted[0].SourceID != UploadsSourceID || boosted[0].Score <= 1 || plain[0].SourceID == boosted[0].SourceID && plain[0].Score == boosted[0].Score {
		t.Fatalf("boost: plain %+v boosted %+v", plain[0], boosted[0])
	}
	for _, h := range semSearch(t, e, Request{Query: "upgrade", Sources: []string{"chat"}}) {
		if h.SourceID != "chat" {
			t.Fatalf("source filter let through %+v", h)
		}
	}
	if _, err := e.SemanticSearch(context.Background(), Request{Query: "  "}); err == nil {
		t.Fatal("empty query accepted")
	}
}

func TestSemanticDeletesLeaveNoTrace(t *testing.T) {
	e := semEngine(t)
	if err := e.DeleteDocument(DocumentID(UploadsSourceID, "Webhooks")); err != nil {
		t.Fatal(err)
	}
	// At once, before the indexer has run.
	for _, h := range semSearch(t, e, Request{Query: "HMAC signature of the raw body", HyDE: true}) {
		if strings.Contains(h.Content, "HMAC") {
			t.Fatalf("deleted document found: %+v", h)
		}
	}
	if err := e.DeleteSource("chat"); err != nil {
		t.Fatal(err)
	}
	for _, h := range semSearch(t, e, Request{Query: "autumn clock change double run"}) {
		if h.Type == "message" {
			t.Fatalf("deleted source's window found: %+v", h)
		}
	}
	waitSem(t, e)
	e.mu.RLock()
	defer e.mu.RUnlock()
	for i, c := range e.st.chunks {
		if c.kind != chunkNone && !e.live(&c) {
			t.Errorf("chunk %d of deleted content not removed", i)
		}
		if e.st.space.vector(uint32(i)) != nil && c.kind == chunkNone {
			t.Errorf("vector of deleted chunk %d kept", i)
		}
	}
}

func TestConversationWindows(t *testing.T) {
	e := openMem(t)
	seed(t, e)
	put := func(id string, at time.Time, text string) {
		if _, err := e.PutMessages([]Message{{SourceID: "chat", ChannelID: "c1", ID: id, Author: "a", Content: text, Timestamp: at}}); err != nil {
			t.Fatal(err)
		}
	}
	windows := func() [][]string {
		waitSem(t, e)
		e.mu.RLock()
		defer e.mu.RUnlock()
		var out [][]string
		e.Engine.Read(func(v follow.View) {
			var n uint32
			for r := range v.Channels() {
				if c := v.Channel(r); c != nil && c.SourceID == "chat" && c.ID == "c1" {
					n = r
				}
			}
			for _, c := range e.st.chanChunks[n] {
				var ids []string
				for _, m := range e.st.chunks[c].msgs {
					ids = append(ids, v.Message(m).ID)
				}
				out = append(out, ids)
			}
		})
		return out
	}
	base := t0
	put("1", base, "first")
	put("2", base.Add(time.Minute), "reply")
	put("3", base.Add(2*time.Hour), "after a long silence")
	if got := fmt.Sprint(windows()); got != "[[1 2] [3]]" {
		t.Fatalf("windows %s", got)
	}
	put("0", base.Add(-time.Minute), "backfilled before the first")
	put("4", base.Add(2*time.Hour+time.Minute), "continues the second")
	if got := fmt.Sprint(windows()); got != "[[0 1 2] [3 4]]" {
		t.Fatalf("after backfill and append: %s", got)
	}
	for i := 0; i < chunk.WindowMaxMsgs+5; i++ {
		put(fmt.Sprint("b", i), base.Add(3*time.Hour+time.Duration(i)*time.Second), "burst")
	}
	w := windows()
	if len(w) != 4 || len(w[2]) != chunk.WindowMaxMsgs+2 && len(w[2]) != chunk.WindowMaxMsgs {
		t.Fatalf("a long burst is split: %d windows, %v", len(w), w)
	}
	if _, err := e.DeleteMessages("chat", []string{"3", "4"}); err != nil {
		t.Fatal(err)
	}
	if got := windows(); fmt.Sprint(got[0]) != "[0 1 2]" || len(got) != 3 {
		t.Fatalf("after deleting a window's messages: %v", got)
	}
}

func TestSemanticVectorsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	e.PutDocuments(semDocs)
	var msgs []string
	for i := 0; i < 80; i++ {
		msgs = append(msgs, fmt.Sprintf("u%d: message %d about pools, schedules and webhooks", i%5, i))
	}
	seed(t, e, msgs...)
	waitSem(t, e)
	e.mu.RLock()
	name := e.st.space.name
	want := map[uint32][]float32{}
	e.st.space.vecs.Each(func(id uint32, v []float32) bool { want[id] = slices.Clone(v); return true })
	e.mu.RUnlock()
	if !strings.HasPrefix(name, "builtin-ri1-") || strings.Contains(name, "untrained") || len(want) == 0 {
		t.Fatalf("space %q with %d vectors", name, len(want))
	}
	e.Close()
	e = openDir(t, dir)
	defer e.Close()
	if !e.indexer.idle() {
		t.Fatal("a restart left semantic work to do (re-embedding?)")
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.st.space.name != name || e.st.space.vecs.Len() != len(want) {
		t.Fatalf("space %q, %d vectors", e.st.space.name, e.st.space.vecs.Len())
	}
	for id, v := range want {
		got := e.st.space.vecs.Vector(id)
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Fatalf("vector %d not bit-identical after restart", id)
			}
		}
	}
}

// TestCorruptVectorsDetected damages the vectors of the index's section: a
// vector that is not finite fails validation (a changed byte fails the
// store's frame checksum: engine.TestInspectSnapshot). Loading must fail
// rather than serve wrong vectors.
func TestCorruptVectorsDetected(t *testing.T) {
	e := semEngine(t)
	payloads := sectionOf(t, e)
	read := func(ps [][]byte) error {
		_, err := readSection(e, ps)
		return err
	}
	if err := read(payloads); err != nil {
		t.Fatalf("intact: %v", err)
	}
	// The vectors are the last payloads: the index header, then blocks.
	// The last four bytes of the last block are a component: make it NaN.
	last := bytes.Clone(payloads[len(payloads)-1])
	binary.LittleEndian.PutUint32(last[len(last)-4:], math.Float32bits(float32(math.NaN())))
	nan := append(slices.Clone(payloads[:len(payloads)-1]), last)
	if err := read(nan); err == nil || !strings.Contains(err.Error(), "finite") {
		t.Fatalf("NaN component: %v", err)
	}
	if err := read(payloads[:len(payloads)-1]); err == nil {
		t.Fatal("a section cut short passed")
	}
}

// sectionOf returns the payloads of e's section as a snapshot writes them.
func sectionOf(t testing.TB, e testEngine) [][]byte {
	t.Helper()
	var out [][]byte
	err := e.Index.WriteSection(e.Seq(), func(b []byte) error { out = append(out, bytes.Clone(b)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readSection reads payloads as a snapshot of e's records would hand them
// to a new index, which it returns once committed.
func readSection(e testEngine, payloads [][]byte) (*Index, error) {
	x := New(Options{})
	var commit func()
	var err error
	e.Engine.Read(func(v follow.View) {
		i := 0
		commit, err = x.ReadSection(e.Seq(), v, func() ([]byte, error) {
			if i == len(payloads) {
				return nil, errors.New("section ends early")
			}
			i++
			return payloads[i-1], nil
		})
		if err == nil && i != len(payloads) {
			err = fmt.Errorf("%d of %d payloads read", i, len(payloads))
		}
	})
	if err != nil {
		return nil, err
	}
	commit()
	return x, nil
}

func TestEmbedderChangeReembedsInBackground(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	dir := t.TempDir()
	e := openDir(t, dir)
	e.PutDocuments(semDocs)
	waitSem(t, e)
	e.Close()

	remote := embed.NewOpenAI(srv.URL, "", "fake-embed")
	remote.Client().Backoff = time.Millisecond
	// Held from before the start: a small corpus would otherwise be
	// re-embedded and swapped in before the search below.
	srv.Hold()
	e = openDir(t, dir, func(o *Options) { o.Embedder = remote })
	defer e.Close()
	// Search serves at once, with the old vectors, while the new ones fill.
	if r, err := e.SemanticSearch(context.Background(), Request{Query: "connection pool", Limit: 5}); err != nil || !r.Vectors || len(r.Hits) == 0 {
		t.Fatalf("while re-embedding: %v %+v", err, r)
	}
	srv.Release()
	waitSem(t, e)
	e.mu.RLock()
	name, n := e.st.space.name, e.st.space.vecs.Len()
	e.mu.RUnlock()
	if name != remote.Name() || n == 0 || len(srv.Received()) == 0 {
		t.Fatalf("space %q with %d vectors after %d requests", name, n, len(srv.Received()))
	}
	if hits := semSearch(t, e, Request{Query: "connection pool"}); len(hits) == 0 || hits[0].Title != "Postgres backend" {
		t.Fatalf("after the switch: %+v", hits)
	}
}

func TestHyDE(t *testing.T) {
	var calls atomic.Int32
	e := semEngine(t, func(o *Options) {
		o.Hypothesize = func(_ context.Context, q string) (string, error) {
			calls.Add(1)
			return "Set max_open_conns below max_connections and use PgBouncer.", nil
		}
	})
	for i := 0; i < 3; i++ {
		hits := semSearch(t, e, Request{Query: "my database keeps saying no", HyDE: true})
		if len(hits) == 0 || hits[0].Title != "Postgres backend" {
			t.Fatalf("with a hypothetical answer: %+v", hits)
		}
	}
	if calls.Load() != 1 || e.hyde.len() != 1 {
		t.Fatalf("%d model calls for three equal queries", calls.Load())
	}
	semSearch(t, e, Request{Query: "another question", HyDE: false})
	if calls.Load() != 1 {
		t.Fatal("HyDE off still asked the model")
	}
}

func TestHydeCacheIsBounded(t *testing.T) {
	c := newHydeCache(3)
	for i := 0; i < 10; i++ {
		c.put(fmt.Sprint(i), "a")
	}
	if c.len() != 3 {
		t.Fatalf("%d entries", c.len())
	}
	if _, ok := c.get("9"); !ok {
		t.Fatal("newest evicted")
	}
	if _, ok := c.get("0"); ok {
		t.Fatal("oldest kept")
	}
}

// TestVectorIndexBecomesIVF lowers the IVF threshold: the exact index
// becomes an IVF index, built while writes go on, and the IVF index is
// saved and loaded as is.
func TestVectorIndexBecomesIVF(t *testing.T) {
	old := ivfMin
	ivfMin = 64
	t.Cleanup(func() { ivfMin = old; testHookIVFBuild = nil })
	dir := t.TempDir()
	e := openDir(t, dir)
	docs := notes(120)
	docs = append(docs, semDocs...)
	if _, err := e.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	// Writers are not held back by the build.
	var deleted []string
	testHookIVFBuild = func() {
		testHookIVFBuild = nil
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 10; i++ {
				id := DocumentID(UploadsSourceID, fmt.Sprintf("Note %d", i))
				if err := e.DeleteDocument(id); err != nil {
					t.Error(err)
				}
				deleted = append(deleted, id)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("writes blocked by the IVF build")
		}
	}
	waitSem(t, e)
	if len(deleted) == 0 {
		t.Fatal("the IVF build did not run")
	}
	check := func(e testEngine) {
		t.Helper()
		e.mu.RLock()
		defer e.mu.RUnlock()
		x, ok := e.st.space.vecs.(*ann.IVF)
		if !ok {
			t.Fatalf("vectors in a %T", e.st.space.vecs)
		}
		live := 0
		for i, c := range e.st.chunks {
			has := x.Vector(uint32(i)) != nil
			if alive := c.kind != chunkNone && e.live(&c); alive != has {
				t.Errorf("chunk %d: live %v, vector %v", i, alive, has)
			} else if alive {
				live++
			}
		}
		if x.Len() != live || live != 114 {
			t.Errorf("%d vectors for %d live chunks, want 114 (110 notes, 4 passages)", x.Len(), live)
		}
	}
	check(e)
	if hits := semSearch(t, e, Request{Query: "HMAC signature of the raw body"}); len(hits) == 0 || hits[0].Title != "Webhooks" {
		t.Fatalf("search on IVF: %+v", hits)
	}
	e.Close()
	e = openDir(t, dir)
	defer e.Close()
	if !e.indexer.idle() {
		t.Fatal("the IVF index was not restored as is")
	}
	check(e)
}

// TestChunkIndexCompacted: chunks dropped by the indexer are compacted
// away like deleted messages, and semantic answers stay the same.
func TestChunkIndexCompacted(t *testing.T) {
	e := openMem(t)
	var docs []Document
	for i := 0; i < 1500; i++ {
		docs = append(docs, Document{Title: fmt.Sprintf("N%d", i), Content: fmt.Sprintf("note %d on topic%d", i, i%7)})
	}
	if _, err := e.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	for i := 0; i < 1200; i++ {
		if err := e.DeleteDocument(DocumentID(UploadsSourceID, fmt.Sprintf("N%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitSem(t, e) // the indexer compacts as part of catching up
	if e.st.chunkIdx.Dead() != 0 || e.st.chunkIdx.Len() != 300 {
		t.Fatalf("after compaction: %d dead, %d live", e.st.chunkIdx.Dead(), e.st.chunkIdx.Len())
	}
	// The answers are those of an index that only ever held the rest.
	f := openMem(t)
	if _, err := f.PutDocuments(docs[1200:]); err != nil {
		t.Fatal(err)
	}
	waitSem(t, f)
	req := Request{Query: "note on topic3", Limit: 20, Mode: fusion.ModeLexical}
	want, got := semSearch(t, f, req), semSearch(t, e, req)
	if len(want) == 0 || !slices.EqualFunc(want, got, func(a, b Hit) bool { return a.Title == b.Title && a.Score == b.Score }) {
		t.Fatalf("answers after compaction:\n%+v\nwant\n%+v", got, want)
	}
}

func TestHyDEFailurePausesAndAnswersAreBounded(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	e := semEngine(t, func(o *Options) {
		o.Hypothesize = func(_ context.Context, q string) (string, error) {
			calls.Add(1)
			if fail.Load() {
				return "", errors.New("model server down")
			}
			return strings.Repeat("pool é ", 2000), nil
		}
	})
	for _, q := range []string{"first question", "second question"} {
		if r, err := e.SemanticSearch(context.Background(), Request{Query: q, HyDE: true, Limit: 5}); err != nil || !r.Vectors {
			t.Fatalf("%q: %v (vectors %v)", q, err, r != nil && r.Vectors)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d model calls: a failure must pause HyDE", calls.Load())
	}
	e.hydeDown.until.Store(0)
	fail.Store(false)
	semSearch(t, e, Request{Query: "third question", HyDE: true})
	if h, ok := e.hyde.get("third question"); !ok || len(h) > hydeMaxBytes || !utf8.ValidString(h) {
		t.Fatalf("cached answer of %d bytes (ok %v)", len(h), ok)
	}
}

// remoteEngine opens an engine in dir whose embedder is the fake server.
func remoteEngine(t *testing.T, dir string, srv *fakeoai.Server) testEngine {
	t.Helper()
	remote := embed.NewOpenAI(srv.URL, "", "fake-embed")
	remote.Client().Backoff = time.Millisecond
	return openDir(t, dir, func(o *Options) { o.Embedder = remote })
}

func vectorDims(e testEngine) (int, int) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.st.space == nil || e.st.space.vecs == nil {
		return 0, 0
	}
	return e.st.space.vecs.Dims(), e.st.space.vecs.Len()
}

// TestEmbedderRefusesAChunk: a chunk the server refuses (too long for its
// model, say) is left without a vector; the others are embedded.
func TestEmbedderRefusesAChunk(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Refuse("POISON")
	e := remoteEngine(t, t.TempDir(), srv)
	defer e.Close()
	docs := append([]Document{{Title: "Poison", Content: "POISON pill text that the model refuses"}}, semDocs...)
	if _, err := e.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	st := e.Status()
	if e.skipped.Load() != 1 || st.Vectors != st.Chunks-1 || st.Pending != 0 || st.Error != "" {
		t.Fatalf("skipped %d, status %+v", e.skipped.Load(), st)
	}
	r, err := e.SemanticSearch(context.Background(), Request{Query: "poison pill", Limit: 3})
	if err != nil || !r.Vectors || !slices.ContainsFunc(r.Hits, func(h Hit) bool { return h.Title == "Poison" }) {
		t.Fatalf("%v %+v", err, r)
	}
}

// TestEmbedderChangesSize: when the server's model starts answering with
// vectors of another size, searches rank by words alone until everything
// is embedded again, and a restart with the new size does the same.
func TestEmbedderChangesSize(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	dir := t.TempDir()
	e := remoteEngine(t, dir, srv)
	if _, err := e.PutDocuments(semDocs); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	if d, _ := vectorDims(e); d != 8 {
		t.Fatalf("dims %d", d)
	}
	srv.SetDims(16)
	// The query's vector has the new size: words alone, no panic.
	r, err := e.SemanticSearch(context.Background(), Request{Query: "connection pool", Limit: 3})
	if err != nil || r.Vectors || len(r.Hits) == 0 {
		t.Fatalf("search across sizes: %v %+v", err, r)
	}
	if _, err := e.PutDocuments([]Document{{Title: "New", Content: "a new note about retries"}}); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	if d, n := vectorDims(e); d != 16 || n != e.Status().Chunks {
		t.Fatalf("after the change: %d vectors of %d dims", n, d)
	}
	if r, err := e.SemanticSearch(context.Background(), Request{Query: "connection pool", Limit: 3}); err != nil || !r.Vectors {
		t.Fatalf("after re-embedding: %v %+v", err, r)
	}
	e.Close()

	srv.SetDims(4)
	e = remoteEngine(t, dir, srv)
	defer e.Close()
	if err := e.opts.Embedder.(*embed.OpenAI).Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	if d, n := vectorDims(e); d != 4 || n != e.Status().Chunks {
		t.Fatalf("after a restart with another size: %d vectors of %d dims", n, d)
	}
}

// TestSemanticProgressIsSaved: vectors embedded after the last write are
// in the snapshot taken at Close, so a restart embeds nothing again.
func TestSemanticProgressIsSaved(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	dir := t.TempDir()
	e := remoteEngine(t, dir, srv)
	srv.Hold()
	if _, err := e.PutDocuments(semDocs); err != nil {
		t.Fatal(err)
	}
	if err := e.Snapshot(); err != nil { // the vectors are still being made
		t.Fatal(err)
	}
	srv.Release()
	waitSem(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Received())
	e = remoteEngine(t, dir, srv)
	defer e.Close()
	if !e.indexer.idle() {
		t.Fatal("the restart has semantic work to do")
	}
	if _, n := vectorDims(e); n != e.Status().Chunks || len(srv.Received()) != before {
		t.Fatalf("%d vectors for %d chunks; %d requests since restart", n, e.Status().Chunks, len(srv.Received())-before)
	}
}

// TestQueryEmbeddingFailurePauses: when the server fails a query's
// embedding, searches rank by words and leave the server alone a while.
func TestQueryEmbeddingFailurePauses(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	e := remoteEngine(t, t.TempDir(), srv)
	defer e.Close()
	e.PutDocuments(semDocs)
	waitSem(t, e)
	srv.Fail(500, 500, 500, 500)
	for i := 0; i < 3; i++ {
		r, err := e.SemanticSearch(context.Background(), Request{Query: "connection pool", Limit: 3})
		if err != nil || r.Vectors || len(r.Hits) == 0 || r.Hits[0].Title != "Postgres backend" {
			t.Fatalf("search %d: %v %+v", i, err, r)
		}
	}
	calls := 0
	for _, r := range srv.Received() {
		if len(r.Input) == 1 && r.Input[0] == "connection pool" {
			calls++
		}
	}
	if calls != 4 { // one search: the first attempt and three retries
		t.Fatalf("%d embedding requests for the query", calls)
	}
}

// TestOneResultPerSection: the overlapping chunks of a long section are one
// result covering them, other sections of the document are results of
// their own, and a heading alone is never one.
func TestOneResultPerSection(t *testing.T) {
	e := openMem(t)
	var long strings.Builder
	long.WriteString("# Guide\n\n## Pool sizing\n\nThe zanzibar pool holds connections.")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&long, " Filler sentence %d about nothing in particular.", i)
	}
	long.WriteString(" The zanzibar limit is twenty.\n\n## Other\n\nA zanzibar note in another section.\n\n## Empty\n")
	if _, err := e.PutDocuments([]Document{{Title: "Guide", Content: long.String()}, {Title: "Bare", Content: "# Zanzibar\n"}}); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	e.mu.RLock()
	n := len(e.st.chunks)
	e.mu.RUnlock()
	if n < 4 {
		t.Fatalf("%d chunks: the section is not cut", n)
	}
	hits := semSearch(t, e, Request{Query: "zanzibar pool limit", MaxChars: 100000})
	var sections []string
	for _, h := range hits {
		if strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(h.Content), "#")) == "Zanzibar" {
			t.Errorf("a heading alone is a result: %+v", h)
		}
		sections = append(sections, h.Title)
		if h.Title == "Guide — Pool sizing" && (!strings.Contains(h.Content, "zanzibar pool holds") || !strings.Contains(h.Content, "zanzibar limit is twenty")) {
			t.Errorf("the section's chunks are not merged: %q", h.Content)
		}
	}
	slices.Sort(sections)
	if !slices.Equal(sections, []string{"Guide — Other", "Guide — Pool sizing"}) {
		t.Errorf("results %q, want one per section", sections)
	}
}
