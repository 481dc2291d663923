// Package waltest holds a test double for the write-ahead log's files.
package waltest

import (
	"sync/atomic"
	"syscall"

	"github.com/sift-search/sift/engine/internal/wal"
)

// FullDisk makes a log's segment files fail the way a full disk does
// while Full is set: a write stores part of its bytes, then reports
// ENOSPC. With NoTruncate set, cutting a failed write off fails too.
type FullDisk struct {
	Full       atomic.Bool
	NoTruncate atomic.Bool
}

type file struct {
	wal.File
	d *FullDisk
}

func (f file) Write(p []byte) (int, error) {
	if !f.d.Full.Load() {
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

func (f file) Truncate(size int64) error {
	if f.d.NoTruncate.Load() {
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

// Install routes w's current segment and every new one through d.
func (d *FullDisk) Install(w *wal.Log) {
	w.WrapFiles(func(f wal.File) wal.File { return file{f, d} })
}
