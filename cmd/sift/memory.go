package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"
)

// releaseMemory gives the memory work leaves behind back to the system
// once the work ends. After a bulk import, the semantic layer's catch-up
// (minutes of clustering at 10M messages) or loading a snapshot, the
// heap holds the work's garbage (collected only when the heap next
// doubles, or by Go's two-minute forced collection) and then the freed
// pages, which Go's scavenger returns only slowly and only down to the
// next collection's goal: an idle server would sit on up to twice the
// memory it needs. Every interval it reads the allocation counter; the
// first quiet interval (under r.quiet bytes allocated) after over r.busy
// bytes were allocated since the last release collects and releases.
// Under steady load nothing is forced: the collector runs as it must.
func releaseMemory(ctx context.Context, every time.Duration, r releaser, allocated func() uint64, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !r.due(allocated()) {
			continue
		}
		start := time.Now()
		debug.FreeOSMemory()
		log.Debug("returned the memory of a burst of work", "took", time.Since(start))
	}
}

// totalAllocated is the bytes the process has allocated since it started.
func totalAllocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// releaser decides when to release from the allocation counter's readings.
type releaser struct {
	busy, quiet uint64 // bytes allocated since the last release worth one; in a quiet interval

	// last is the counter at the previous reading: 0 at the start, so that
	// loading a snapshot before the first reading counts.
	last  uint64
	since uint64 // bytes allocated since the last release
}

// serveReleaser is sift serve's, read every minute: a release once a
// quarter of a gigabyte was allocated, in the first minute allocating
// under 16 MiB.
var serveReleaser = releaser{busy: 256 << 20, quiet: 16 << 20}

// due takes the allocation counter and reports whether to release now.
func (r *releaser) due(total uint64) bool {
	d := total - r.last
	r.last = total
	r.since += d
	if d < r.quiet && r.since > r.busy {
		r.since = 0
		return true
	}
	return false
}
