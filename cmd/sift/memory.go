package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"
)

// releaseMemory returns memory the heap no longer uses to the system when
// a lot of it has piled up: after a bulk import or the semantic layer's
// catch-up, the garbage collector frees gigabytes that Go's scavenger
// would give back only slowly (it keeps about as much as the heap may
// grow to before the next collection, up to twice the live heap), so an
// idle server would sit on twice the memory it needs. Checked every
// interval; a release forces one collection, run at most once per check.
func releaseMemory(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if !worthReleasing(ms.HeapIdle-ms.HeapReleased, ms.HeapInuse) {
			continue
		}
		start := time.Now()
		debug.FreeOSMemory()
		log.Debug("returned unused memory", "held_idle_bytes", ms.HeapIdle-ms.HeapReleased, "took", time.Since(start))
	}
}

// worthReleasing reports whether held, memory the heap holds unused, is
// worth a collection to give back: over 64 MiB and over a quarter of the
// heap in use.
func worthReleasing(held, inuse uint64) bool {
	return held > 64<<20 && held > inuse/4
}
