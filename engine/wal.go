package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The write-ahead log is a directory of segment files named after the
// sequence number of their first record (%020d.wal). A segment starts with
// the 8-byte magic and a u32 version, then holds frames whose body is
// u8 op kind | u64 sequence number | payload.
const (
	walMagic      = "SIFTWAL\x00"
	walVersion    = 1
	walHeaderSize = 12
	walSuffix     = ".wal"
)

type wal struct {
	dir      string
	log      *slog.Logger
	segBytes int64
	noSync   bool
	readOnly bool // replay only: nothing is cut, created or removed

	mu      sync.Mutex // guards the fields below
	create  func(path string) (segFile, error)
	f       segFile // the current segment; nil until one could be created
	first   uint64  // sequence number the current segment is named after
	size    int64   // bytes of whole records in the current segment
	torn    bool    // a failed write may have left bytes after size
	written uint64  // sequence number of the last record written
	broken  error   // set when an fsync failed; no write succeeds after it
	buf     []byte

	syncMu sync.Mutex // one fsync at a time; taken before mu
	synced atomic.Uint64
}

// segFile is what the log writes a segment through: an *os.File, or in
// tests a file that fails the way a full disk does.
type segFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// createSegmentFile creates a segment file for appending. O_APPEND: after a
// failed write is truncated away, the next one lands at the new end, not
// after a hole.
func createSegmentFile(path string) (segFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return f, nil
}

type segment struct {
	first uint64
	path  string
}

func openWAL(dir string, segBytes int64, noSync, readOnly bool, log *slog.Logger) (*wal, error) {
	w := &wal{dir: dir, log: log, segBytes: segBytes, noSync: noSync, readOnly: readOnly, create: createSegmentFile}
	if readOnly {
		return w, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create wal dir: %w", err)
	}
	removeTemps(dir, log) // segments whose creation was interrupted
	return w, nil
}

func segmentPath(dir string, first uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", first, walSuffix))
}

// segments lists the segment files in sequence order.
func (w *wal) segments() ([]segment, error) {
	ents, err := os.ReadDir(w.dir)
	if w.readOnly && errors.Is(err, os.ErrNotExist) {
		return nil, nil // a data dir holding only a snapshot
	}
	if err != nil {
		return nil, fmt.Errorf("list wal: %w", err)
	}
	var segs []segment
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), walSuffix)
		if !ok {
			continue
		}
		first, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		segs = append(segs, segment{first, filepath.Join(w.dir, e.Name())})
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.first, b.first) })
	return segs, nil
}

// replay calls fn for every record with a sequence number above after (the
// snapshot's), in order, and returns the first and last sequence numbers
// seen (0 when none).
//
// Damage in a segment the snapshot covers — every record in it numbered at
// most after, as the next segment's name proves — loses nothing: it is
// logged and skipped. A bad frame is a torn tail — a crash in the middle of
// a write, never acknowledged — when nothing valid follows it: no later
// record in its segment and only empty segments after it. The tail is cut
// off (and the cut synced) and logged. Any other damage is a
// CorruptionError naming the file and offset: replay refuses to drop
// records that were acknowledged.
func (w *wal) replay(after uint64, fn func(seq uint64, kind opKind, payload []byte) error) (first, last uint64, err error) {
	segs, err := w.segments()
	if err != nil {
		return 0, 0, err
	}
	for i, s := range segs {
		end, ce, err := w.replaySegment(s, after, &first, &last, fn)
		if err != nil {
			return 0, 0, err
		}
		if ce == nil {
			continue
		}
		if i+1 < len(segs) && segs[i+1].first-1 <= after && last < segs[i+1].first {
			w.log.Warn("skipping damage in a write-ahead log segment the snapshot already holds",
				"segment", s.path, "offset", ce.Offset, "cause", ce.Err,
				"records_up_to", segs[i+1].first-1, "snapshot_seq", after)
			// The next segment must start where this one's name range
			// ends; the sequence check holds it to that.
			last = segs[i+1].first - 1
			continue
		}
		for _, later := range segs[i+1:] {
			if fi, serr := os.Stat(later.path); serr != nil || fi.Size() > walHeaderSize {
				return 0, 0, ce // records follow in a later segment
			}
		}
		if recordsFollow(s.path, end, last) {
			return 0, 0, fmt.Errorf("%w (valid records follow it: the log is damaged, not torn)", ce)
		}
		if w.readOnly {
			w.log.Warn("torn tail of write-ahead log left for the next server to cut", "segment", s.path, "offset", end, "cause", ce.Err)
			return first, last, nil
		}
		w.log.Warn("cutting torn tail of write-ahead log", "segment", s.path, "offset", end, "cause", ce.Err)
		if err := cutTail(s.path, end); err != nil {
			return 0, 0, err
		}
		for _, later := range segs[i+1:] {
			if err := os.Remove(later.path); err != nil {
				return 0, 0, fmt.Errorf("remove empty wal segment: %w", err)
			}
		}
		return first, last, syncDir(w.dir)
	}
	return first, last, nil
}

// cutTail truncates a segment at end (removing it when not even its header
// is whole) and syncs the change, so a power cut cannot bring the tail back.
func cutTail(path string, end int64) error {
	if end < walHeaderSize {
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

// recordsFollow reports whether a valid frame of one of the next two records
// after last starts anywhere after offset off of the segment.
func recordsFollow(path string, off int64, last uint64) bool {
	b, err := os.ReadFile(path)
	if err != nil || off >= int64(len(b)) {
		return false
	}
	for seq := last + 1; seq <= last+2; seq++ {
		var pat [8]byte
		binary.LittleEndian.PutUint64(pat[:], seq)
		for from := int(off) + 1; ; {
			i := bytes.Index(b[from:], pat[:])
			if i < 0 {
				break
			}
			start := from + i - frameHeaderSize - 1 // the frame's length field
			from += i + 1
			if start < int(off) {
				continue
			}
			if _, _, err := readFrame(bytes.NewReader(b[start:])); err == nil {
				return true
			}
		}
	}
	return false
}

// replaySegment replays one segment. On a bad frame it returns a
// CorruptionError and the offset of the last good frame's end; err is for
// what is not damage of the segment (I/O, fn's errors).
func (w *wal) replaySegment(s segment, after uint64, first, last *uint64, fn func(uint64, opKind, []byte) error) (int64, *CorruptionError, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return 0, nil, fmt.Errorf("open wal segment: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	corrupt := func(off int64, err error) (int64, *CorruptionError, error) {
		return off, &CorruptionError{File: s.path, Offset: off, Err: err}, nil
	}
	var hdr [walHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return corrupt(0, fmt.Errorf("short header: %w", err))
	}
	if string(hdr[:8]) != walMagic {
		return corrupt(0, errors.New("bad magic"))
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != walVersion {
		return 0, nil, fmt.Errorf("wal segment %s: unsupported version %d", s.path, v)
	}
	off := int64(walHeaderSize)
	for {
		kind, body, err := readFrame(r)
		if err == io.EOF {
			return off, nil, nil
		}
		if err != nil {
			if errors.Is(err, errTorn) {
				return corrupt(off, err)
			}
			return off, nil, fmt.Errorf("read wal %s: %w", s.path, err)
		}
		if len(body) < 8 {
			return corrupt(off, errors.New("record without sequence number"))
		}
		seq := binary.LittleEndian.Uint64(body)
		if *last != 0 && seq != *last+1 {
			return corrupt(off, fmt.Errorf("sequence %d follows %d", seq, *last))
		}
		if *first == 0 {
			*first = seq
		}
		*last = seq
		if seq > after {
			if err := fn(seq, opKind(kind), body[8:]); err != nil {
				return off, nil, &CorruptionError{File: s.path, Offset: off, Err: err}
			}
		}
		off += int64(frameHeaderSize + 1 + len(body))
	}
}

// startSegment makes the current segment durable, then starts a new one
// whose first record will be seq and closes the old one. The caller holds
// syncMu and mu. Syncing the old segment first means a crash can tear only
// the newest segment.
//
// A new segment that cannot be made (a full disk) is not left behind, and
// the current segment stays in use: writes go on in it and the next
// rotation tries again. Only a failed fsync breaks the log.
func (w *wal) startSegment(seq uint64) error {
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
	w.f, w.first, w.size = f, seq, walHeaderSize
	return nil
}

// createSegment writes the segment named after seq: header in a temporary
// file, synced, renamed into place, the directory synced. A segment file
// therefore exists under its name only whole, and only once no record
// numbered seq or later can go to the previous segment — replay and trim
// rely on the names. The caller holds mu.
func (w *wal) createSegment(seq uint64) (segFile, error) {
	path := segmentPath(w.dir, seq)
	tmp := path + tmpSuffix
	f, err := w.create(tmp)
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("%w: create wal segment: %w", ErrUnavailable, err)
	}
	fail := func(err error) (segFile, error) {
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
		if err := syncDir(w.dir); err != nil {
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
func (w *wal) cutTorn() error {
	if !w.torn {
		return nil
	}
	if err := w.f.Truncate(w.size); err != nil {
		return fmt.Errorf("%w: cut a failed wal write: %v", ErrUnavailable, err)
	}
	w.torn = false
	return nil
}

func (w *wal) unavailable() error {
	return fmt.Errorf("%w: %v (writes resume after a restart)", ErrUnavailable, w.broken)
}

// rotate starts a new segment at seq (the next record's number), so that the
// segments before it hold only records up to seq-1. When it fails the
// current segment, if any, stays in use.
func (w *wal) rotate(seq uint64) error {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.startSegment(seq)
}

// append writes one record. It does not sync; see sync. Appends are
// serialised by the engine's writer lock. A failed write is cut off again
// (now, or before the next write if even that fails), so the log stays a
// clean sequence of frames and the next write can succeed once the disk
// has room.
func (w *wal) append(seq uint64, kind opKind, payload []byte) error {
	if len(payload)+9 > maxFrameBody {
		return invalidf("write of %d bytes exceeds the %d-byte record limit", len(payload), maxFrameBody)
	}
	w.mu.Lock()
	due := w.f == nil || w.size >= w.segBytes
	w.mu.Unlock()
	if due {
		// When the new segment cannot be made, the write goes to the
		// current one, which grows past its size until a rotation works.
		if err := w.rotate(seq); err != nil && !w.hasSegment() {
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
	w.buf = appendFrame(w.buf[:0], byte(kind), sq[:], payload)
	if _, err := w.f.Write(w.buf); err != nil {
		w.torn = true
		w.cutTorn()
		return fmt.Errorf("%w: write wal: %w", ErrUnavailable, err)
	}
	w.size += int64(len(w.buf))
	w.written = seq
	return nil
}

func (w *wal) hasSegment() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f != nil
}

// sync makes every record up to seq durable. Concurrent callers share one
// fsync (group commit). A failed fsync breaks the log for good: the kernel
// may have dropped the pages and a retried fsync would wrongly succeed.
func (w *wal) sync(seq uint64) error {
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

// trim removes the segments whose records all have sequence numbers up to
// upTo. The current segment is never removed.
func (w *wal) trim(upTo uint64) error {
	segs, err := w.segments()
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(segs); i++ {
		if segs[i+1].first-1 > upTo {
			break
		}
		if err := os.Remove(segs[i].path); err != nil {
			return fmt.Errorf("trim wal: %w", err)
		}
	}
	return nil
}

// bytes reports the size of all segments.
func (w *wal) bytes() int64 {
	segs, _ := w.segments()
	var n int64
	for _, s := range segs {
		if fi, err := os.Stat(s.path); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func (w *wal) close() error {
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

// syncDir fsyncs a directory so a file created or renamed in it persists.
func syncDir(dir string) error {
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
