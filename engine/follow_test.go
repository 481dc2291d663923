package engine

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// testFollower is the smallest follower: it takes in the change feed and
// keeps what it saw — the changes, in order — as its section. The engine's
// side of the seam (feed, sections, snapshots) is tested with it; the
// semantic index's own tests use the real follower.
type testFollower struct {
	e *Engine

	mu      sync.Mutex
	pos     uint64
	seen    []Change
	loaded  uint64 // the sequence number of the section read, if one was
	edits   atomic.Uint64
	stopped atomic.Bool
}

func withFollower(f *testFollower) func(*Options) { return func(o *Options) { o.Follower = f } }

func (f *testFollower) Section() string { return "test" }
func (f *testFollower) Edits() uint64   { return f.edits.Load() }
func (f *testFollower) Stop()           { f.stopped.Store(true) }
func (f *testFollower) Changed()        {}

// take takes in the feed.
func (f *testFollower) take() []Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.takeLocked()
}

func (f *testFollower) takeLocked() []Change {
	if f.e == nil {
		return nil
	}
	got := f.e.Changes(f.pos, nil)
	if len(got) > 0 {
		f.pos = got[len(got)-1].Seq
		f.seen = append(f.seen, got...)
	}
	return got
}

func (f *testFollower) WriteSection(seq uint64, put func([]byte) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.takeLocked()
	if f.pos > seq {
		return fmt.Errorf("feed at %d past the snapshot's %d", f.pos, seq)
	}
	var e bin.Enc
	e.U64(seq)
	e.Uvarint(uint64(len(f.seen)))
	if err := put(e.B); err != nil {
		return err
	}
	e.B = e.B[:0]
	for _, c := range f.seen {
		e.U64(c.Seq)
		e.U8(uint8(c.Kind))
		e.Uvarint(uint64(c.Ref))
	}
	return put(e.B)
}

func (f *testFollower) ReadSection(seq uint64, v follow.View, next func() ([]byte, error)) (func(), error) {
	p, err := next()
	if err != nil {
		return nil, err
	}
	d := &bin.Dec{B: p}
	at, n := d.U64(), d.Uvarint()
	if err := d.Done(); err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("%d changes", n)
	}
	if at != seq {
		return nil, fmt.Errorf("section of %d in a snapshot of %d", at, seq)
	}
	if p, err = next(); err != nil {
		return nil, err
	}
	d = &bin.Dec{B: p}
	var seen []Change
	for range n {
		c := Change{Seq: d.U64(), Kind: ChangeKind(d.U8()), Ref: uint32(d.Uvarint())}
		limit := v.Documents()
		if c.Kind == ChannelChanged || c.Kind == ChannelShown {
			limit = v.Channels()
		}
		if d.Err == nil && (c.Seq > seq || c.Ref >= limit || c.Kind < DocumentChanged || c.Kind > ChannelShown) {
			return nil, fmt.Errorf("change %+v out of range", c)
		}
		seen = append(seen, c)
	}
	if err := d.Done(); err != nil {
		return nil, err
	}
	return func() {
		f.mu.Lock()
		f.seen, f.pos, f.loaded = seen, seq, seq
		f.mu.Unlock()
	}, nil
}

func kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%d:%d", c.Kind, c.Ref))
	}
	return out
}

// TestChangeFeed: every write that changes a document or a channel's
// messages or their visibility is in the feed, numbered by its write, in
// order, coalesced per record; asking after N forgets what is up to N.
func TestChangeFeed(t *testing.T) {
	tf := &testFollower{}
	e := openMem(t, withFollower(tf))
	seed(t, e, "ana: one", "bo: two")
	got := tf.take()
	if len(got) == 0 || got[len(got)-1].Seq != e.Seq() {
		t.Fatalf("feed after seeding: %+v (seq %d)", got, e.Seq())
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq < got[i-1].Seq {
			t.Fatalf("feed out of order: %+v", got)
		}
	}
	// One channel's bulk write is one entry, not one per message.
	ch, _ := e.ChannelByID("chat", "c1")
	var msgs []record.Message
	for i := range 500 {
		msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: "c1", ID: fmt.Sprint("bulk", i), Author: "cy", Content: "bulk", Timestamp: t0})
	}
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	got = tf.take()
	if len(got) != 1 || got[0].Kind != ChannelChanged || got[0].Seq != e.Seq() {
		t.Fatalf("bulk write: %v", got)
	}
	var ref uint32
	e.Read(func(v follow.View) {
		for r := range v.Channels() {
			if c := v.Channel(r); c != nil && c.ID == ch.ID {
				ref = r
			}
		}
	})
	if got[0].Ref != ref {
		t.Fatalf("bulk write changed channel %d, want %d", got[0].Ref, ref)
	}
	// Documents: a new one, its update (old record gone, new one), its deletion.
	docs, err := e.PutDocuments([]record.Document{{ID: "d1", Title: "T", Content: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	e.PutDocuments([]record.Document{{ID: "d1", Title: "T", Content: "y"}})
	e.DeleteDocument(docs[0].ID)
	got = tf.take()
	// Changes of one record by consecutive writes stay apart, each at its
	// write: the later write's, held back while it is applied, must not
	// hold the earlier, acknowledged one back with it.
	if want := []string{"1:0", "1:0", "1:1", "1:1"}; !slices.Equal(kinds(got), want) ||
		got[0].Seq != e.Seq()-2 || got[1].Seq != e.Seq()-1 || got[2].Seq != e.Seq()-1 || got[3].Seq != e.Seq() {
		t.Fatalf("document changes %+v, want %v", got, want)
	}
	// Visibility: a source made private hides its channels and documents.
	e.PutDocuments([]record.Document{{ID: "d2", SourceID: "chat", Title: "T", Content: "z"}})
	tf.take()
	if _, err := e.UpdateSource("chat", func(s *record.Source) error { s.Visibility = record.VisibilityPrivate; return nil }); err != nil {
		t.Fatal(err)
	}
	got = tf.take()
	var shown []ChangeKind
	for _, c := range got {
		shown = append(shown, c.Kind)
	}
	if !slices.Contains(shown, ChannelShown) || !slices.Contains(shown, DocumentShown) {
		t.Fatalf("visibility change: %v", kinds(got))
	}
	e.Read(func(v follow.View) {
		for _, c := range got {
			if c.Kind == ChannelShown && !v.ChannelHidden(c.Ref) || c.Kind == DocumentShown && !v.DocumentHidden(c.Ref) {
				t.Errorf("change %+v: not hidden", c)
			}
		}
	})
	// Acknowledged changes are forgotten; nothing is repeated.
	if again := e.Changes(e.Seq(), nil); len(again) != 0 {
		t.Fatalf("after acknowledging everything: %v", again)
	}
}

// TestFeedWithoutFollower: without a follower the store records nothing.
func TestFeedWithoutFollower(t *testing.T) {
	e := openMem(t)
	seed(t, e, "ana: one")
	if e.feed != nil || len(e.Changes(0, nil)) != 0 {
		t.Fatal("a feed without a follower")
	}
}

// TestFollowerSection: the follower's section is written with each
// snapshot at the snapshot's sequence number, read back at start-up
// (committed only for a snapshot that validates), and the writes after the
// snapshot come to it again through the feed from the log; a store opened
// without the follower skips the section, and a damaged section sets the
// snapshot aside like any other damage.
func TestFollowerSection(t *testing.T) {
	dir := t.TempDir()
	tf := &testFollower{}
	e := openDir(t, dir, withFollower(tf))
	seed(t, e, "ana: one", "bo: two")
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snapSeq := e.Seq()
	saved := slices.Clone(tf.seen)
	e.PutDocuments([]record.Document{{ID: "after", Title: "After", Content: "written after the snapshot"}})
	afterSeq := e.Seq()
	e.crash()
	if !tf.stopped.Load() {
		t.Error("follower not stopped")
	}

	tf2 := &testFollower{}
	e = openDir(t, dir, withFollower(tf2))
	if tf2.loaded != snapSeq || !slices.Equal(tf2.seen, saved) {
		t.Fatalf("section read back at %d (want %d): %v vs %v", tf2.loaded, snapSeq, kinds(tf2.seen), kinds(saved))
	}
	got := tf2.take()
	if len(got) != 1 || got[0].Kind != DocumentChanged || got[0].Seq != afterSeq {
		t.Fatalf("replayed changes: %+v (want the document at %d)", got, afterSeq)
	}
	e.Close() // writes a final snapshot, with the section

	// Without the follower the section is skipped; the records load.
	e = openDir(t, dir)
	if n := e.Counts(true).Documents; n != 1 {
		t.Fatalf("documents: %d", n)
	}
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	e.Close()

	// A section the follower refuses makes the snapshot invalid: the store
	// falls back to the older one and the log, and nothing of the refused
	// section is committed.
	e = openDir(t, dir, withFollower(&testFollower{}))
	older := e.LastSnapshot().Seq
	e.PutDocuments([]record.Document{{ID: "more", Title: "More", Content: "x"}})
	e.Close()
	bad := &refusing{above: older}
	e = openDir(t, dir, func(o *Options) { o.Follower = bad })
	defer e.Close()
	if bad.loaded != older || e.Counts(true).Documents != 2 {
		t.Fatalf("after a refused section: loaded %d (want %d), %d documents", bad.loaded, older, e.Counts(true).Documents)
	}
}

// refusing refuses the sections of snapshots after above.
type refusing struct {
	testFollower
	above uint64
}

func (r *refusing) ReadSection(seq uint64, v follow.View, next func() ([]byte, error)) (func(), error) {
	commit, err := r.testFollower.ReadSection(seq, v, next)
	if err == nil && seq > r.above {
		return nil, fmt.Errorf("refused")
	}
	return commit, err
}

// TestSectionInBackup: a backup of a store with a follower holds the
// section, and InspectSnapshot hands it to a follower it is given.
func TestSectionInBackup(t *testing.T) {
	tf := &testFollower{}
	e := openMem(t, withFollower(tf))
	seed(t, e, "ana: one")
	var b bytes.Buffer
	seq, err := e.Backup(&b)
	if err != nil {
		t.Fatal(err)
	}
	reader := &testFollower{}
	if _, err := InspectSnapshot(bytes.NewReader(b.Bytes()), reader); err != nil {
		t.Fatal(err)
	}
	if reader.loaded != seq || len(reader.seen) == 0 {
		t.Fatalf("inspected section: loaded %d, %d changes", reader.loaded, len(reader.seen))
	}
	if _, err := InspectSnapshot(bytes.NewReader(b.Bytes()), nil); err != nil {
		t.Fatalf("inspect without the follower: %v", err)
	}
}

// TestFeedShowsWholeWrites: a follower reading the feed while a large
// write is being applied never sees part of it — acknowledging a write's
// sequence number would otherwise lose the changes it had yet to append.
func TestFeedShowsWholeWrites(t *testing.T) {
	tf := &testFollower{}
	e := openMem(t, withFollower(tf))
	seed(t, e)
	tf.take()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				tf.take()
			}
		}
	}()
	var want []uint64
	for round := range 20 {
		var msgs []record.Message
		for i := range 1200 { // several apply batches, alternating channels
			msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: []string{"c1", "c2"}[i%2], ID: fmt.Sprint(round, "-", i),
				Author: "ana", Content: "words", Timestamp: t0})
		}
		if _, err := e.PutMessages(msgs); err != nil {
			t.Fatal(err)
		}
		want = append(want, e.Seq())
	}
	close(stop)
	<-done
	tf.take()
	for _, seq := range want {
		chans := map[uint32]bool{}
		for _, c := range tf.seen {
			if c.Seq == seq && c.Kind == ChannelChanged {
				chans[c.Ref] = true
			}
		}
		if len(chans) != 2 {
			t.Fatalf("write %d: changes of %d channels seen, want 2", seq, len(chans))
		}
	}
}
