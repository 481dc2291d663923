package main

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

func TestReleaserDue(t *testing.T) {
	r := serveReleaser
	steps := []struct {
		total uint64
		want  bool
	}{
		{8 << 20, false},         // quiet from the start
		{1 << 30, false},         // a burst: loading a snapshot
		{1<<30 + 8<<20, true},    // quiet: release
		{1<<30 + 9<<20, false},   // quiet, no burst before
		{2 << 30, false},         // a burst
		{3 << 30, false},         // still busy
		{3<<30 + 100<<20, false}, // slower, not quiet
		{3<<30 + 101<<20, true},  // quiet: release
		{3<<30 + 102<<20, false}, // once
		{4 << 30, false},         // another burst
		{4<<30 + 1<<20, true},    // and its release
	}
	for i, s := range steps {
		if got := r.due(s.total); got != s.want {
			t.Errorf("step %d: due = %v", i, got)
		}
	}
}

// TestReleaseMemory: a burst of 512 MiB of garbage, then quiet: the
// releaser collects it and the heap gives the pages back to the system.
func TestReleaseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 512 MiB")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go releaseMemory(ctx, 50*time.Millisecond, releaser{busy: 4 << 20, quiet: 1 << 20}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	time.Sleep(100 * time.Millisecond) // its first reading
	page := make([]byte, 1<<20)
	for j := range page {
		page[j] = byte(j)
	}
	var keep [][]byte
	for i := 0; i < 512; i++ {
		keep = append(keep, append([]byte(nil), page...))
	}
	keep = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if held := ms.HeapSys - ms.HeapReleased; held < 128<<20 {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("the heap still holds %d MiB from the system", held>>20)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
