package wal

import (
	"bufio"
	"fmt"
	"os"

	"github.com/sift-search/sift/engine/internal/fsx"
)

// ReplayOptions say what recovery knows from outside the log.
type ReplayOptions struct {
	// After is the loaded snapshot's sequence number: records up to it are
	// read and checked but not passed to fn.
	After uint64
	// Acked is the highest sequence number that something outside the log
	// shows was acknowledged — the newest snapshot file's, damaged or not
	// — and AckedBy names it in messages. A log that cannot reach it has
	// lost acknowledged writes, and damage at its end is no torn write.
	Acked   uint64
	AckedBy string
	// AcceptLoss: when acknowledged writes cannot be replayed, replay what
	// comes before the break and report the rest in Replayed.Lost instead
	// of failing. Nothing is changed on disk; see SetAside.
	AcceptLoss bool
}

// Replayed is what a replay read.
type Replayed struct {
	First, Last uint64 // first and last sequence numbers read; 0 when none
	// Cut is the torn tail cut off the last segment (read-only: left for
	// the next server to cut): a write a crash interrupted, never
	// acknowledged.
	Cut *CorruptionError
	// Skipped is damage that loses nothing, skipped with a warning: in a
	// segment whose records the snapshot holds, or after every record the
	// next segment's name requires.
	Skipped []*CorruptionError
	// Lost, only with AcceptLoss, is what could not be replayed.
	Lost *LossError
}

// Replay calls fn for every record numbered above after (the snapshot's),
// in order, and returns the first and last sequence numbers read (0 when
// none). It is ReplayWith knowing nothing outside the log but the snapshot.
func (w *Log) Replay(after uint64, fn func(seq uint64, kind uint8, payload []byte) error) (first, last uint64, err error) {
	res, err := w.ReplayWith(ReplayOptions{After: after, Acked: after}, fn)
	return res.First, res.Last, err
}

// ReplayWith calls fn for every record numbered above o.After, in order,
// and says what it read. A segment's first record must carry the number in
// its name, and every later one the next number; the segments' names must
// follow on from the records before them.
//
// Damage in a segment loses nothing, and is skipped with a warning naming
// the file and offset, when the snapshot holds every record the segment
// should (the next segment's name is at most o.After+1) or when the
// records before the damage already reach the next segment's name. A bad
// frame in the last segment, with nothing valid after it in the segment
// and no snapshot numbered beyond the records before it, is a torn tail —
// a crash in the middle of a write, never acknowledged: it is cut off (the
// cut synced) and logged.
//
// Anything else — a gap between segments, a segment that ends early,
// damage before valid records or before a later segment, a log that ends
// before o.Acked — has lost acknowledged writes: a *LossError naming the
// files and the missing sequence numbers, which wraps the damage (a
// *CorruptionError) if there is one; with o.AcceptLoss, Replayed.Lost. An
// error of fn is returned as a CorruptionError at the record's offset.
func (w *Log) ReplayWith(o ReplayOptions, fn func(seq uint64, kind uint8, payload []byte) error) (Replayed, error) {
	segs, err := w.segments()
	if err != nil {
		return Replayed{}, err
	}
	rp := &replay{w: w, o: o, segs: segs, fn: fn}
	if err := rp.run(); err != nil {
		return Replayed{}, err
	}
	if err := rp.syncLast(); err != nil {
		return Replayed{}, err
	}
	return rp.res, nil
}

// syncLast syncs the segment holding the last record read: a process that
// crashed may have written records it never synced, and the state about
// to be served, and the segment the caller names after it, build on them.
// A segment named N must only ever exist once every record before N is
// durable.
func (rp *replay) syncLast() error {
	if rp.w.readOnly || rp.w.noSync || rp.lastPath == "" {
		return nil
	}
	f, err := os.Open(rp.lastPath)
	if err != nil {
		return fmt.Errorf("open wal segment to sync: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync replayed wal segment: %w", err)
	}
	return nil
}

// replay is one run of ReplayWith.
type replay struct {
	w        *Log
	o        ReplayOptions
	segs     []Segment
	fn       func(uint64, uint8, []byte) error
	res      Replayed
	lastPath string // the segment holding res.Last
}

// reached is the last write the state reaches: the snapshot's, or the last
// record read.
func (rp *replay) reached() uint64 { return max(rp.o.After, rp.res.Last) }

func (rp *replay) run() error {
	for i, s := range rp.segs {
		if s.First > rp.reached()+1 {
			return rp.lose(rp.gapBefore(i), i)
		}
		if rp.res.Last >= s.First {
			return &CorruptionError{File: s.Path, Err: fmt.Errorf("named after record %d, but %s holds records up to %d", s.First, rp.lastPath, rp.res.Last)}
		}
		end, ce, err := rp.segment(s)
		if err != nil {
			return err
		}
		if ce == nil {
			continue
		}
		if stop, err := rp.damaged(i, end, ce); stop {
			return err
		}
	}
	if rp.o.Acked > rp.reached() {
		return rp.lose(rp.short(), len(rp.segs))
	}
	return nil
}

// segment replays one segment; see scanSegment.
func (rp *replay) segment(s Segment) (int64, *CorruptionError, error) {
	f, err := os.Open(s.Path)
	if err != nil {
		return 0, nil, fmt.Errorf("open wal segment: %w", err)
	}
	defer f.Close()
	return scanSegment(bufio.NewReaderSize(f, 1<<20), s.Path, s.First, func(seq uint64, kind uint8, payload []byte) error {
		if rp.res.First == 0 {
			rp.res.First = seq
		}
		rp.res.Last, rp.lastPath = seq, s.Path
		if seq > rp.o.After {
			return rp.fn(seq, kind, payload)
		}
		return nil
	})
}

// damaged decides what a bad frame at end of segment i costs: nothing
// (skipped, replay goes on), a torn tail (cut, replay ends) or
// acknowledged writes (a loss). stop reports that replay ends here.
func (rp *replay) damaged(i int, end int64, ce *CorruptionError) (stop bool, err error) {
	s := rp.segs[i]
	segLast := max(rp.res.Last, s.First-1)
	if i+1 < len(rp.segs) {
		next := rp.segs[i+1]
		switch {
		case next.First-1 <= rp.o.After:
			rp.skip(ce, "skipping damage in a write-ahead log segment the snapshot already holds", next.First-1)
			return false, nil
		case segLast >= next.First-1:
			rp.skip(ce, "skipping damage after the last record of a write-ahead log segment: the next segment's name shows none is missing", next.First-1)
			return false, nil
		}
		return true, rp.lose(&LossError{From: rp.reached() + 1, To: next.First - 1, Damage: ce,
			Break: fmt.Sprintf("%v; its records end at %d but the next segment, %s, starts at %d", ce, segLast, next.Path, next.First)}, i+1)
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return true, fmt.Errorf("read damaged wal segment: %w", err)
	}
	first, last := recordsAfter(b, end, segLast)
	if first != 0 && max(last, rp.o.Acked) <= rp.o.After {
		rp.skip(ce, "skipping damage in a write-ahead log segment the snapshot already holds", last)
		return true, nil
	}
	if first != 0 {
		return true, rp.lose(&LossError{From: segLast + 1, To: max(first-1, segLast+1), Acked: last, Damage: ce,
			Break: fmt.Sprintf("%v, and valid records %d to %d follow it: the log is damaged, not torn", ce, first, last)}, i+1)
	}
	if rp.o.Acked > rp.reached() {
		return true, rp.lose(&LossError{From: rp.reached() + 1, To: rp.o.Acked, Damage: ce,
			Break: fmt.Sprintf("%v after record %d: not a torn write, since later writes were acknowledged", ce, segLast)}, i+1)
	}
	return true, rp.cut(s, end, ce)
}

func (rp *replay) skip(ce *CorruptionError, msg string, upTo uint64) {
	rp.w.log.Warn(msg, "segment", ce.File, "offset", ce.Offset, "cause", ce.Err,
		"records_up_to", upTo, "snapshot_seq", rp.o.After)
	rp.res.Skipped = append(rp.res.Skipped, ce)
}

// cut cuts a torn tail off the last segment, or in a read-only log leaves
// it for the next server.
func (rp *replay) cut(s Segment, end int64, ce *CorruptionError) error {
	rp.res.Cut = ce
	if rp.w.readOnly {
		rp.w.log.Warn("torn tail of write-ahead log left for the next server to cut", "segment", s.Path, "offset", end, "cause", ce.Err)
		return nil
	}
	rp.w.log.Warn("cutting torn tail of write-ahead log", "segment", s.Path, "offset", end, "cause", ce.Err)
	if err := cutTail(s.Path, end); err != nil {
		return err
	}
	return fsx.SyncDir(rp.w.dir)
}

// gapBefore describes records that no segment holds, before segment i.
func (rp *replay) gapBefore(i int) *LossError {
	s := rp.segs[i]
	le := &LossError{From: rp.reached() + 1, To: s.First - 1}
	if rp.res.Last > rp.o.After {
		le.Break = fmt.Sprintf("the log's records end at %d in %s and the next segment, %s, starts at %d: a segment is missing or was cut short",
			rp.res.Last, rp.lastPath, s.Path, s.First)
	} else {
		le.Break = fmt.Sprintf("the log resumes at record %d (%s), after %d", s.First, s.Path, rp.o.After)
	}
	return le
}

// short describes a log that ends before o.Acked.
func (rp *replay) short() *LossError {
	le := &LossError{From: rp.reached() + 1, To: rp.o.Acked}
	if rp.res.Last > rp.o.After {
		le.Break = fmt.Sprintf("the log ends at record %d in %s", rp.res.Last, rp.lastPath)
	} else {
		le.Break = fmt.Sprintf("the log holds no record after %d", rp.o.After)
	}
	return le
}

// lose completes le with what replay reached and the evidence of later
// writes: the segments from index later on, and o.Acked. It returns le, or
// with o.AcceptLoss keeps it in the result and returns nil.
func (rp *replay) lose(le *LossError, later int) error {
	le.Reached = rp.reached()
	le.Acked = max(le.Acked, le.To, rp.o.Acked)
	laterEvidence(le, rp.segs[later:])
	if rp.o.Acked > le.Reached && rp.o.AckedBy != "" {
		le.Evidence = append(le.Evidence, fmt.Sprintf("%s shows writes up to %d were acknowledged", rp.o.AckedBy, rp.o.Acked))
	}
	if !rp.o.AcceptLoss {
		return le
	}
	rp.res.Lost = le
	return nil
}

// cutTail truncates a segment at end (removing it when not even its header
// is whole) and syncs the change, so a power cut cannot bring the tail back.
func cutTail(path string, end int64) error {
	if end < HeaderSize {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("remove torn wal segment: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open torn wal: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("truncate torn wal: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync truncated wal: %w", err)
	}
	return nil
}
