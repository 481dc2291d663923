package semantic

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

// privSeed adds a public Slack source with a DM, their threads, a private
// upload source, and a document in each source (as engine's tests do).
func privSeed(t testing.TB, e testEngine) {
	t.Helper()
	for _, s := range []Source{
		{ID: "s", Name: "S", Type: "slack", Enabled: true},
		{ID: "p", Name: "P", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate},
	} {
		if _, err := e.PutSource(s); err != nil {
			t.Fatal(err)
		}
	}
	chans := []Channel{
		{SourceID: "s", ID: "pub", Name: "general"},
		{SourceID: "s", ID: "dm", Name: "dm-ana", Private: true},
		{SourceID: "s", ID: "pubthread", Name: "pub thread", ParentID: "pub", Kind: "thread"},
		{SourceID: "s", ID: "dmthread", Name: "dm thread", ParentID: "dm", Kind: "thread"},
		{SourceID: "p", ID: "room", Name: "room"},
	}
	if _, err := e.PutChannels(chans); err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	for i, c := range chans {
		msgs = append(msgs, Message{SourceID: c.SourceID, ChannelID: c.ID, ID: fmt.Sprint("m", i), Author: []string{"ana", "bo"}[i%2],
			Content: "marker" + c.ID + " shared words about deployment", Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutDocuments([]Document{
		{SourceID: "s", Key: "a.md", Title: "Public doc", Content: "markerpubdoc shared words about deployment"},
		{SourceID: "p", Key: "b.md", Title: "Private doc", Content: "markerprivdoc shared words about deployment"},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestSemanticSearchHidesPrivate(t *testing.T) {
	e := openMem(t)
	privSeed(t, e)
	waitSem(t, e)
	seen := func(private bool) map[string]bool {
		out := map[string]bool{}
		for _, h := range semSearch(t, e, Request{Query: "shared words about deployment", Limit: 20, Private: private}) {
			out[h.Title+h.Channel] = true
			if !private && (h.Channel == "dm-ana" || h.Channel == "dm thread" || h.Channel == "room" || h.Title == "Private doc") {
				t.Errorf("public semantic search found %+v", h)
			}
		}
		return out
	}
	if pub, all := seen(false), seen(true); len(pub) == 0 || len(all) <= len(pub) {
		t.Errorf("public %v, all %v", pub, all)
	}
}

// TestVisibilityFollowsTheStore: a source made private is hidden from
// public semantic search at once — before the indexer has taken the change
// in — and after it; made public again, it is found again.
func TestVisibilityFollowsTheStore(t *testing.T) {
	e := openMem(t)
	privSeed(t, e)
	waitSem(t, e)
	public := func() map[string]bool {
		out := map[string]bool{}
		for _, h := range semSearch(t, e, Request{Query: "shared words about deployment", Limit: 20}) {
			out[h.Title+h.Channel] = true
		}
		return out
	}
	if !public()["Public doc"] {
		t.Fatal("public document not found")
	}
	e.stepMu.Lock() // the indexer cannot take the change in meanwhile
	if _, err := e.UpdateSource("s", func(s *Source) error { s.Visibility = record.VisibilityPrivate; return nil }); err != nil {
		e.stepMu.Unlock()
		t.Fatal(err)
	}
	before := public()
	e.stepMu.Unlock()
	if len(before) != 0 {
		t.Errorf("before the indexer took the change in, public search found %v", before)
	}
	waitSem(t, e)
	if got := public(); len(got) != 0 {
		t.Errorf("after, public search found %v", got)
	}
	e.mu.RLock()
	hidden := e.st.hidden.GetCardinality()
	e.mu.RUnlock()
	if hidden == 0 {
		t.Error("the index's hidden set did not follow")
	}
	if _, err := e.UpdateSource("s", func(s *Source) error { s.Visibility = record.VisibilityPublic; return nil }); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	if got := public(); !got["Public doc"] || !got["Public docgeneral"] && !got["general — 2026-03-01general"] && len(got) < 2 {
		t.Errorf("made public again: %v", got)
	}
}

// TestGoldenSnapshots: semantic search works over a store restored from a
// snapshot of every format version, whether the snapshot held the index
// (its section) or the indexer built it from the records.
func TestGoldenSnapshots(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "engine", "testdata", "golden-v*.sift"))
	if len(files) < 4 {
		t.Fatalf("golden snapshots: %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			dir := t.TempDir()
			if _, _, _, err := engine.Restore(dir, path); err != nil {
				t.Fatal(err)
			}
			e := openDir(t, dir)
			defer e.Close()
			waitSem(t, e)
			if hits := semSearch(t, e, Request{Query: "alpha beta gamma1"}); len(hits) == 0 {
				t.Error("no semantic results")
			}
		})
	}
}

// TestSectionSurvivesRestart: the index read back from a snapshot is the
// one written — chunks, chunk index, vectors — and InspectSnapshot, given
// an index, validates the section and leaves it there to count.
func TestSectionSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	e.PutDocuments(semDocs)
	seed(t, e, "ana: the pool is full", "bo: raise max_open_conns")
	waitSem(t, e)
	want := e.Status()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(e.LastSnapshot().Path)
	if err != nil {
		t.Fatal(err)
	}
	x := New(Options{})
	sum, err := engine.InspectSnapshot(bytes.NewReader(b), x)
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Status(); sum.Documents != len(semDocs) || got.Chunks != want.Chunks || got.Vectors != want.Vectors || got.Chunks == 0 || got.Vectors == 0 {
		t.Fatalf("inspected %+v / %+v, want %+v", sum, got, want)
	}
	e = openDir(t, dir)
	defer e.Close()
	if !e.indexer.idle() {
		t.Fatal("a restart left semantic work to do")
	}
	if got := e.Status(); got.Chunks != want.Chunks || got.Vectors != want.Vectors || got.Embedder != want.Embedder {
		t.Fatalf("after restart %+v, want %+v", got, want)
	}
}

// FuzzReadSection: a section's payloads, one replaced by the input, are
// refused or read; never a panic, and what is read writes back.
func FuzzReadSection(f *testing.F) {
	e := open(f, "")
	defer e.Close()
	e.PutDocuments(semDocs)
	seed(f, e, "ana: one", "bo: two", "cy: three")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.Wait(ctx)
	cancel()
	payloads := sectionOf(f, e)
	for i, p := range payloads {
		f.Add(uint16(i), p)
	}
	f.Fuzz(func(t *testing.T, which uint16, payload []byte) {
		ps := append([][]byte(nil), payloads...)
		ps[int(which)%len(ps)] = payload
		x, err := readSection(e, ps)
		if err != nil {
			return
		}
		if err := x.WriteSection(e.Seq(), func([]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
}

// TestVisibilityWhileChunking: a change of visibility taken in (by a
// search) while a document's chunks are being made still applies to them.
func TestVisibilityWhileChunking(t *testing.T) {
	e := openMem(t)
	if _, err := e.PutSource(Source{ID: "s", Name: "S", Type: "upload", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testHookChunked = nil })
	testHookChunked = func() {
		testHookChunked = nil
		if _, err := e.UpdateSource("s", func(s *Source) error { s.Visibility = record.VisibilityPrivate; return nil }); err != nil {
			t.Error(err)
		}
		e.indexer.takeChanges() // what a search does meanwhile
	}
	if _, err := e.PutDocuments([]Document{{SourceID: "s", Key: "a.md", Title: "Doc", Content: "zorbax words about deployment"}}); err != nil {
		t.Fatal(err)
	}
	waitSem(t, e)
	e.mu.RLock()
	chunks, hidden := e.st.chunkIdx.Len(), int(e.st.hidden.GetCardinality())
	e.mu.RUnlock()
	if chunks == 0 || hidden != chunks {
		t.Fatalf("%d chunks, %d hidden: the document's new chunks missed the change", chunks, hidden)
	}
	if hits := semSearch(t, e, Request{Query: "zorbax deployment"}); len(hits) != 0 {
		t.Fatalf("public search found %+v", hits)
	}
}

// TestSearchesBesideWrites: searches, writes and changes of visibility run
// together without blocking one another for good (a lock-order inversion
// once hung all three within seconds).
func TestSearchesBesideWrites(t *testing.T) {
	e := openMem(t)
	privSeed(t, e)
	waitSem(t, e)
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					e.SemanticSearch(context.Background(), Request{Query: fmt.Sprint("shared words ", g, i), Limit: 5})
				}
			}()
		}
		for i := range 300 {
			e.PutMessages([]Message{{SourceID: "s", ChannelID: "pub", ID: fmt.Sprint("w", i), Author: "ana", Content: "more shared words", Timestamp: t0}})
			if i%20 == 0 {
				vis := []string{record.VisibilityPrivate, record.VisibilityPublic}[i/20%2]
				e.UpdateSource("s", func(s *Source) error { s.Visibility = vis; return nil })
			}
		}
		close(stop)
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("searches and writes blocked one another")
	}
}
