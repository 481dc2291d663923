package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// kindTest is the record kind the tests write; the log does not look at it.
const kindTest = 7

// fullDisk makes the log's segment files fail the way a full disk does
// while full is set: a write stores part of its bytes, then reports
// ENOSPC. With noTruncate set, cutting a failed write off fails too.
type fullDisk struct {
	full       atomic.Bool
	noTruncate atomic.Bool
}

type fullDiskFile struct {
	File
	d *fullDisk
}

func (f fullDiskFile) Write(p []byte) (int, error) {
	if !f.d.full.Load() {
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

func (f fullDiskFile) Truncate(size int64) error {
	if f.d.noTruncate.Load() {
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

// install routes w's current segment and every new one through d.
func (d *fullDisk) install(w *Log) {
	w.WrapFiles(func(f File) File { return fullDiskFile{f, d} })
}

func globTemps(dir string) []string {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix))
	return tmps
}

// TestWALSurvivesFailedRotationAndWrites drives the log directly through
// every failure a full disk causes: a rotation whose new segment cannot be
// written, writes that store part of a record, and a cut of such a write
// that fails too. Each is retried by the next write, and replay finds
// exactly the records that were written.
func TestWALSurvivesFailedRotationAndWrites(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{SegmentBytes: 200, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var disk fullDisk
	disk.install(w)
	if err := w.Rotate(1); err != nil {
		t.Fatal(err)
	}
	seq := uint64(0)
	var stored []string
	put := func() error {
		payload := fmt.Sprintf("record %d %s", seq+1, strings.Repeat("x", 40))
		if err := w.Append(seq+1, kindTest, []byte(payload)); err != nil {
			return err
		}
		if err := w.Sync(seq + 1); err != nil {
			t.Fatalf("sync: %v", err)
		}
		seq++
		stored = append(stored, payload)
		return nil
	}
	for range 3 {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}
	segsBefore, _ := w.segments()

	disk.full.Store(true)
	// A snapshot's rotation fails: the current segment stays in use.
	if err := w.Rotate(seq + 1); !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("rotation on a full disk: %v", err)
	}
	if segs, _ := w.segments(); !slices.Equal(segs, segsBefore) || len(globTemps(dir)) != 0 {
		t.Fatalf("a failed rotation left files: %v", segs)
	}
	// Writes fail (the segment is past its size, so each also tries to
	// rotate), storing half a record each time, cut off again.
	for range 3 {
		if err := put(); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("write on a full disk: %v", err)
		}
	}
	// A failed write whose cut fails too: the next write must cut first.
	disk.noTruncate.Store(true)
	if err := put(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("write on a full disk: %v", err)
	}
	disk.full.Store(false)
	if err := put(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("write after a failed cut: %v", err)
	}
	if err := w.Rotate(seq + 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("rotation with a torn write in the segment: %v", err)
	}
	disk.noTruncate.Store(false)

	// Space is back: writes succeed, rotations too.
	for range 6 {
		if err := put(); err != nil {
			t.Fatalf("write after space returned: %v", err)
		}
	}
	if segs, _ := w.segments(); len(segs) <= len(segsBefore) {
		t.Fatalf("no rotation after space returned: %d segments", len(segs))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, _ := Open(dir, Options{SegmentBytes: 200, NoSync: true, Logger: slog.New(slog.DiscardHandler)})
	var got []string
	first, last, err := w2.Replay(0, func(s uint64, kind uint8, payload []byte) error {
		got = append(got, string(payload))
		return nil
	})
	if err != nil || first != 1 || last != seq || !slices.Equal(got, stored) {
		t.Fatalf("replay: %v, records %d to %d of %d:\n%q\nwant\n%q", err, first, last, seq, got, stored)
	}
}
