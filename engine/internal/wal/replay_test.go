package wal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// threePerSegment writes records 1 to n, three to a segment (1, 4, 7, …),
// and closes the log.
func threePerSegment(t *testing.T, dir string, n uint64) {
	t.Helper()
	w, err := Open(dir, Options{SegmentBytes: 100, NoSync: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= n; seq++ {
		if err := w.Append(seq, 1, []byte("twenty-three byte value")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// TestReplayDecides walks the cases recovery tells apart: damage that
// costs nothing is skipped, a torn tail of the last segment is cut, and
// anything that loses an acknowledged write — a missing or short segment,
// damage before a later segment or before a snapshot's sequence number —
// is a LossError naming the missing records, never a torn tail.
func TestReplayDecides(t *testing.T) {
	const recordBytes = 40 // frame header 8, kind 1, sequence 8, payload 23
	seg := func(dir string, first uint64) string { return segmentPath(dir, first) }
	for _, c := range []struct {
		name     string
		o        ReplayOptions
		damage   func(t *testing.T, dir string)
		last     uint64 // records replayed up to
		cut      bool
		skipped  int
		from, to uint64 // missing records of the LossError; 0: none
		acked    uint64
	}{
		{name: "whole", last: 12},
		{name: "snapshot at the end", o: ReplayOptions{After: 12, Acked: 12}, last: 12},
		{name: "torn last segment", last: 12, cut: true,
			damage: func(t *testing.T, dir string) { appendBytes(t, seg(dir, 10), []byte{200, 0, 0, 0, 1, 2}) }},
		{name: "last record cut short", last: 11, cut: true,
			damage: func(t *testing.T, dir string) { truncate(t, seg(dir, 10), HeaderSize+3*recordBytes-3) }},
		{name: "middle segment missing", from: 4, to: 6, acked: 12, last: 3,
			damage: func(t *testing.T, dir string) { os.Remove(seg(dir, 4)) }},
		{name: "segment before the last missing", from: 7, to: 9, acked: 12, last: 6,
			damage: func(t *testing.T, dir string) { os.Remove(seg(dir, 7)) }},
		{name: "middle segment cut at a record", from: 6, to: 6, acked: 12, last: 5,
			damage: func(t *testing.T, dir string) { truncate(t, seg(dir, 4), HeaderSize+2*recordBytes) }},
		{name: "middle segment cut in a record", from: 5, to: 6, acked: 12, last: 4,
			damage: func(t *testing.T, dir string) { truncate(t, seg(dir, 4), HeaderSize+recordBytes+7) }},
		{name: "middle segment emptied", from: 4, to: 6, acked: 12, last: 3,
			damage: func(t *testing.T, dir string) { truncate(t, seg(dir, 4), HeaderSize) }},
		{name: "torn tail with a snapshot beyond", o: ReplayOptions{Acked: 14, AckedBy: "snapshot 14"}, from: 12, to: 14, acked: 14, last: 11,
			damage: func(t *testing.T, dir string) { truncate(t, seg(dir, 10), HeaderSize+3*recordBytes-3) }},
		{name: "log ends before a snapshot", o: ReplayOptions{Acked: 20, AckedBy: "snapshot 20"}, from: 13, to: 20, acked: 20, last: 12},
		{name: "log resumes after the snapshot", o: ReplayOptions{After: 2, Acked: 2}, from: 3, to: 3, acked: 12, last: 0,
			damage: func(t *testing.T, dir string) { os.Remove(seg(dir, 1)) }},
		{name: "damage the snapshot holds", o: ReplayOptions{After: 6, Acked: 6}, last: 12, skipped: 1,
			damage: func(t *testing.T, dir string) { truncate(t, seg(dir, 4), HeaderSize+recordBytes+7) }},
		{name: "garbage after a segment's records", last: 12, skipped: 1,
			damage: func(t *testing.T, dir string) { appendBytes(t, seg(dir, 4), []byte{200, 0, 0, 0, 1, 2}) }},
		{name: "damage before valid records", from: 5, to: 6, acked: 12, last: 4,
			damage: func(t *testing.T, dir string) { flip(t, seg(dir, 4), HeaderSize+recordBytes+20) }},
		{name: "damage before valid records the snapshot holds", o: ReplayOptions{After: 12, Acked: 12}, last: 10, skipped: 1,
			damage: func(t *testing.T, dir string) { flip(t, seg(dir, 10), HeaderSize+recordBytes+20) }},
		{name: "damage before valid records in the last segment", from: 11, to: 11, acked: 12, last: 10,
			damage: func(t *testing.T, dir string) { flip(t, seg(dir, 10), HeaderSize+recordBytes+20) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			threePerSegment(t, dir, 12)
			if c.damage != nil {
				c.damage(t, dir)
			}
			w, _ := Open(dir, Options{SegmentBytes: 100, NoSync: true, Logger: quiet()})
			sizes := segmentSizes(dir)
			res, err := w.ReplayWith(c.o, func(uint64, uint8, []byte) error { return nil })
			var le *LossError
			if c.from == 0 {
				if err != nil || res.Last != c.last || (res.Cut != nil) != c.cut || len(res.Skipped) != c.skipped || res.Lost != nil {
					t.Fatalf("got %+v, %v; want up to %d, cut %v, %d skipped", res, err, c.last, c.cut, c.skipped)
				}
				return
			}
			if !errors.As(err, &le) || le.From != c.from || le.To != c.to || le.Acked != c.acked || le.Reached != max(c.last, c.o.After) {
				t.Fatalf("want records %d to %d missing of %d, got %v (%+v)", c.from, c.to, c.acked, err, le)
			}
			if got := segmentSizes(dir); !equalSizes(got, sizes) {
				t.Fatalf("a refused replay changed the log: %v, was %v", got, sizes)
			}
			c.o.AcceptLoss = true
			res, err = w.ReplayWith(c.o, func(uint64, uint8, []byte) error { return nil })
			if err != nil || res.Lost == nil || res.Lost.From != c.from || res.Last != c.last {
				t.Fatalf("accepting the loss: %+v, %v", res, err)
			}
			acceptAndResume(t, w, dir, c.o.After, res.Lost)
		})
	}
}

func flip(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0x40
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func segmentSizes(dir string) map[string]int64 {
	segs, _ := Segments(dir)
	m := map[string]int64{}
	for _, s := range segs {
		if fi, err := os.Stat(s.Path); err == nil {
			m[filepath.Base(s.Path)] = fi.Size()
		}
	}
	return m
}

func equalSizes(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// acceptAndResume sets aside what le says cannot be replayed and checks
// that the log then replays cleanly to le.Reached (after the snapshot at
// after) and takes new records after it, and that nothing was destroyed:
// every file moved or cut is in the set-aside directory whole.
func acceptAndResume(t *testing.T, w *Log, dir string, after uint64, le *LossError) {
	t.Helper()
	before := segmentSizes(dir)
	dst := filepath.Join(t.TempDir(), "lost")
	if err := w.SetAside(le, dst); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(le.Later, damagedFile(le)...) {
		fi, err := os.Stat(filepath.Join(dst, filepath.Base(p)))
		if err != nil || fi.Size() != before[filepath.Base(p)] {
			t.Fatalf("%s not set aside whole: %v", p, err)
		}
	}
	nop := func(uint64, uint8, []byte) error { return nil }
	res, err := w.ReplayWith(ReplayOptions{After: after, Acked: le.Reached}, nop)
	if err != nil || res.Cut != nil || len(res.Skipped) != 0 || max(after, res.Last) != le.Reached {
		t.Fatalf("replay after setting aside: %+v, %v", res, err)
	}
	if err := w.Rotate(le.Reached + 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(le.Reached+1, 1, []byte("after the loss")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res, err = w.ReplayWith(ReplayOptions{After: after, Acked: le.Reached + 1}, nop)
	if err != nil || res.Last != le.Reached+1 {
		t.Fatalf("replay after a new write: %+v, %v", res, err)
	}
}

func damagedFile(le *LossError) []string {
	if le.Damage == nil {
		return nil
	}
	return []string{le.Damage.File}
}

// TestLossErrorSays: the message names the missing records, the files on
// both sides of the break and the evidence of later writes, and the
// damage is reachable with errors.As.
func TestLossErrorSays(t *testing.T) {
	dir := t.TempDir()
	threePerSegment(t, dir, 12)
	os.Remove(segmentPath(dir, 4))
	w, _ := Open(dir, Options{ReadOnly: true, Logger: quiet()})
	_, err := w.ReplayWith(ReplayOptions{Acked: 9, AckedBy: "snapshot-9.sift (damaged: checksum)"}, func(uint64, uint8, []byte) error { return nil })
	msg := err.Error()
	for _, want := range []string{"acknowledged writes 4 to 12 cannot be replayed", "records 4 to 6 are missing",
		segmentPath(dir, 1), "the 2 segments from " + segmentPath(dir, 7) + " to " + segmentPath(dir, 10) + " hold records 7 to 12",
		"snapshot-9.sift (damaged: checksum) shows writes up to 9"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	_, err = w.ReplayWith(ReplayOptions{Acked: 20, AckedBy: "snapshot-20.sift (damaged: checksum)"}, func(uint64, uint8, []byte) error { return nil })
	if !strings.Contains(err.Error(), "snapshot-20.sift (damaged: checksum) shows writes up to 20 were acknowledged") {
		t.Errorf("snapshot evidence not named:\n%v", err)
	}

	dir = t.TempDir()
	threePerSegment(t, dir, 12)
	truncate(t, segmentPath(dir, 4), HeaderSize+47)
	w, _ = Open(dir, Options{ReadOnly: true, Logger: quiet()})
	_, err = w.ReplayWith(ReplayOptions{}, func(uint64, uint8, []byte) error { return nil })
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != segmentPath(dir, 4) || ce.Offset != HeaderSize+40 {
		t.Fatalf("damage not wrapped: %v", err)
	}
}
