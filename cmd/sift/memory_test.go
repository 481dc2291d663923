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
		{1 << 30, false},         // busy: loading a snapshot
		{1<<30 + 8<<20, true},    // quiet: release
		{1<<30 + 9<<20, false},   // quiet, nothing since
		{2 << 30, false},         // busy
		{3 << 30, false},         // still busy
		{3<<30 + 100<<20, false}, // slower, not quiet
		{3<<30 + 101<<20, true},  // quiet: release
		{3<<30 + 102<<20, false}, // once
		{3<<30 + 202<<20, false}, // a slow build: 100 MiB a reading
		{3<<30 + 302<<20, false},
		{3<<30 + 402<<20, false},
		{3<<30 + 403<<20, true}, // over 256 MiB since, then quiet
		{3<<30 + 404<<20, false},
	}
	for i, s := range steps {
		if got := r.due(s.total); got != s.want {
			t.Errorf("step %d: due = %v", i, got)
		}
	}
}

// TestReleaseMemory: garbage of 512 MiB, then the allocation counter
// shows a burst and a quiet reading: the releaser collects the garbage
// and the heap gives its pages back to the system. The counter is
// scripted so that other tests' allocations in this process cannot keep
// the releaser from seeing quiet.
func TestReleaseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 512 MiB")
	}
	page := make([]byte, 1<<20)
	for j := range page {
		page[j] = byte(j)
	}
	var keep [][]byte
	for i := 0; i < 512; i++ {
		keep = append(keep, append([]byte(nil), page...))
	}
	held := func() uint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapSys - ms.HeapReleased
	}
	before := held()
	keep = nil
	readings := make(chan uint64, 3)
	readings <- 0       // the start
	readings <- 1 << 30 // a burst
	readings <- 1 << 30 // then quiet
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counter := func() uint64 {
		select {
		case v := <-readings:
			return v
		default:
			return 1 << 30
		}
	}
	go releaseMemory(ctx, 20*time.Millisecond, serveReleaser, counter, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if now := held(); now+400<<20 < before {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("the heap holds %d MiB from the system, %d MiB with the garbage live", now>>20, before>>20)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
