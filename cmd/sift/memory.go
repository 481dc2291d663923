package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"
)

// releaseMemory gives the memory a burst of work leaves behind back to the
// system once the burst ends. After a bulk import or the semantic layer's
// catch-up the heap holds the work's garbage (collected only when the heap
// next doubles, or by Go's two-minute forced collection) and then the
// freed pages, which Go's scavenger returns only slowly and only down to
// the next collection's goal: an idle server would sit on up to twice
// the memory it needs. Every interval it reads how much was allocated
// since the last check: over r.busy bytes marks a burst; the first quiet
// check after a burst (under r.quiet bytes) collects and releases, once.
// Under steady load nothing is forced: the collector runs as it must.
// allocated reads the counter: totalAllocated, or a test's.
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
	busy, quiet uint64 // bytes allocated between readings in a burst, when quiet

	// last is the counter at the previous reading: 0 at the start, so that
	// loading a snapshot before the first reading counts as a burst.
	last  uint64
	burst bool // a burst since the last release
}

// serveReleaser is sift serve's, read every minute: a burst allocates a
// quarter of a gigabyte a minute, a quiet minute under 16 MiB.
var serveReleaser = releaser{busy: 256 << 20, quiet: 16 << 20}

// due takes the allocation counter and reports whether to release now.
func (r *releaser) due(total uint64) bool {
	d := total - r.last
	r.last = total
	switch {
	case d > r.busy:
		r.burst = true
	case r.burst && d < r.quiet:
		r.burst = false
		return true
	}
	return false
}
