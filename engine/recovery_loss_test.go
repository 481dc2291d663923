package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sift-search/sift/engine/internal/wal"
	"github.com/sift-search/sift/record"
)

// lossHistory is the history of issue 22's report: documents written one
// a write across many small segments, a snapshot after 30, the newest
// after 60 more, 20 more after it, then a crash. It returns every
// acknowledged title with its sequence number, and the two snapshots'.
type lossHistory struct {
	titles []string
	seqs   []uint64
	s1, s2 uint64
}

func writeLossHistory(t *testing.T, dir string) *lossHistory {
	t.Helper()
	h := &lossHistory{}
	e := openDir(t, dir, smallSegments)
	put := func(n int) {
		for range n {
			title := fmt.Sprintf("doc %03d", len(h.titles))
			if _, err := e.PutDocuments([]record.Document{{Title: title, Content: "alpha " + title}}); err != nil {
				t.Fatal(err)
			}
			h.titles = append(h.titles, title)
			h.seqs = append(h.seqs, e.Seq())
		}
	}
	snap := func() uint64 {
		if err := e.Snapshot(); err != nil {
			t.Fatal(err)
		}
		return e.Seq()
	}
	put(30)
	h.s1 = snap()
	put(60)
	h.s2 = snap()
	put(20)
	e.crash()
	return h
}

// upTo returns the titles written up to seq, sorted.
func (h *lossHistory) upTo(seq uint64) []string {
	var out []string
	for i, s := range h.seqs {
		if s <= seq {
			out = append(out, h.titles[i])
		}
	}
	slices.Sort(out)
	return out
}

// withRecords lists the log's segments that hold records.
func withRecords(t *testing.T, dir string) []wal.Segment {
	t.Helper()
	segs, err := wal.Segments(filepath.Join(dir, "wal"))
	if err != nil {
		t.Fatal(err)
	}
	var out []wal.Segment
	for _, s := range segs {
		if fi, err := os.Stat(s.Path); err == nil && fi.Size() > wal.HeaderSize {
			out = append(out, s)
		}
	}
	return out
}

// dirState maps every file of a data dir to its size.
func dirState(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != lockName {
			fi, _ := d.Info()
			m[p] = fi.Size()
		}
		return nil
	})
	return m
}

// lossCase damages a data dir holding a lossHistory (its newest snapshot
// already damaged) and returns the missing records start-up must name.
type lossCase struct {
	name   string
	damage func(t *testing.T, dir string, h *lossHistory) (from, to, acked uint64, names []string)
}

// segmentAfter returns segment i of those holding records after seq and
// the segment that follows it.
func segmentAfter(t *testing.T, dir string, seq uint64, pick func(n int) int) (wal.Segment, wal.Segment) {
	t.Helper()
	var segs []wal.Segment
	for _, s := range withRecords(t, dir) {
		if s.First > seq+1 {
			segs = append(segs, s)
		}
	}
	i := pick(len(segs))
	if i < 0 || i+1 >= len(segs) {
		t.Fatalf("no segment %d with one after it among %v", i, segs)
	}
	return segs[i], segs[i+1]
}

var lossCases = []lossCase{
	{"middle segment deleted", func(t *testing.T, dir string, h *lossHistory) (uint64, uint64, uint64, []string) {
		s, next := segmentAfter(t, dir, h.s1, func(n int) int { return n / 3 })
		os.Remove(s.Path)
		return s.First, next.First - 1, h.seqs[len(h.seqs)-1], []string{next.Path}
	}},
	{"segment before the last deleted", func(t *testing.T, dir string, h *lossHistory) (uint64, uint64, uint64, []string) {
		s, next := segmentAfter(t, dir, h.s1, func(n int) int { return n - 2 })
		os.Remove(s.Path)
		return s.First, next.First - 1, h.seqs[len(h.seqs)-1], []string{next.Path}
	}},
	{"log deleted from the middle on", func(t *testing.T, dir string, h *lossHistory) (uint64, uint64, uint64, []string) {
		s, _ := segmentAfter(t, dir, h.s1, func(n int) int { return n / 3 })
		for _, later := range withRecords(t, dir) {
			if later.First >= s.First {
				os.Remove(later.Path)
			}
		}
		// Only the damaged snapshot's name shows the writes up to it.
		return s.First, h.s2, h.s2, []string{snapshotPath(dir, h.s2)}
	}},
	{"middle segment cut short", func(t *testing.T, dir string, h *lossHistory) (uint64, uint64, uint64, []string) {
		s, next := segmentAfter(t, dir, h.s1, func(n int) int { return n / 3 })
		fi, _ := os.Stat(s.Path)
		os.Truncate(s.Path, fi.Size()/2)
		info := inspectSegmentFile(t, s.Path, s.First)
		return info.Last + 1, next.First - 1, h.seqs[len(h.seqs)-1], []string{s.Path, next.Path}
	}},
	{"middle segment emptied", func(t *testing.T, dir string, h *lossHistory) (uint64, uint64, uint64, []string) {
		s, next := segmentAfter(t, dir, h.s1, func(n int) int { return n / 3 })
		os.Truncate(s.Path, wal.HeaderSize)
		return s.First, next.First - 1, h.seqs[len(h.seqs)-1], []string{next.Path}
	}},
}

func inspectSegmentFile(t *testing.T, path string, named uint64) *SegmentInfo {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := InspectSegment(f, path, named)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestLostWritesAreRefused is issue 22, item 6: with the newest snapshot
// damaged by one byte, the older snapshot and the log must reach the last
// acknowledged write. When a segment is missing or cut short, start-up
// refuses — never cutting a later segment as a torn tail, never serving
// less in silence — naming the files, the missing sequence numbers and the
// ways on; it changes nothing. With AcceptDataLoss it starts with what
// replays, logs the loss at ERROR and sets the rest aside, and the data
// dir then works as any other.
func TestLostWritesAreRefused(t *testing.T) {
	for _, c := range lossCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			h := writeLossHistory(t, dir)
			flipByte(t, snapshotPath(dir, h.s2), -1)
			from, to, acked, names := c.damage(t, dir, h)
			before := dirState(t, dir)

			_, err := Open(Options{DataDir: dir, NoSync: true, SegmentBytes: 1024})
			var le *LossError
			if !errors.As(err, &le) || le.From != from || le.To != to || le.Acked != acked || le.Reached != from-1 {
				t.Fatalf("want records %d to %d of %d missing, got %v", from, to, acked, err)
			}
			msg := err.Error()
			for _, want := range append(names, "refusing to start", fmt.Sprintf("records %d to %d are missing", from, to),
				fmt.Sprintf("acknowledged writes %d to %d cannot be replayed", from, acked),
				"sift verify --data-dir "+dir, "sift restore", "--accept-data-loss", "SIFT_ACCEPT_DATA_LOSS=1") {
				if !strings.Contains(msg, want) {
					t.Errorf("refusal lacks %q:\n%s", want, msg)
				}
			}
			if after := dirState(t, dir); !equalState(after, before) {
				t.Fatalf("a refused start-up changed the data dir:\n%v\nwas\n%v", after, before)
			}

			var logs logBuffer
			e := openDir(t, dir, smallSegments, withLog(&logs), func(o *Options) { o.AcceptDataLoss = true })
			if got := titles(e); !slices.Equal(got, h.upTo(from-1)) {
				t.Fatalf("accepting the loss serves %d documents, want the %d written up to %d", len(got), len(h.upTo(from-1)), from-1)
			}
			if !strings.Contains(logs.String(), "level=ERROR msg=\"ACCEPTED DATA LOSS") ||
				!strings.Contains(logs.String(), fmt.Sprintf("lost=\"%d to %d\"", from, acked)) {
				t.Fatalf("the loss is not logged at ERROR:\n%s", logs.String())
			}
			// The damaged snapshot goes aside when it is numbered beyond
			// what replays: new writes will take its numbers.
			lost, _ := filepath.Glob(filepath.Join(dir, "lost-*", filepath.Base(snapshotPath(dir, h.s2))))
			if aside := h.s2 >= from; len(lost) != map[bool]int{true: 1}[aside] {
				t.Fatalf("damaged snapshot set aside: %v, want %v: %v", lost, aside, dirState(t, dir))
			}
			if _, err := e.PutDocuments([]record.Document{{Title: "after the loss"}}); err != nil {
				t.Fatal(err)
			}
			want := append(h.upTo(from-1), "after the loss")
			slices.Sort(want)
			e.crash()
			e = openDir(t, dir, smallSegments)
			defer e.Close()
			if got := titles(e); !slices.Equal(got, want) {
				t.Fatalf("after accepting the loss and a crash: %d documents, want %d", len(got), len(want))
			}
		})
	}
}

func equalState(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestTornTailWithDamagedSnapshotRecovers: the damaged newest snapshot
// falls back to the older one as before, and a torn last record, with
// nothing later showing more writes, is still cut: every acknowledged
// write is served.
func TestTornTailWithDamagedSnapshotRecovers(t *testing.T) {
	dir := t.TempDir()
	h := writeLossHistory(t, dir)
	flipByte(t, snapshotPath(dir, h.s2), -1)
	segs := withRecords(t, dir)
	last := segs[len(segs)-1].Path
	f, _ := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3})
	f.Close()
	var logs logBuffer
	e := openDir(t, dir, smallSegments, withLog(&logs))
	defer e.Close()
	if got, want := titles(e), h.upTo(h.seqs[len(h.seqs)-1]); !slices.Equal(got, want) {
		t.Fatalf("served %d documents, want %d", len(got), len(want))
	}
	if !strings.Contains(logs.String(), "cutting torn tail") || !strings.Contains(logs.String(), "falling back") {
		t.Fatalf("want a fallback and a cut tail logged:\n%s", logs.String())
	}
}

// TestCheckDataDirAgreesWithOpen: CheckDataDir says what Open does — the
// same missing records, the same torn tail — and changes nothing; it
// notes a server holding the directory.
func TestCheckDataDirAgreesWithOpen(t *testing.T) {
	for _, c := range lossCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			h := writeLossHistory(t, dir)
			flipByte(t, snapshotPath(dir, h.s2), -1)
			c.damage(t, dir, h)
			before := dirState(t, dir)
			chk, err := CheckDataDir(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, openErr := Open(Options{DataDir: dir, NoSync: true})
			var le *LossError
			if !errors.As(openErr, &le) || chk.Lost == nil || chk.Lost.Error() != le.Error() || chk.Severity() != 2 {
				t.Fatalf("check says %v (severity %d), Open %v", chk.Lost, chk.Severity(), openErr)
			}
			if chk.Loads == nil || chk.Loads.Seq != h.s1 || chk.Snapshots[0].Err == nil {
				t.Fatalf("check loads %+v", chk.Loads)
			}
			if after := dirState(t, dir); !equalState(after, before) {
				t.Fatal("the check changed the data dir")
			}
		})
	}
	dir := t.TempDir()
	h := writeLossHistory(t, dir)
	segs := withRecords(t, dir)
	f, _ := os.OpenFile(segs[len(segs)-1].Path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{200, 0, 0, 0, 1})
	f.Close()
	chk, err := CheckDataDir(dir, nil)
	if err != nil || chk.Cut == nil || chk.Cut.File != segs[len(segs)-1].Path || chk.Severity() != 1 ||
		chk.Reaches != h.seqs[len(h.seqs)-1] || chk.InUse {
		t.Fatalf("a torn tail: %+v, %v", chk, err)
	}
	e := openDir(t, dir)
	defer e.Close()
	if chk, err = CheckDataDir(dir, nil); err != nil || !chk.InUse || chk.Severity() != 0 {
		t.Fatalf("beside a server, after it cut the tail: %+v, %v", chk, err)
	}
}
