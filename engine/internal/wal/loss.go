package wal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sift-search/sift/engine/internal/fsx"
)

// LossError means acknowledged writes cannot be replayed: records the log
// should hold are missing or unreadable, and a later segment's name or
// records, or a snapshot's name, shows they were acknowledged.
type LossError struct {
	Reached  uint64 // replay reaches this write: what start-up would serve
	From, To uint64 // the records missing: no readable file holds them
	// Acked is the last write shown to be acknowledged: writes Reached+1
	// to Acked are lost.
	Acked    uint64
	Break    string   // what breaks the log, naming the files
	Evidence []string // what shows the writes after the break were acknowledged
	// Damage is the bad frame replay stopped at, if any: accepting the
	// loss cuts its segment there.
	Damage *CorruptionError
	// Later are the segments after the break: their records cannot be
	// applied without the missing ones.
	Later []string
}

func (e *LossError) Error() string {
	var b strings.Builder
	are := "are"
	if e.From == e.To {
		are = "is"
	}
	fmt.Fprintf(&b, "acknowledged %s cannot be replayed: %s %s missing: %s",
		span("write", e.Reached+1, e.Acked), span("record", e.From, e.To), are, e.Break)
	for _, ev := range e.Evidence {
		b.WriteString("; ")
		b.WriteString(ev)
	}
	return b.String()
}

// Unwrap returns the damage, if any.
func (e *LossError) Unwrap() error {
	if e.Damage == nil {
		return nil
	}
	return e.Damage
}

// Lost is how many acknowledged writes replay cannot reach.
func (e *LossError) Lost() uint64 { return e.Acked - e.Reached }

// span names the numbers from to to: "records 3 to 9", "record 3".
func span(what string, from, to uint64) string {
	if from == to {
		return fmt.Sprintf("%s %d", what, from)
	}
	return fmt.Sprintf("%ss %d to %d", what, from, to)
}

// laterEvidence adds to le the segments after the break: their paths, and
// what they hold as evidence of the writes after it.
func laterEvidence(le *LossError, later []Segment) {
	var first, last uint64
	for _, s := range later {
		le.Later = append(le.Later, s.Path)
		lo, hi, note := readLater(s)
		if note != "" {
			le.Evidence = append(le.Evidence, note)
		}
		if lo != 0 && first == 0 {
			first = lo
		}
		last = max(last, hi)
	}
	le.Acked = max(le.Acked, last)
	switch {
	case first == 0:
	case len(later) == 1:
		le.Evidence = append(le.Evidence, fmt.Sprintf("%s holds %s", later[0].Path, span("record", first, last)))
	default:
		le.Evidence = append(le.Evidence, fmt.Sprintf("the %d segments from %s to %s hold %s",
			len(later), later[0].Path, later[len(later)-1].Path, span("record", first, last)))
	}
}

// readLater reads a segment after a break: the first record it holds (0:
// none) and the last write it shows (its records, or its name), and a note
// when it is damaged or unreadable.
func readLater(s Segment) (first, last uint64, note string) {
	f, err := os.Open(s.Path)
	if err != nil {
		return 0, s.First - 1, fmt.Sprintf("%s cannot be read: %v", s.Path, err)
	}
	defer f.Close()
	info, err := InspectSegment(f, s.Path, s.First, nil)
	switch {
	case err != nil:
		return 0, s.First - 1, fmt.Sprintf("%s cannot be read: %v", s.Path, err)
	case info.Damage != nil:
		note = fmt.Sprintf("%s is damaged too, at offset %d", s.Path, info.Damage.Offset)
	}
	return info.First, max(s.First-1, info.Last, info.AfterLast), note
}

// SetAside moves what e says cannot be replayed out of the log into the
// directory dst, which it creates: the segments after the break, whole,
// and a copy of the segment holding the damage, which is then cut there.
// The log then ends where replay stopped, so new records can follow it.
// Every step is synced.
func (w *Log) SetAside(e *LossError, dst string) error {
	if w.readOnly {
		return errors.New("set aside wal segments: the log is read-only")
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	if d := e.Damage; d != nil {
		if err := copyFile(d.File, filepath.Join(dst, filepath.Base(d.File))); err != nil {
			return err
		}
		if err := fsx.SyncDir(dst); err != nil {
			return err
		}
		if err := cutTail(d.File, d.Offset); err != nil {
			return err
		}
	}
	for _, p := range e.Later {
		if err := os.Rename(p, filepath.Join(dst, filepath.Base(p))); err != nil {
			return fmt.Errorf("set aside wal segment: %w", err)
		}
	}
	if err := fsx.SyncDir(dst); err != nil {
		return err
	}
	return fsx.SyncDir(w.dir)
}

// copyFile copies src to dst and syncs dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("sync copy of %s: %w", src, err)
	}
	return out.Close()
}
