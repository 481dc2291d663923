package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/engine/internal/fsx"
	"github.com/sift-search/sift/record"
)

// Snapshot files are named snapshot-%020d.sift after their sequence number.
const (
	snapPrefix = "snapshot-"
	snapSuffix = ".sift"
	tmpSuffix  = ".tmp"
)

type snapFile struct {
	seq  uint64
	path string
}

// snapshotFiles lists the snapshots of dir, newest first.
func snapshotFiles(dir string) ([]snapFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []snapFile
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), snapPrefix)
		if !ok {
			continue
		}
		if name, ok = strings.CutSuffix(name, snapSuffix); !ok {
			continue
		}
		if seq, err := strconv.ParseUint(name, 10, 64); err == nil {
			out = append(out, snapFile{seq, filepath.Join(dir, e.Name())})
		}
	}
	slices.SortFunc(out, func(a, b snapFile) int { return cmp.Compare(b.seq, a.seq) })
	return out, nil
}

func snapshotPath(dir string, seq uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%020d%s", snapPrefix, seq, snapSuffix))
}

// loadNewestSnapshot loads the newest snapshot that validates, falling back
// to older ones; with none it returns an empty state at sequence 0. The
// choice says what the snapshot files that failed show.
func (e *Engine) loadNewestSnapshot() (*state, uint64, snapshotChoice, error) {
	files, err := snapshotFiles(e.opts.DataDir)
	if err != nil {
		return nil, 0, snapshotChoice{}, err
	}
	var st *state
	ch := chooseSnapshot(files, func(i int) error {
		sf := files[i]
		start := time.Now()
		s, seq, rebuilt, err := readSnapshotFile(sf.path, e.opts)
		if err != nil {
			e.log.Error("snapshot is invalid; falling back to an older one", "path", sf.path, "err", err)
			return err
		}
		if seq != sf.seq {
			e.log.Error("snapshot sequence differs from its name; skipping", "path", sf.path, "seq", seq)
			return fmt.Errorf("its header says sequence %d", seq)
		}
		s.commitSection()
		fi, _ := os.Stat(sf.path)
		info := &record.SnapshotInfo{Seq: seq, Path: sf.path, At: fi.ModTime(), Bytes: fi.Size(), Rebuilt: rebuilt, LoadedIn: time.Since(start)}
		e.lastSnap.Store(info)
		e.log.Info("snapshot loaded", "path", sf.path, "seq", seq, "took", info.LoadedIn, "rebuilt_indexes", rebuilt)
		st = s
		return nil
	})
	if st == nil {
		return newState(e.opts.Index), 0, ch, nil
	}
	return st, files[ch.loaded].seq, ch, nil
}

// checkFile checks every frame of a snapshot file; see checkFrames.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkFrames(bufio.NewReaderSize(f, 1<<20)); err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	return nil
}

func readSnapshotFile(path string, opts Options) (*state, uint64, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false, err
	}
	defer f.Close()
	return readState(bufio.NewReaderSize(f, 1<<20), opts)
}

// Snapshot writes the whole state to a new snapshot file, atomically, then
// removes the log segments and snapshots no longer needed. Two snapshots are
// kept, and the log back to the older one, so a damaged newest snapshot can
// be replaced by the older one plus the log. Writers wait while it runs;
// readers do not.
func (e *Engine) Snapshot() error {
	if e.wal == nil {
		return nil
	}
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	seq, edits := e.seq, e.followerEdits()
	if seq == 0 || seq == e.snapSeq && edits == e.snapEdits {
		return nil
	}
	// With no write since the newest snapshot, only the follower (the
	// semantic index) has progressed: the snapshot of the same sequence number is replaced (by
	// a verified file) and nothing older is removed.
	semanticOnly := seq == e.snapSeq
	start := time.Now()
	if !semanticOnly {
		if err := e.wal.Rotate(seq + 1); err != nil {
			return e.snapshotFailed(err)
		}
	}
	path := snapshotPath(e.opts.DataDir, seq)
	n, err := writeFileAtomic(path, e.opts.NoSync, func(w io.Writer) error {
		return e.st.writeTo(w, seq, e.opts.TitleWeight, e.opts.Follower)
	}, checkFile)
	if err != nil {
		return e.snapshotFailed(err)
	}
	e.snapEdits = edits
	info := &record.SnapshotInfo{Seq: seq, Path: path, Bytes: n, Took: time.Since(start), At: time.Now()}
	e.lastSnap.Store(info)
	e.log.Info("snapshot written", "path", path, "seq", seq, "bytes", n, "took", info.Took, "semantic_only", semanticOnly)
	if semanticOnly {
		return nil
	}
	prev := e.snapSeq
	e.snapSeq = seq
	files, _ := snapshotFiles(e.opts.DataDir)
	for _, sf := range files {
		if sf.seq < prev {
			os.Remove(sf.path)
		}
	}
	if err := e.wal.Trim(prev); err != nil {
		e.log.Warn("trimming the write-ahead log failed", "err", err)
	}
	return nil
}

func (e *Engine) snapshotFailed(err error) error {
	err = fmt.Errorf("snapshot: %w", err)
	info := record.SnapshotInfo{}
	if last := e.lastSnap.Load(); last != nil {
		info = *last
	}
	info.Err = err.Error()
	e.lastSnap.Store(&info)
	return err
}

// writeFileAtomic writes path through a temporary file that is synced,
// checked by check (when not nil), renamed into place, and whose directory
// is synced. A file that fails its check never replaces path.
func writeFileAtomic(path string, noSync bool, write func(io.Writer) error, check func(tmp string) error) (int64, error) {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(tmp)
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if !noSync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if check != nil {
		if err := check(tmp); err != nil {
			os.Remove(tmp)
			return 0, err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if !noSync {
		if err := fsx.SyncDir(filepath.Dir(path)); err != nil {
			return 0, err
		}
	}
	return fi.Size(), nil
}

// Backup writes a consistent snapshot of the current state to w and returns
// its sequence number. With a data directory it streams the newest snapshot
// file, taking a new one first if the log grew, so writers wait only for the
// snapshot, not for a slow reader of w.
func (e *instance) Backup(w io.Writer) (uint64, error) {
	if e.wal == nil {
		e.writeMu.Lock()
		defer e.writeMu.Unlock()
		return e.seq, e.st.writeTo(w, e.seq, e.opts.TitleWeight, e.opts.Follower)
	}
	if err := e.Snapshot(); err != nil {
		return 0, err
	}
	e.writeMu.Lock()
	seq := e.snapSeq
	f, err := os.Open(snapshotPath(e.opts.DataDir, seq))
	e.writeMu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("open snapshot: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return 0, fmt.Errorf("stream snapshot: %w", err)
	}
	return seq, nil
}

// VerifySnapshot reads a whole snapshot from r, validating every checksum
// and structure, and returns its sequence number and contents' counts.
func VerifySnapshot(r io.Reader) (seq uint64, messages, documents int, err error) {
	st, seq, _, err := readState(r, DefaultOptions())
	if err != nil {
		return 0, 0, 0, err
	}
	return seq, st.msgIdx.Len(), st.docIdx.Len(), nil
}

// SnapshotSummary is what a snapshot file holds, as InspectSnapshot found
// it after validating all of it.
type SnapshotSummary struct {
	Version   uint32    // format version
	Seq       uint64    // sequence number of the last write it holds
	Created   time.Time // when it was written
	Sources   int
	Channels  int // threads included
	Messages  int
	Documents int
	Insights  int  // rows of the insights table
	Rebuilt   bool // its indexes were written by another tokenizer version and rebuilt to check it
}

// InspectSnapshot reads a whole snapshot (or backup) from r, validating every
// checksum and structure as start-up does, and says what it holds. An error
// says where or how the file is damaged. With f, f reads and validates its
// section (and is left holding it, to say what it holds); without, the
// sections' frames are checked as frames only.
func InspectSnapshot(r io.Reader, f Follower) (*SnapshotSummary, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(snapHeaderSize)
	hdr, err := snapshotHeader(bytes.NewReader(head))
	if err != nil {
		return nil, err
	}
	opts := DefaultOptions()
	opts.Follower = f
	st, seq, rebuilt, err := readState(br, opts)
	if err != nil {
		return nil, err
	}
	st.commitSection()
	sum := &SnapshotSummary{Version: hdr.version, Seq: seq, Created: hdr.created, Sources: len(st.sources),
		Channels: len(st.chanKey), Messages: st.msgIdx.Len(), Documents: st.docIdx.Len(), Insights: len(st.insights), Rebuilt: rebuilt}
	return sum, nil
}

// Restore installs the snapshot file src as the state of the empty data
// directory dir, after verifying it completely, and returns what it holds.
// It holds the directory's lock meanwhile, so no server starts on it.
func Restore(dir, src string) (seq uint64, messages, documents int, err error) {
	_, statErr := os.Stat(dir)
	created := os.IsNotExist(statErr)
	_, statErr = os.Stat(filepath.Join(dir, lockName))
	newLock := os.IsNotExist(statErr)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, 0, 0, err
	}
	lock, err := lockDir(dir, false)
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		lock.Close()
		if err != nil && created {
			os.RemoveAll(dir)
		} else if err != nil && newLock && !errors.Is(err, record.ErrConflict) {
			os.Remove(filepath.Join(dir, lockName))
		}
	}()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, e := range ents {
		if e.Name() != lockName {
			return 0, 0, 0, fmt.Errorf("%w: data dir %s is not empty; restore only into an empty one", record.ErrConflict, dir)
		}
	}
	f, err := os.Open(src)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	seq, messages, documents, err = VerifySnapshot(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("verify %s: %w", src, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, 0, err
	}
	_, err = writeFileAtomic(snapshotPath(dir, seq), false, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	}, checkFile)
	return seq, messages, documents, err
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
