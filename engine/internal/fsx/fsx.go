// Package fsx holds the file-system steps the log and the snapshots share
// to make their files durable.
package fsx

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// SyncDir fsyncs a directory so a file created or renamed in it persists.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}

// RemoveTemps deletes the files of dir named with suffix: temporary files
// an interrupted write left behind.
func RemoveTemps(dir, suffix string, log *slog.Logger) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err == nil {
				log.Info("removed leftover temporary file", "path", p)
			}
		}
	}
}
