package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func openDir(t testing.TB, dir string, mod ...func(*Options)) *Engine {
	t.Helper()
	opts := Options{DataDir: dir, NoSync: true}
	for _, m := range mod {
		m(&opts)
	}
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if tf, ok := opts.Follower.(*testFollower); ok {
		tf.e = e
	}
	return e
}

// crash abandons e as a killed process would: no snapshot, no sync, the
// directory lock released.
func (e *Engine) crash() {
	e.closed.Store(true)
	close(e.stop)
	<-e.done
	if f := e.opts.Follower; f != nil {
		f.Stop()
	}
	e.wal.Abandon()
	e.unlockDir()
}

// fingerprint summarises everything observable about the engine's content.
func fingerprint(t testing.TB, e *Engine) string {
	t.Helper()
	var b strings.Builder
	for _, s := range e.Sources() {
		fmt.Fprintf(&b, "source %s %s %s %v\n", s.ID, s.Name, s.Type, s.Config)
	}
	for _, c := range e.Channels("", true) {
		msgs, total, _ := e.ChannelMessages(c.Slug, 0, 1<<30)
		fmt.Fprintf(&b, "channel %s/%s %s %d\n", c.SourceID, c.ID, c.Slug, total)
		for _, m := range msgs {
			fmt.Fprintf(&b, "  %s %s %s %q %s\n", m.ID, m.Author, m.Timestamp.Format("2006-01-02T15:04:05.000000Z07:00"), m.Content, m.URL)
		}
	}
	docs, _ := e.Documents(0, 1<<30, true)
	for _, d := range docs {
		fmt.Fprintf(&b, "doc %s %s %s %q\n", d.ID, d.Slug, d.Title, d.Content)
	}
	for _, q := range []string{"alpha", "beta gamma", `"alpha beta"`, "from:ana", "doc"} {
		r := search(t, e, query.SearchRequest{Query: q, Limit: 100, Private: true})
		fmt.Fprintf(&b, "q %s -> %v %d %d\n", q, msgIDs(r), r.TotalMessages, r.TotalDocuments)
	}
	return b.String()
}

// fill writes a varied history: sources, channels, messages, edits,
// deletions and documents, n rounds.
func fill(t testing.TB, e *Engine, rounds int) {
	t.Helper()
	if _, err := e.PutSource(record.Source{ID: "chat", Name: "Chat", Type: "slack", Enabled: true, Config: map[string]any{"token": "x", "n": 1.0}}); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < rounds; r++ {
		if _, err := e.PutChannels([]record.Channel{{SourceID: "chat", ID: fmt.Sprint("c", r%3), Name: fmt.Sprint("room ", r%3)}}); err != nil {
			t.Fatal(err)
		}
		var batch []record.Message
		for i := 0; i < 20; i++ {
			batch = append(batch, record.Message{SourceID: "chat", ChannelID: fmt.Sprint("c", r%3), ID: fmt.Sprint(r, "-", i),
				Author: []string{"ana", "bo"}[i%2], Content: fmt.Sprintf("alpha beta %d gamma%d round %d", i, i%4, r),
				Timestamp: t0.Add(time.Duration(r*20+i) * time.Minute)})
		}
		if _, err := e.PutMessages(batch); err != nil {
			t.Fatal(err)
		}
		if r > 0 {
			if _, err := e.DeleteMessages("chat", []string{fmt.Sprint(r-1, "-", 3)}); err != nil {
				t.Fatal(err)
			}
			batch[5].Content = "edited alpha"
			if _, err := e.PutMessages(batch[5:6]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.PutDocuments([]record.Document{{Title: fmt.Sprint("doc ", r%4), Content: fmt.Sprint("alpha document round ", r)}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReopenAfterClose(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	fill(t, e, 6)
	want := fingerprint(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openDir(t, dir)
	defer e.Close()
	if got := fingerprint(t, e); got != want {
		t.Fatalf("state changed across restart:\n%s\nvs\n%s", got, want)
	}
	if info := e.LastSnapshot(); info == nil || info.Seq != e.Seq() {
		t.Errorf("Close did not snapshot: %+v", info)
	}
}

func TestCrashReplaysLog(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir, func(o *Options) { o.SegmentBytes = 4096 }) // many segments
	fill(t, e, 4)
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	fill(t, e, 8)
	want := fingerprint(t, e)
	e.crash()
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if len(segs) < 3 {
		t.Fatalf("expected several segments, got %d", len(segs))
	}
	e = openDir(t, dir)
	defer e.Close()
	if got := fingerprint(t, e); got != want {
		t.Fatalf("state after crash differs:\n%s\nvs\n%s", got, want)
	}
}

func lastSegment(t *testing.T, dir string) string {
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	slices.Sort(segs)
	return segs[len(segs)-1]
}

func TestTornTailIsCut(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	fill(t, e, 3)
	want := fingerprint(t, e)
	seq := e.Seq()
	e.crash()
	// A crash in the middle of a write leaves part of a frame.
	f, _ := os.OpenFile(lastSegment(t, dir), os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 5, 6})
	f.Close()
	e = openDir(t, dir)
	if got := fingerprint(t, e); got != want || e.Seq() != seq {
		t.Fatalf("torn tail changed state")
	}
	// New writes after the cut are replayed too.
	fill(t, e, 4)
	want = fingerprint(t, e)
	e.crash()
	e = openDir(t, dir)
	defer e.Close()
	if got := fingerprint(t, e); got != want {
		t.Fatal("writes after a cut tail were lost")
	}
}

func TestTruncatedLastRecordIsDropped(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	fill(t, e, 2)
	want := fingerprint(t, e)
	seq := e.Seq()
	if _, err := e.PutDocuments([]record.Document{{Title: "last one", Content: "will be torn"}}); err != nil {
		t.Fatal(err)
	}
	e.crash()
	seg := lastSegment(t, dir)
	fi, _ := os.Stat(seg)
	os.Truncate(seg, fi.Size()-3)
	e = openDir(t, dir)
	defer e.Close()
	if got := fingerprint(t, e); got != want || e.Seq() != seq {
		t.Fatalf("expected exactly the torn record to be dropped")
	}
}

func TestCorruptSnapshotFallsBack(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	fill(t, e, 3)
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	fill(t, e, 5)
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	fill(t, e, 7)
	want := fingerprint(t, e)
	e.crash()
	files, _ := snapshotFiles(dir)
	if len(files) != 2 {
		t.Fatalf("want 2 snapshots kept, have %d", len(files))
	}
	b, _ := os.ReadFile(files[0].path)
	b[len(b)/2] ^= 0x5a
	os.WriteFile(files[0].path, b, 0o600)
	e = openDir(t, dir)
	if got := fingerprint(t, e); got != want {
		t.Fatalf("fallback lost data:\n%s\nvs\n%s", got, want)
	}
	e.crash()
	// With both snapshots damaged the log no longer reaches back far
	// enough: refusing to start beats starting with data missing.
	for _, sf := range files {
		b, _ := os.ReadFile(sf.path)
		b[40] ^= 0x5a
		os.WriteFile(sf.path, b, 0o600)
	}
	if _, err := Open(Options{DataDir: dir, NoSync: true}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want a refusal naming missing records, got %v", err)
	}
}

func TestDataDirLock(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	defer e.Close()
	if _, err := Open(Options{DataDir: dir}); err == nil {
		t.Fatal("a second engine opened the same data dir")
	}
}

func TestSnapshotRoundTripIsExact(t *testing.T) {
	e := openMem(t)
	fill(t, e, 5)
	var a bytes.Buffer
	if err := writeLocked(e, &a, 7); err != nil {
		t.Fatal(err)
	}
	st, seq, rebuilt, err := readState(bytes.NewReader(a.Bytes()), DefaultOptions())
	if err != nil || seq != 7 || rebuilt {
		t.Fatalf("read: %v seq %d rebuilt %v", err, seq, rebuilt)
	}
	var b bytes.Buffer
	if err := st.writeTo(&b, 7, 3, nil); err != nil {
		t.Fatal(err)
	}
	// Headers differ in their creation time; bodies must not differ at all.
	if !bytes.Equal(bodyOf(t, a.Bytes()), bodyOf(t, b.Bytes())) {
		t.Fatal("snapshot of a loaded snapshot differs from the original")
	}
}

// bodyOf returns the decompressed frames of a snapshot.
func bodyOf(t testing.TB, snap []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	st, _, _, err := readState(bytes.NewReader(snap), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	fw := &frameWriter{w: &out}
	if err := st.writeFrames(fw, 0, 3, nil); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestTokenizerChangeRebuildsIndexes(t *testing.T) {
	e := openMem(t)
	fill(t, e, 3)
	var a bytes.Buffer
	if err := writeLocked(e, &a, 1); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.TitleWeight = 2 // indexes written with weight 3 no longer fit
	st, _, rebuilt, err := readState(bytes.NewReader(a.Bytes()), opts)
	if err != nil || !rebuilt {
		t.Fatalf("rebuilt %v err %v", rebuilt, err)
	}
	if st.msgIdx.Len() != e.st.msgIdx.Len() || st.docIdx.Len() != e.st.docIdx.Len() {
		t.Fatal("rebuild lost documents")
	}
}

func TestSnapshotDetectsDamage(t *testing.T) {
	e := openMem(t)
	fill(t, e, 2)
	var a bytes.Buffer
	if err := writeLocked(e, &a, 1); err != nil {
		t.Fatal(err)
	}
	snap := a.Bytes()
	for _, cut := range []int{0, 10, snapHeaderSize, len(snap) / 2, len(snap) - 1} {
		if _, _, _, err := readState(bytes.NewReader(snap[:cut]), DefaultOptions()); err == nil {
			t.Errorf("snapshot cut at %d accepted", cut)
		}
	}
	body := bodyOf(t, snap)
	for i := 0; i < len(snap); i += 7 {
		bad := slices.Clone(snap)
		bad[i] ^= 0x01
		if _, _, _, err := readState(bytes.NewReader(bad), DefaultOptions()); err == nil && !bytes.Equal(bodyOf(t, bad), body) {
			// A flip in bits zstd does not use decodes to the same
			// content; anything else must be refused.
			t.Errorf("damage at byte %d accepted", i)
		}
	}
}

// TestGoldenSnapshot loads a snapshot of every format version, so a change
// that breaks reading existing files fails here. -update rewrites the
// current version's file only.
func TestGoldenSnapshot(t *testing.T) {
	for v := 1; v <= snapVersion; v++ {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			path := filepath.Join("testdata", fmt.Sprintf("golden-v%d.sift", v))
			want, _ := os.ReadFile(filepath.Join("testdata", "golden.txt"))
			if *update && v == snapVersion {
				e := openMem(t, withFollower(&testFollower{}))
				fill(t, e, 3)
				if err := e.PutInsights(someInsights); err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if err := writeLocked(e, &b, 42); err != nil {
					t.Fatal(err)
				}
				os.MkdirAll("testdata", 0o755)
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				want = []byte(fingerprint(t, e))
				os.WriteFile(filepath.Join("testdata", "golden.txt"), want, 0o644)
			}
			dir := t.TempDir()
			seq, _, _, err := Restore(dir, path)
			if err != nil || seq != 42 {
				t.Fatalf("restore golden: %v (seq %d)", err, seq)
			}
			e := openDir(t, dir)
			if got := fingerprint(t, e); got != string(want) {
				t.Fatalf("golden snapshot reads differently:\n%s\nvs\n%s", got, want)
			}
			if got := e.Insights(); v >= 7 && !slices.Equal(got, sortedInsights(someInsights)) || v < 7 && len(got) > 0 {
				t.Fatalf("golden snapshot's insights: %+v", got)
			}
			// (Semantic search over each version: semantic.TestGoldenSnapshots.)
			if _, _, _, err := Restore(dir, path); err == nil || !strings.Contains(err.Error(), "in use") {
				t.Errorf("restore into a dir in use: %v", err)
			}
			e.Close()
			if _, _, _, err := Restore(dir, path); !errors.Is(err, record.ErrConflict) {
				t.Errorf("restore into a non-empty dir: %v", err)
			}
		})
	}
}

func TestBackupWhileServing(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	fill(t, e, 3)
	want := fingerprint(t, e)
	var b bytes.Buffer
	seq, err := e.Backup(&b)
	if err != nil || seq != e.Seq() {
		t.Fatalf("backup: %v seq %d", err, seq)
	}
	e.Close()
	file := filepath.Join(t.TempDir(), "backup.sift")
	os.WriteFile(file, b.Bytes(), 0o600)
	dir2 := filepath.Join(t.TempDir(), "restored")
	if _, _, _, err := Restore(dir2, file); err != nil {
		t.Fatal(err)
	}
	e2 := openDir(t, dir2)
	defer e2.Close()
	if got := fingerprint(t, e2); got != want {
		t.Fatal("restored backup differs")
	}
	// A damaged backup is refused before anything is installed.
	bad := b.Bytes()
	bad[len(bad)/3] ^= 0xff
	os.WriteFile(file, bad, 0o600)
	dir3 := filepath.Join(t.TempDir(), "never")
	if _, _, _, err := Restore(dir3, file); err == nil {
		t.Fatal("damaged backup restored")
	}
	if _, err := os.Stat(dir3); !os.IsNotExist(err) {
		t.Error("a failed restore left files behind")
	}
}

func FuzzDecodeOp(f *testing.F) {
	for _, o := range []op{
		{kind: opPutSource, source: record.Source{ID: "s", Name: "S", Type: "web", Config: map[string]any{"a": "b"}, LastCrawl: &record.CrawlInfo{JobID: "j"}}},
		{kind: opDeleteSource, id: "s"},
		{kind: opPutChannels, channels: []record.Channel{{SourceID: "s", ID: "c", Name: "n", CreatedAt: t0}}},
		{kind: opPutMessages, messages: []record.Message{{SourceID: "s", ChannelID: "c", ID: "1", Content: "hi", Timestamp: t0}}},
		{kind: opDeleteMessages, id: "s", ids: []string{"1", "2"}},
		{kind: opPutDocuments, docs: []record.Document{{ID: "d", Title: "t", Content: "c"}}},
		{kind: opPutDocuments, docs: []record.Document{{ID: "d", Title: "t", Content: "c", Language: "de"}}},
		{kind: opDeleteDocuments, ids: []string{"d"}},
		{kind: opPutSource, source: record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true, Visibility: record.VisibilityPrivate,
			ChannelVisibility: map[string]string{"c": record.VisibilityPublic}, ExcludedChannels: []string{"x"}, OptOuts: []string{"ana"}}},
		{kind: opPutChannels, channels: []record.Channel{{SourceID: "s", ID: "dm", Name: "dm", Private: true, ParentID: "c"}}},
		{kind: opPutSettings, settings: map[string]string{"site_name": "Acme"}},
		{kind: opPutSource, source: record.Source{ID: "s", Name: "S", Type: "slack", LastImport: &record.ImportInfo{JobID: "j", Status: "ok",
			File: "x.zip", ImportCounts: record.ImportCounts{Messages: 3, Stored: 1, Skipped: map[string]int{"empty message": 2}}}}},
		{kind: opPutCursor, id: "s", cursor: `{"last":{"c":"42"}}`},
		{kind: opPutSource, source: record.Source{ID: "s", Name: "S", Type: "web", Cursor: "c-1", Version: 7}, cursorOK: true},
		{kind: opPutInsights, insights: someInsights},
	} {
		var e bin.Enc
		if err := o.encode(&e); err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(o.kind), e.B)
	}
	f.Fuzz(func(t *testing.T, kind uint8, payload []byte) {
		o, err := decodeOp(opKind(kind), payload)
		if err != nil {
			return
		}
		var e bin.Enc
		if err := o.encode(&e); err != nil && o.kind != opPutMessages {
			t.Fatalf("decoded op does not encode: %v", err)
		}
		// Applying any decodable record must not panic.
		eng, err := Open(Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		eng.writeMu.Lock()
		eng.apply(&o)
		eng.writeMu.Unlock()
	})
}

func FuzzReadState(f *testing.F) {
	e, _ := Open(Options{})
	fill(f, e, 2)
	e.PutInsights(someInsights)
	var b bytes.Buffer
	writeLocked(e, &b, 1)
	e.Close()
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		st, _, _, err := readState(bytes.NewReader(data), DefaultOptions())
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := st.writeTo(&out, 1, 3, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzReadFrames fuzzes the frames inside a snapshot, past the
// compression and the checksums that stop FuzzReadState's mutations: one
// frame of a snapshot holding every kind of frame (records, indexes, a
// follower's section) is replaced by the input, its checksum made right. A
// damaged state must be refused, never panic, and what is accepted must
// write back. (The semantic section's payloads: semantic.FuzzReadSection.)
func FuzzReadFrames(f *testing.F) {
	tf := &testFollower{}
	e, _ := Open(Options{Follower: tf})
	tf.e = e
	fill(f, e, 2)
	e.PutInsights(someInsights)
	var raw bytes.Buffer
	e.writeMu.Lock()
	e.st.writeFrames(&frameWriter{w: &raw}, e.seq, e.opts.TitleWeight, tf)
	seq := e.seq
	e.writeMu.Unlock()
	e.Close()
	var frames [][]byte // bodies: type, then payload
	for b := raw.Bytes(); len(b) >= frameHeaderSize; {
		n := int(binary.LittleEndian.Uint32(b))
		frames = append(frames, b[frameHeaderSize:frameHeaderSize+n])
		b = b[frameHeaderSize+n:]
	}
	for i, body := range frames {
		f.Add(uint16(i), body[1:])
	}
	f.Fuzz(func(t *testing.T, which uint16, payload []byte) {
		i := int(which) % len(frames)
		var stream []byte
		for j, body := range frames {
			if j == i {
				stream = appendFrame(stream, body[0], payload)
			} else {
				stream = appendFrame(stream, body[0], body[1:])
			}
		}
		opts := DefaultOptions()
		opts.Follower = &testFollower{}
		st, _, err := readBody(&frameReader{r: bytes.NewReader(stream)}, snapHeader{version: snapVersion, seq: seq}, opts)
		if err != nil {
			return
		}
		if err := st.writeFrames(&frameWriter{w: io.Discard}, seq, 3, opts.Follower); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMessageFieldsSurvive checks every Message field through a put, a
// snapshot and a log replay, including the forms of URL stored compactly.
func TestMessageFieldsSurvive(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	e.PutSource(record.Source{ID: "d", Name: "D", Type: "discord", Enabled: true})
	e.PutChannels([]record.Channel{
		{SourceID: "d", ID: "c", Name: "linked", URL: "https://chat.example/c"},
		{SourceID: "d", ID: "n", Name: "plain"},
	})
	msgs := []record.Message{
		{SourceID: "d", ChannelID: "c", ID: "1", Author: "ana", AuthorName: "Ana K", Content: "derived url", Timestamp: t0, URL: "https://chat.example/c/1"},
		{SourceID: "d", ChannelID: "c", ID: "2", Author: "bo", Content: "own url", Timestamp: t0, URL: "https://elsewhere.example/2"},
		{SourceID: "d", ChannelID: "c", ID: "3", Author: "bo", Content: "no url", Timestamp: t0},
		{SourceID: "d", ChannelID: "c", ID: "4", Author: "cy", Content: "reply, edited", Timestamp: t0, ReplyTo: "1", EditedAt: t0.Add(time.Minute), URL: "https://chat.example/c/4"},
		{SourceID: "d", ChannelID: "n", ID: "5", Author: "cy", Content: "plain channel", Timestamp: t0.Add(time.Second), URL: "https://x.example/5"},
		{SourceID: "d", ChannelID: "n", ID: "6", Author: "cy", Content: "plain, none", Timestamp: t0.Add(time.Second)},
	}
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	check := func(e *Engine, when string) {
		t.Helper()
		var got []record.Message
		for _, slug := range []string{"linked", "plain"} {
			page, _, err := e.ChannelMessages(slug, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page...)
		}
		if len(got) != len(msgs) {
			t.Fatalf("%s: %d messages", when, len(got))
		}
		for i := range msgs {
			w, g := msgs[i], got[i]
			if g.ID != w.ID || g.URL != w.URL || g.ReplyTo != w.ReplyTo || !g.EditedAt.Equal(w.EditedAt) ||
				g.Author != w.Author || g.AuthorName != w.AuthorName || g.Content != w.Content || !g.Timestamp.Equal(w.Timestamp) {
				t.Errorf("%s: message %s\n got  %+v\n want %+v", when, w.ID, g, w)
			}
		}
		if n, _ := e.PutMessages(msgs); n != 0 {
			t.Errorf("%s: re-putting identical messages changed %d", when, n)
		}
	}
	check(e, "live")
	e.crash()
	e = openDir(t, dir)
	check(e, "after replay")
	e.Close()
	e = openDir(t, dir)
	defer e.Close()
	check(e, "after snapshot")
}

// TestLargeRecordsSpanFrames: records bigger than a frame (18 MB documents)
// are written as continued frames and read back whole.
func TestLargeRecordsSpanFrames(t *testing.T) {
	var buf bytes.Buffer
	fw := &frameWriter{w: &buf}
	big := bytes.Repeat([]byte("0123456789abcdef"), (chunkBytes*2+1000)/16)
	if err := fw.frame(frameDocuments, big); err != nil {
		t.Fatal(err)
	}
	fw.frame(frameEnd, []byte{1})
	if fw.n != 4 {
		t.Fatalf("want 3 frames for %d bytes plus the end, wrote %d", len(big), fw.n)
	}
	fr := &frameReader{r: &buf}
	fr.advance()
	got, err := fr.take(frameDocuments)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("reassembled %d bytes, err %v", len(got), err)
	}
	if _, err := fr.take(frameEnd); err != nil || fr.n != 4 {
		t.Fatalf("end: %v after %d frames", err, fr.n)
	}

	dir := t.TempDir()
	e := openDir(t, dir)
	var docs []record.Document
	for i := 0; i < 3; i++ {
		docs = append(docs, record.Document{Title: fmt.Sprint("big ", i), Content: strings.Repeat(fmt.Sprintf("word%d filler ", i), 18<<20/13)})
	}
	for _, d := range docs {
		if _, err := e.PutDocuments([]record.Document{d}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = openDir(t, dir)
	defer e.Close()
	if info := e.LastSnapshot(); info == nil || e.Counts(true).Documents != 3 {
		t.Fatalf("big documents did not survive a snapshot: %+v", e.Counts(true))
	}
	if r := search(t, e, query.SearchRequest{Query: "word2"}); len(r.Documents) != 1 {
		t.Fatal("big document not searchable after load")
	}
}

// TestDamageBeforeValidRecordsIsNotATail: a flipped byte in the middle of
// the last segment, with acknowledged records after it, must stop start-up
// instead of being cut off as a torn tail.
func TestDamageBeforeValidRecordsIsNotATail(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	fill(t, e, 6)
	e.crash()
	seg := lastSegment(t, dir)
	b, _ := os.ReadFile(seg)
	b[len(b)/3] ^= 0x40
	os.WriteFile(seg, b, 0o600)
	if _, err := Open(Options{DataDir: dir, NoSync: true}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("want a refusal, got %v", err)
	}
}

// TestFailedWriteLeavesNoHole: a write the file system refuses part-way
// (here: a file-size limit) is cut off again, and the next acknowledged
// write is replayed after a crash.
func TestFailedWriteLeavesNoHole(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	defer func() {
		if e != nil {
			e.Close()
		}
	}()
	seed(t, e, "ana: alpha")
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	fi, _ := os.Stat(lastSegment(t, dir))
	lim := syscall.Rlimit{Cur: uint64(fi.Size()) + 100, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("cannot limit file size: %v", err)
	}
	_, err := e.PutDocuments([]record.Document{{Title: "too big", Content: strings.Repeat("x", 4096)}})
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("oversized write: %v", err)
	}
	if _, err := e.PutDocuments([]record.Document{{Title: "gamma", Content: "acknowledged after the failure"}}); err != nil {
		t.Fatalf("write after a recovered failure: %v", err)
	}
	e.crash()
	e = openDir(t, dir)
	if r := search(t, e, query.SearchRequest{Query: "acknowledged"}); len(r.Documents) != 1 {
		t.Fatal("the write acknowledged after a failed one was lost")
	}
	if r := search(t, e, query.SearchRequest{Query: "alpha"}); len(r.Messages) != 1 {
		t.Fatal("earlier writes lost")
	}
}

func TestDamagedRestoredSnapshotIsRefused(t *testing.T) {
	dir := t.TempDir()
	if _, _, _, err := Restore(dir, filepath.Join("testdata", "golden-v1.sift")); err != nil {
		t.Fatal(err)
	}
	files, _ := snapshotFiles(dir)
	b, _ := os.ReadFile(files[0].path)
	b[len(b)/2] ^= 0xff
	os.WriteFile(files[0].path, b, 0o600)
	if _, err := Open(Options{DataDir: dir, NoSync: true}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("want a refusal to start empty, got %v", err)
	}
}

func TestMessageURLSurvivesChannelChange(t *testing.T) {
	e := openMem(t)
	e.PutSource(record.Source{ID: "d", Name: "D", Type: "discord", Enabled: true})
	e.PutChannels([]record.Channel{{SourceID: "d", ID: "c", Name: "linked", URL: "https://chat.example/c"}})
	e.PutMessages([]record.Message{{SourceID: "d", ChannelID: "c", ID: "1", Content: "x", Timestamp: t0, URL: "https://chat.example/c/1"}})
	e.PutChannels([]record.Channel{{SourceID: "d", ID: "c", Name: "linked", URL: "https://moved.example/c"}})
	page, _, _ := e.ChannelMessages("linked", 0, 1)
	if page[0].URL != "https://chat.example/c/1" {
		t.Fatalf("message URL followed its channel: %q", page[0].URL)
	}
}

// TestLiveStateEqualsReplay: what a write leaves in memory is exactly what
// replaying its log record rebuilds — nanosecond times and integer config
// values included.
func TestLiveStateEqualsReplay(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	ns := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	e.PutSource(record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true, Config: map[string]any{"n": 3, "nested": map[string]any{"k": []int{1}}}})
	e.PutChannels([]record.Channel{{SourceID: "s", ID: "c", Name: "chan", CreatedAt: ns}})
	msgs := []record.Message{{SourceID: "s", ChannelID: "c", ID: "1", Author: "a", Content: "alpha", Timestamp: ns, EditedAt: ns.Add(time.Nanosecond)}}
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.PutMessages(msgs); n != 0 {
		t.Fatalf("re-putting a message with nanosecond times changed %d", n)
	}
	docs, _ := e.PutDocuments([]record.Document{{Title: "same", Content: "first"}, {Title: "same", Content: "second"}})
	if len(docs) != 1 || docs[0].Content != "second" {
		t.Fatalf("one batch naming a document twice: %+v", docs)
	}
	src, _ := e.Source("s")
	src.Config["nested"].(map[string]any)["k"] = "changed by the caller"
	want := fingerprint(t, e)
	e.crash()
	e = openDir(t, dir)
	defer e.Close()
	if got := fingerprint(t, e); got != want {
		t.Fatalf("replay differs from the live state:\n%s\nvs\n%s", got, want)
	}
}

// writeLocked writes e's state as a snapshot holding the writer lock, as
// Snapshot does (the semantic indexer writes in the background).
func writeLocked(e *Engine, w *bytes.Buffer, seq uint64) error {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	return e.st.writeTo(w, seq, 3, e.opts.Follower)
}
