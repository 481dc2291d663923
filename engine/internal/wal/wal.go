// Package wal is Sift's write-ahead log: a directory of segment files of
// checksummed frames, each record a sequence number, a kind and a payload.
// It knows bytes, frames, segments, torn tails and full disks; record kinds
// are numbers to it, and what a payload means is its caller's business.
//
// A segment is named after the sequence number of its first record
// (%020d.wal). It starts with the 8-byte magic and a u32 version, then holds
// frames whose body is u8 kind | u64 sequence number | payload. See
// docs/format.md.
package wal

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sift-search/sift/engine/internal/frame"
	"github.com/sift-search/sift/engine/internal/fsx"
	rec "github.com/sift-search/sift/record"
)

const (
	walMagic   = "SIFTWAL\x00"
	walVersion = 1
	// HeaderSize is the size of a segment's header; a segment no larger
	// holds no record.
	HeaderSize = 12
	walSuffix  = ".wal"
	tmpSuffix  = ".tmp"
	// MaxPayload is the largest payload of one record: a frame's body
	// less the kind byte and the sequence number.
	MaxPayload = frame.MaxBody - 9
)

var (
	// ErrUnavailable: the log cannot be written (a full disk); writes
	// succeed again by themselves once it can be. After a failed fsync
	// the log refuses writes until it is opened again.
	ErrUnavailable = rec.ErrUnavailable
	// ErrTooLarge: a record's payload exceeds MaxPayload.
	ErrTooLarge = errors.New("record too large")
)

// CorruptionError says where a persisted file is damaged.
type CorruptionError struct {
	File   string
	Offset int64
	Err    error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("corrupt %s at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// Options configure a Log.
type Options struct {
	SegmentBytes int64        // a segment past this size is followed by a new one
	NoSync       bool         // never fsync (tests, throw-away data)
	ReadOnly     bool         // replay only: nothing is cut, created or removed
	Logger       *slog.Logger // nil: slog.Default()
}

// Log is a write-ahead log in one directory. Appends are serialised by the
// caller; Sync may be called concurrently with them.
type Log struct {
	dir      string
	log      *slog.Logger
	segBytes int64
	noSync   bool
	readOnly bool // replay only: nothing is cut, created or removed

	mu      sync.Mutex // guards the fields below
	create  func(path string) (File, error)
	f       File   // the current segment; nil until one could be created
	first   uint64 // sequence number the current segment is named after
	size    int64  // bytes of whole records in the current segment
	torn    bool   // a failed write may have left bytes after size
	written uint64 // sequence number of the last record written
	broken  error  // set when an fsync failed; no write succeeds after it
	buf     []byte

	syncMu sync.Mutex // one fsync at a time; taken before mu
	synced atomic.Uint64
}

// File is what the log writes a segment through: an *os.File, or in tests
// a file that fails the way a full disk does (see WrapFiles).
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// createSegmentFile creates a segment file for appending. O_APPEND: after a
// failed write is truncated away, the next one lands at the new end, not
// after a hole.
func createSegmentFile(path string) (File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Segment is one segment file.
type Segment struct {
	First uint64 // sequence number the segment is named after
	Path  string
}

// Open opens the log in dir, creating dir unless read-only, and removes
// segments whose creation was interrupted. It reads nothing: Replay does.
func Open(dir string, opts Options) (*Log, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	w := &Log{dir: dir, log: log, segBytes: opts.SegmentBytes, noSync: opts.NoSync, readOnly: opts.ReadOnly, create: createSegmentFile}
	if opts.ReadOnly {
		return w, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create wal dir: %w", err)
	}
	fsx.RemoveTemps(dir, tmpSuffix, log) // segments whose creation was interrupted
	return w, nil
}

func segmentPath(dir string, first uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", first, walSuffix))
}

// Segments lists the segment files of the log in dir in sequence order.
func Segments(dir string) ([]Segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list wal: %w", err)
	}
	var segs []Segment
	for _, e := range ents {
		first, ok := ParseName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		segs = append(segs, Segment{first, filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(segs, func(a, b Segment) int { return cmp.Compare(a.First, b.First) })
	return segs, nil
}

// segments lists the segment files in sequence order.
func (w *Log) segments() ([]Segment, error) {
	segs, err := Segments(w.dir)
	if w.readOnly && errors.Is(err, os.ErrNotExist) {
		return nil, nil // a data dir holding only a snapshot
	}
	return segs, err
}

// startSegment makes the current segment durable, then starts a new one
// whose first record will be seq and closes the old one. The caller holds
// syncMu and mu. Syncing the old segment first means a crash can tear only
// the newest segment.
//
// A new segment that cannot be made (a full disk) is not left behind, and
// the current segment stays in use: writes go on in it and the next
// rotation tries again. Only a failed fsync breaks the log.
func (w *Log) startSegment(seq uint64) error {
	if w.broken != nil {
		return w.unavailable()
	}
	if w.f != nil && w.first == seq {
		return nil // the current segment holds no record yet
	}
	if w.f != nil {
		if err := w.cutTorn(); err != nil {
			return err
		}
		if !w.noSync {
			if err := w.f.Sync(); err != nil {
				w.broken = fmt.Errorf("sync wal: %w", err)
				return w.unavailable()
			}
		}
		w.synced.Store(w.written)
	}
	f, err := w.createSegment(seq)
	if err != nil {
		return err
	}
	if w.f != nil {
		if err := w.f.Close(); err != nil {
			// Its records were synced above; nothing is lost.
			w.log.Warn("closing a write-ahead log segment failed", "err", err)
		}
	}
	w.f, w.first, w.size = f, seq, HeaderSize
	return nil
}

// createSegment writes the segment named after seq: header in a temporary
// file, synced, renamed into place, the directory synced. A segment file
// therefore exists under its name only whole, and only once no record
// numbered seq or later can go to the previous segment — replay and trim
// rely on the names. The caller holds mu.
func (w *Log) createSegment(seq uint64) (File, error) {
	path := segmentPath(w.dir, seq)
	tmp := path + tmpSuffix
	f, err := w.create(tmp)
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("%w: create wal segment: %w", ErrUnavailable, err)
	}
	fail := func(err error) (File, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	hdr := binary.LittleEndian.AppendUint32([]byte(walMagic), walVersion)
	if _, err := f.Write(hdr); err != nil {
		return fail(fmt.Errorf("write wal header: %w", err))
	}
	if !w.noSync {
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("sync new wal segment: %w", err))
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("name new wal segment: %w", err))
	}
	if !w.noSync {
		if err := fsx.SyncDir(w.dir); err != nil {
			// The new segment may or may not survive a crash: records
			// in it could vanish, records in the old one would
			// contradict its name. Stop writing.
			f.Close()
			w.broken = err
			return nil, w.unavailable()
		}
	}
	return f, nil
}

// cutTorn truncates what a failed write may have left after the last whole
// record, so the segment stays a clean sequence of frames. The caller
// holds mu; the next write or rotation retries a cut that failed.
func (w *Log) cutTorn() error {
	if !w.torn {
		return nil
	}
	if err := w.f.Truncate(w.size); err != nil {
		return fmt.Errorf("%w: cut a failed wal write: %v", ErrUnavailable, err)
	}
	w.torn = false
	return nil
}

func (w *Log) unavailable() error {
	return fmt.Errorf("%w: %v (writes resume after a restart)", ErrUnavailable, w.broken)
}

// Rotate starts a new segment at seq (the next record's number), so that the
// segments before it hold only records up to seq-1. When it fails the
// current segment, if any, stays in use.
func (w *Log) Rotate(seq uint64) error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.startSegment(seq)
}

// Resume tells the log that every record up to seq is written and durable:
// the state the caller loaded at start-up reaches seq, so Sync(seq) has
// nothing to do and the next Append is seq+1.
func (w *Log) Resume(seq uint64) {
	w.mu.Lock()
	w.written = seq
	w.mu.Unlock()
	w.synced.Store(seq)
}

// Append writes one record. It does not sync; see Sync. Appends are
// serialised by the caller. A failed write is cut off again (now, or before
// the next write if even that fails), so the log stays a clean sequence of
// frames and the next write can succeed once the disk has room.
func (w *Log) Append(seq uint64, kind uint8, payload []byte) error {
	if len(payload) > MaxPayload {
		return fmt.Errorf("%w: write of %d bytes exceeds the %d-byte record limit", ErrTooLarge, len(payload), frame.MaxBody)
	}
	w.mu.Lock()
	due := w.f == nil || w.size >= w.segBytes
	w.mu.Unlock()
	if due {
		// When the new segment cannot be made, the write goes to the
		// current one, which grows past its size until a rotation works.
		if err := w.Rotate(seq); err != nil && !w.hasSegment() {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return w.unavailable()
	}
	if err := w.cutTorn(); err != nil {
		return err
	}
	var sq [8]byte
	binary.LittleEndian.PutUint64(sq[:], seq)
	w.buf = frame.Append(w.buf[:0], kind, sq[:], payload)
	if _, err := w.f.Write(w.buf); err != nil {
		w.torn = true
		w.cutTorn()
		return fmt.Errorf("%w: write wal: %w", ErrUnavailable, err)
	}
	w.size += int64(len(w.buf))
	w.written = seq
	return nil
}

func (w *Log) hasSegment() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f != nil
}

// Sync makes every record up to seq durable. Concurrent callers share one
// fsync (group commit). A failed fsync breaks the log for good: the kernel
// may have dropped the pages and a retried fsync would wrongly succeed.
func (w *Log) Sync(seq uint64) error {
	if w.noSync || w.synced.Load() >= seq {
		return nil
	}
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= seq {
		return nil
	}
	w.mu.Lock()
	f, hi, broken := w.f, w.written, w.broken
	w.mu.Unlock()
	if broken != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, broken)
	}
	if f == nil {
		return fmt.Errorf("%w: the write-ahead log is closed", ErrUnavailable)
	}
	if err := f.Sync(); err != nil {
		w.mu.Lock()
		w.broken = fmt.Errorf("sync wal: %w", err)
		w.mu.Unlock()
		return fmt.Errorf("%w: sync wal: %v", ErrUnavailable, err)
	}
	w.synced.Store(hi)
	return nil
}

// Trim removes the segments whose records all have sequence numbers up to
// upTo. The current segment is never removed.
func (w *Log) Trim(upTo uint64) error {
	segs, err := w.segments()
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(segs); i++ {
		if segs[i+1].First-1 > upTo {
			break
		}
		if err := os.Remove(segs[i].Path); err != nil {
			return fmt.Errorf("trim wal: %w", err)
		}
	}
	return nil
}

// Bytes reports the size of all segments.
func (w *Log) Bytes() int64 {
	segs, _ := w.segments()
	return segmentBytes(segs)
}

func segmentBytes(segs []Segment) int64 {
	var n int64
	for _, s := range segs {
		if fi, err := os.Stat(s.Path); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Status is what the log holds on disk.
type Status struct {
	Segments int   // segment files
	Bytes    int64 // their size
}

// Status reports the segment files and their size.
func (w *Log) Status() Status {
	segs, _ := w.segments()
	return Status{Segments: len(segs), Bytes: segmentBytes(segs)}
}

// Close cuts a failed write off the current segment, syncs and closes it.
// After a failed fsync it returns that failure.
func (w *Log) Close() error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.broken
	}
	defer func() { w.f = nil }()
	if w.broken != nil {
		w.f.Close()
		return w.broken
	}
	cutErr := w.cutTorn() // if it fails, the next start-up cuts the torn tail
	if !w.noSync {
		if err := w.f.Sync(); err != nil {
			w.f.Close()
			w.broken = fmt.Errorf("sync wal: %w", err)
			return w.broken
		}
	}
	w.synced.Store(w.written)
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close wal: %w", err)
	}
	return cutErr
}

// Abandon closes the current segment as a killed process leaves it: no
// cut, no sync. The log is of no further use. For tests of recovery.
func (w *Log) Abandon() {
	w.mu.Lock()
	if w.f != nil {
		w.f.Close()
	}
	w.mu.Unlock()
}

// WrapFiles routes the current segment and every new one through wrap. For
// tests that make the disk fail (full, or refusing to truncate).
func (w *Log) WrapFiles(wrap func(File) File) {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	create := w.create
	w.create = func(path string) (File, error) {
		f, err := create(path)
		if err != nil {
			return nil, err
		}
		return wrap(f), nil
	}
	if w.f != nil {
		w.f = wrap(w.f)
	}
}
