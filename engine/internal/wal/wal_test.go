package wal_test

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/sift-search/sift/engine/internal/wal"
	"github.com/sift-search/sift/engine/internal/wal/waltest"
)

// kindTest is the record kind the tests write; the log does not look at it.
const kindTest = 7

func globTemps(dir string) []string {
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	return tmps
}

// TestWALSurvivesFailedRotationAndWrites drives the log directly through
// every failure a full disk causes: a rotation whose new segment cannot be
// written, writes that store part of a record, and a cut of such a write
// that fails too. Each is retried by the next write, and replay finds
// exactly the records that were written.
func TestWALSurvivesFailedRotationAndWrites(t *testing.T) {
	dir := t.TempDir()
	w, err := wal.Open(dir, wal.Options{SegmentBytes: 200, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var disk waltest.FullDisk
	disk.Install(w)
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
	segsBefore, _ := wal.Segments(dir)

	disk.Full.Store(true)
	// A snapshot's rotation fails: the current segment stays in use.
	if err := w.Rotate(seq + 1); !errors.Is(err, wal.ErrUnavailable) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("rotation on a full disk: %v", err)
	}
	if segs, _ := wal.Segments(dir); !slices.Equal(segs, segsBefore) || len(globTemps(dir)) != 0 {
		t.Fatalf("a failed rotation left files: %v", segs)
	}
	// Writes fail (the segment is past its size, so each also tries to
	// rotate), storing half a record each time, cut off again.
	for range 3 {
		if err := put(); !errors.Is(err, wal.ErrUnavailable) {
			t.Fatalf("write on a full disk: %v", err)
		}
	}
	// A failed write whose cut fails too: the next write must cut first.
	disk.NoTruncate.Store(true)
	if err := put(); !errors.Is(err, wal.ErrUnavailable) {
		t.Fatalf("write on a full disk: %v", err)
	}
	disk.Full.Store(false)
	if err := put(); !errors.Is(err, wal.ErrUnavailable) {
		t.Fatalf("write after a failed cut: %v", err)
	}
	if err := w.Rotate(seq + 1); !errors.Is(err, wal.ErrUnavailable) {
		t.Fatalf("rotation with a torn write in the segment: %v", err)
	}
	disk.NoTruncate.Store(false)

	// Space is back: writes succeed, rotations too.
	for range 6 {
		if err := put(); err != nil {
			t.Fatalf("write after space returned: %v", err)
		}
	}
	if segs, _ := wal.Segments(dir); len(segs) <= len(segsBefore) {
		t.Fatalf("no rotation after space returned: %d segments", len(segs))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, _ := wal.Open(dir, wal.Options{SegmentBytes: 200, NoSync: true, Logger: slog.New(slog.DiscardHandler)})
	var got []string
	first, last, err := w2.Replay(0, func(s uint64, kind uint8, payload []byte) error {
		got = append(got, string(payload))
		return nil
	})
	if err != nil || first != 1 || last != seq || !slices.Equal(got, stored) {
		t.Fatalf("replay: %v, records %d to %d of %d:\n%q\nwant\n%q", err, first, last, seq, got, stored)
	}
}
