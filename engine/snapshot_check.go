package engine

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sift-search/sift/engine/internal/wal"
)

// SegmentInfo is what one write-ahead log segment holds; see InspectSegment.
type SegmentInfo = wal.SegmentInfo

// InspectSegment reads a whole write-ahead log segment from r as start-up
// does, decoding every record, and says what it holds: its records'
// sequence numbers and any damage — a torn tail (nothing valid after it),
// or damage before valid records or in a record that does not decode.
// path names it in errors; named is the sequence number its file is named
// after (SegmentName), 0 when unknown. The error is for what is not
// damage: I/O, an unsupported format version.
func InspectSegment(r io.Reader, path string, named uint64) (*SegmentInfo, error) {
	return wal.InspectSegment(r, path, named, checkRecord)
}

// SegmentName returns the sequence number a segment file's name carries.
func SegmentName(path string) (uint64, bool) { return wal.ParseName(filepath.Base(path)) }

// DirCheck is what CheckDataDir found in a data directory and what
// start-up would do with it.
type DirCheck struct {
	Dir       string
	InUse     bool            // a server holds the directory: its log may have grown while it was read
	Snapshots []SnapshotCheck // newest first
	Segments  []SegmentCheck  // in sequence order
	Loads     *SnapshotCheck  // the snapshot start-up loads; nil: none, it replays the log alone
	Reaches   uint64          // the last write start-up would serve
	Acked     uint64          // the last write the directory shows was acknowledged
	Cut       *CorruptionError
	Skipped   []*CorruptionError // damage start-up skips: it loses nothing
	Lost      *LossError         // start-up refuses: acknowledged writes it cannot replay
	Err       error              // start-up fails for another reason (a record that does not decode)
}

// SnapshotCheck is one snapshot file as CheckDataDir read it.
type SnapshotCheck struct {
	Path    string
	Seq     uint64           // from its name
	Summary *SnapshotSummary // what it holds; nil when it cannot be read
	Err     error            // why start-up cannot load it; nil when it can
}

// SegmentCheck is one log segment as CheckDataDir read it.
type SegmentCheck struct {
	Path  string
	Named uint64       // the sequence number in its name
	Info  *SegmentInfo // nil when it cannot be read (Err)
	Err   error
}

// Severity grades a check: 0 nothing is damaged; 1 damage start-up
// recovers from by itself without losing an acknowledged write (a
// snapshot it falls back from, a torn tail it cuts, damage in a segment a
// snapshot holds); 2 start-up refuses, or would lose acknowledged writes.
func (c *DirCheck) Severity() int {
	if c.Lost != nil || c.Err != nil {
		return 2
	}
	if c.Cut != nil || len(c.Skipped) > 0 {
		return 1
	}
	for _, s := range c.Snapshots {
		if s.Err != nil {
			return 1
		}
	}
	for _, s := range c.Segments {
		if s.Err != nil || s.Info.Damage != nil {
			return 1
		}
	}
	return 0
}

// CheckDataDir reads every snapshot and log segment of dir the way start-up
// does and says what start-up would do: serve every acknowledged write,
// fall back to an older snapshot, cut a torn tail, or refuse. It changes
// nothing and takes no lock, so a server can start meanwhile; InUse says
// that one held the directory when the check began (its log may then grow
// while it is read). newFollower, when not nil, gives a fresh follower to
// validate each snapshot's section with. The error is for a directory that
// cannot be read at all, or holds nothing of Sift's. It reads every file whole: O(data dir) time, one
// snapshot's state in memory at a time.
func CheckDataDir(dir string, newFollower func() Follower) (*DirCheck, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("data dir %s: not a directory to read", dir)
	}
	c := &DirCheck{Dir: dir, InUse: dirInUse(dir)}
	files, err := snapshotFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, sf := range files {
		c.Snapshots = append(c.Snapshots, checkSnapshotFile(sf, newFollower))
	}
	ch := chooseSnapshot(files, func(i int) error { return c.Snapshots[i].Err })
	segs, err := wal.Segments(filepath.Join(dir, "wal"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, s := range segs {
		c.Segments = append(c.Segments, checkSegmentFile(s))
	}
	if _, err := os.Stat(filepath.Join(dir, lockName)); err != nil && len(files) == 0 && len(segs) == 0 {
		return nil, fmt.Errorf("data dir %s holds no Sift data (no %s file, no snapshot, no log)", dir, lockName)
	}
	c.replay(ch)
	return c, nil
}

// dirInUse reports whether a process holds dir's lock exclusively: a server.
func dirInUse(dir string) bool {
	f, err := os.Open(filepath.Join(dir, lockName))
	if err != nil {
		return false
	}
	defer f.Close() // closing releases a lock taken here
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil
}

func checkSnapshotFile(sf snapFile, newFollower func() Follower) SnapshotCheck {
	c := SnapshotCheck{Path: sf.path, Seq: sf.seq}
	f, err := os.Open(sf.path)
	if err != nil {
		c.Err = err
		return c
	}
	defer f.Close()
	var fl Follower
	if newFollower != nil {
		fl = newFollower()
	}
	c.Summary, c.Err = InspectSnapshot(f, fl)
	if c.Err == nil && c.Summary.Seq != sf.seq {
		c.Err = fmt.Errorf("its header says sequence %d: start-up skips it", c.Summary.Seq)
	}
	return c
}

func checkSegmentFile(s wal.Segment) SegmentCheck {
	c := SegmentCheck{Path: s.Path, Named: s.First}
	f, err := os.Open(s.Path)
	if err != nil {
		c.Err = err
		return c
	}
	defer f.Close()
	c.Info, c.Err = InspectSegment(f, s.Path, s.First)
	return c
}

// replay runs start-up's replay over the log, read-only, after the
// snapshot ch chose.
func (c *DirCheck) replay(ch snapshotChoice) {
	var after uint64
	if ch.loaded >= 0 {
		c.Loads = &c.Snapshots[ch.loaded]
		after = c.Loads.Seq
	}
	c.Acked = max(after, ch.acked)
	w, err := wal.Open(filepath.Join(c.Dir, "wal"), wal.Options{ReadOnly: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		c.Err = err
		return
	}
	res, err := w.ReplayWith(wal.ReplayOptions{After: after, Acked: c.Acked, AckedBy: ch.ackedBy}, checkRecord)
	var le *LossError
	switch {
	case errors.As(err, &le):
		c.Lost, c.Reaches, c.Acked = le, le.Reached, le.Acked
	case err != nil:
		c.Err = err
	default:
		c.Reaches = max(after, res.Last)
		c.Acked = max(c.Acked, c.Reaches)
		c.Cut, c.Skipped = res.Cut, res.Skipped
	}
}
