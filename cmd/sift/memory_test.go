package main

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

func TestWorthReleasing(t *testing.T) {
	for _, c := range []struct {
		held, inuse uint64
		want        bool
	}{
		{0, 1 << 30, false},
		{32 << 20, 1 << 20, false},  // little
		{100 << 20, 1 << 30, false}, // under a quarter of the heap
		{300 << 20, 1 << 30, true},
		{100 << 20, 200 << 20, true},
	} {
		if got := worthReleasing(c.held, c.inuse); got != c.want {
			t.Errorf("worthReleasing(%d, %d) = %v", c.held, c.inuse, got)
		}
	}
}

// TestReleaseMemory: garbage of a few hundred megabytes, collected, is
// given back to the system by the releaser.
func TestReleaseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 512 MiB")
	}
	var keep [][]byte
	for i := 0; i < 512; i++ {
		b := make([]byte, 1<<20)
		for j := range b {
			b[j] = byte(j)
		}
		keep = append(keep, b)
	}
	keep = nil
	runtime.GC() // what a collection after a catch-up leaves: freed, still held
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go releaseMemory(ctx, 10*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if held := ms.HeapIdle - ms.HeapReleased; held < 64<<20 {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%d MiB of free heap still held", held>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
