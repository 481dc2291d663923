package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/engine/internal/fsx"
	"github.com/sift-search/sift/engine/internal/wal"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// Options configure an Engine.
type Options struct {
	// DataDir holds snapshots and the write-ahead log. Empty keeps
	// everything in memory (tests, benchmarks, evaluation).
	DataDir string
	// Index holds the BM25 parameters.
	Index index.Options
	// TitleWeight is how much a title word counts against a body word.
	TitleWeight uint8
	// SnapshotInterval is how often a snapshot is taken when the log grew.
	SnapshotInterval time.Duration
	// SnapshotLogBytes triggers a snapshot when the log grows past it.
	SnapshotLogBytes int64
	// SegmentBytes is the size at which the log starts a new segment file.
	SegmentBytes int64
	// NoSync skips fsync: writes survive a process crash but not a power
	// cut. For benchmarks and throwaway instances only.
	NoSync bool
	Logger *slog.Logger
	// Follower, when set, follows the store through the change feed and
	// keeps its state in the snapshots (the semantic layer; see Follower).
	Follower Follower
	// ReadOnly opens DataDir to read it beside no server: it is locked
	// shared (a server, which locks it exclusively, cannot start meanwhile,
	// nor can this open while a server holds it), nothing in it is written
	// or removed (a torn log tail is left for the next server to cut), no
	// snapshot is taken, and every write fails with ErrReadOnly.
	ReadOnly bool
	// AcceptDataLoss lets Open start when the log cannot replay every
	// acknowledged write (see LossError), which it otherwise refuses: it
	// serves what replays, logs at ERROR what is lost, and moves the files
	// holding or showing the lost writes to DATA_DIR/lost-<time>-*/.
	AcceptDataLoss bool
}

// DefaultOptions returns the options sift serve uses.
func DefaultOptions() Options {
	return Options{
		Index:            index.DefaultOptions(),
		TitleWeight:      analysis.DefaultTitleWeight,
		SnapshotInterval: 10 * time.Minute,
		SnapshotLogBytes: 256 << 20,
		SegmentBytes:     64 << 20,
	}
}

// Engine is the store. Its methods are safe for concurrent use.
//
// Its methods are split by role among the types it embeds, each of which
// is the engine itself (Open sets them) and whose methods are promoted to
// it, so its callers see one store; they are listed below. Its own are
// its lifecycle (Open's loading and recovery, maintain, Close), the write
// path every role writes through (write, commit, sync) and snapshots.
type Engine struct {
	catalog  // the sources and what operators decide about them (sources.go, sources_create.go, operator.go)
	content  // the channels, messages and documents, read and written (engine_read.go, engine_write.go, …)
	searcher // Search and Suggest (engine_search.go, suggest.go)
	instance // the store as a whole: status, backups, insights, the follower's feed (instance.go, …)
	applier  // logged writes applied to the state (apply.go)

	opts Options
	log  *slog.Logger

	writeMu sync.Mutex   // serialises writers, snapshots and compactions
	mu      sync.RWMutex // guards st against writers; see state
	st      *state
	seq     uint64        // last applied sequence number; guarded by writeMu
	changed uint64        // the last write of content (not insights: insights.go); guarded by writeMu
	seqSeen atomic.Uint64 // seq, for readers that must not wait on writeMu
	chgSeen atomic.Uint64 // changed, for readers
	wa      *writer       // the writers' analyzer; guarded by writeMu

	wal      *wal.Log // nil in memory
	lockFile *os.File
	snapSeq  uint64 // sequence number of the newest snapshot; guarded by writeMu
	lastSnap atomic.Pointer[record.SnapshotInfo]

	closed atomic.Bool
	stop   chan struct{}
	done   chan struct{}

	feed      *feed        // changes for the follower; nil without one
	snapEdits uint64       // the follower's Edits at the newest snapshot; guarded by writeMu
	lastWrite atomic.Int64 // unix nanoseconds of the last write
	plain     *plainCache  // documents' plain text, for snippets

	titleMu  sync.Mutex  // guards titleTab
	titleTab *titleTable // channels and documents by title, for Suggest

	noFinalSnapshot bool // Close writes none (a failed Open)
}

// OpenWith opens a store with o and f as its follower (Options.Follower):
// what semantic.Open takes to open a store that its index follows.
func (o Options) OpenWith(f Follower) (*Engine, error) {
	o.Follower = f
	return Open(o)
}

// Open loads the engine from opts.DataDir (snapshot, then log) or starts
// empty, and starts background snapshots.
func Open(opts Options) (*Engine, error) {
	def := DefaultOptions()
	if opts.TitleWeight == 0 {
		opts.TitleWeight = def.TitleWeight
	}
	if opts.Index == (index.Options{}) {
		opts.Index = def.Index
	}
	if opts.SnapshotInterval <= 0 {
		opts.SnapshotInterval = def.SnapshotInterval
	}
	if opts.SnapshotLogBytes <= 0 {
		opts.SnapshotLogBytes = def.SnapshotLogBytes
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = def.SegmentBytes
	}
	e := &Engine{opts: opts, log: opts.Logger, stop: make(chan struct{}), done: make(chan struct{}),
		plain: newPlainCache(plainCacheBytes)}
	e.catalog, e.content, e.searcher = catalog{e}, content{e}, searcher{e}
	e.instance, e.applier = instance{e}, applier{e}
	if opts.Follower != nil {
		e.feed = &feed{}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if opts.DataDir == "" {
		if opts.ReadOnly {
			return nil, errors.New("a read-only engine needs a data dir")
		}
		e.st = newState(opts.Index)
		e.st.feed = e.feed
	} else if err := e.load(); err != nil {
		e.unlockDir()
		return nil, err
	}
	go e.maintain()
	e.versionLegacySources()
	if opts.ReadOnly {
		return e, nil
	}
	if err := e.ensureUploads(); err != nil {
		// No final snapshot: the follower has not followed yet, so its
		// section could not hold the changes replayed from the log. The
		// log holds everything.
		e.noFinalSnapshot = true
		e.Close()
		return nil, err
	}
	return e, nil
}

// load takes the data directory's lock, loads the newest valid snapshot and
// replays the log after it.
func (e *Engine) load() error {
	dir, ro := e.opts.DataDir, e.opts.ReadOnly
	if ro {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("data dir %s: not a directory to read", dir)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	lock, err := lockDir(dir, ro)
	if err != nil {
		return err
	}
	e.lockFile = lock
	if !ro {
		fsx.RemoveTemps(dir, tmpSuffix, e.log)
	}
	st, seq, choice, err := e.loadNewestSnapshot()
	if err != nil {
		return err
	}
	e.st, e.seq, e.snapSeq = st, seq, seq
	st.feed = e.feed // the log's records after the snapshot are changes the follower has not seen
	w, err := wal.Open(filepath.Join(dir, "wal"), wal.Options{SegmentBytes: e.opts.SegmentBytes, NoSync: e.opts.NoSync, ReadOnly: ro, Logger: e.log})
	if err != nil {
		return err
	}
	start := time.Now()
	replayed := 0
	e.changed = seq
	e.chgSeen.Store(seq)
	res, err := w.ReplayWith(e.replayOptions(seq, choice), func(s uint64, kind uint8, payload []byte) error {
		o, err := decodeOp(opKind(kind), payload)
		if err != nil {
			return fmt.Errorf("record %d does not decode: %w", s, err)
		}
		e.setFeedSeq(s)
		e.apply(&o)
		e.feedApplied(s)
		if o.kind != opPutInsights {
			e.changed = s
			e.chgSeen.Store(s)
		}
		replayed++
		return nil
	})
	if err != nil {
		return e.refusal(err)
	}
	if res.Lost != nil {
		if err := e.acceptLoss(w, res.Lost); err != nil {
			return err
		}
	}
	last := res.Last
	if last > e.seq {
		e.seq = last
	}
	e.seqSeen.Store(e.seq)
	if ro {
		e.log.Info("engine loaded read-only", "dir", dir, "snapshot_seq", seq, "replayed", replayed, "seq", e.seq)
		return nil // no log to append to: maintain and Close leave the files alone
	}
	if err := w.Rotate(e.seq + 1); err != nil {
		// Reads can be served; the first write tries again.
		e.log.Warn("cannot start a write-ahead log segment: writes fail until it can be written", "err", err)
	}
	e.wal = w
	w.Resume(e.seq)
	e.log.Info("engine loaded", "dir", dir, "snapshot_seq", seq, "replayed", replayed, "seq", e.seq,
		"messages", e.st.msgIdx.Len(), "documents", e.st.docIdx.Len(), "replay_took", time.Since(start))
	return nil
}

// lockName is the file whose flock marks a data directory in use.
const lockName = "LOCK"

// lockDir takes an exclusive lock on a data directory, so two processes
// never share one log, or a shared one to read it (readers exclude a
// writer, not each other). Closing the file releases it.
func lockDir(dir string, shared bool) (*os.File, error) {
	flag, how := os.O_CREATE|os.O_RDWR, syscall.LOCK_EX
	if shared {
		flag, how = os.O_RDONLY, syscall.LOCK_SH
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), flag, 0o600)
	if shared && errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("data dir %s holds no Sift data (no %s file)", dir, lockName)
	}
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another process: %w", dir, err)
	}
	return f, nil
}

func (e *Engine) unlockDir() {
	if e.lockFile != nil {
		e.lockFile.Close() // closing releases the flock
		e.lockFile = nil
	}
}

// ensureUploads creates the built-in uploads source on first start.
func (e *Engine) ensureUploads() error {
	e.mu.RLock()
	_, ok := e.st.sources[record.UploadsSourceID]
	e.mu.RUnlock()
	if ok {
		return nil
	}
	now := time.Now().UTC()
	return e.write(&op{kind: opPutSource, source: record.Source{
		ID: record.UploadsSourceID, Name: "Uploads", Type: "upload", Enabled: true, Visibility: record.VisibilityPublic,
		Config: map[string]any{}, CreatedAt: now, UpdatedAt: now, Version: 1,
	}})
}

// write logs and applies one op and waits until it is durable.
func (e *Engine) write(o *op) error {
	e.writeMu.Lock()
	seq, err := e.commit(o)
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}

// commit logs and applies o; the caller holds writeMu and, once it has
// released it, calls sync with the returned sequence number before
// acknowledging the write.
func (e *Engine) commit(o *op) (uint64, error) {
	if e.closed.Load() {
		return 0, record.ErrClosed
	}
	if e.opts.ReadOnly {
		return 0, record.ErrReadOnly
	}
	seq := e.seq + 1
	if e.wal != nil {
		var enc bin.Enc
		if err := o.encode(&enc); err != nil {
			return 0, err
		}
		if len(enc.B) > wal.MaxPayload {
			return 0, invalidf("write of %d bytes exceeds the %d-byte record limit", len(enc.B), maxFrameBody)
		}
		if err := e.wal.Append(seq, uint8(o.kind), enc.B); err != nil {
			return 0, err
		}
	}
	e.setFeedSeq(seq)
	e.apply(o)
	e.feedApplied(seq)
	e.seq = seq
	e.seqSeen.Store(seq)
	if o.kind == opPutInsights {
		return seq, nil // no content changed: nothing for the follower, no snapshot due
	}
	e.changed = seq
	e.chgSeen.Store(seq)
	e.lastWrite.Store(time.Now().UnixNano())
	if f := e.opts.Follower; f != nil {
		f.Changed()
	}
	return seq, nil
}

// setFeedSeq numbers the changes of the write about to be applied.
func (e *Engine) setFeedSeq(seq uint64) {
	if f := e.feed; f != nil {
		f.mu.Lock()
		f.cur = seq
		f.mu.Unlock()
	}
}

// feedApplied shows the changes of write seq, now applied whole.
func (e *Engine) feedApplied(seq uint64) {
	if f := e.feed; f != nil {
		f.mu.Lock()
		f.applied = seq
		f.mu.Unlock()
	}
}

// followerEdits returns the follower's edit count, 0 without one.
func (e *Engine) followerEdits() uint64 {
	if f := e.opts.Follower; f != nil {
		return f.Edits()
	}
	return 0
}

func (e *Engine) sync(seq uint64) error {
	if e.wal == nil {
		return nil
	}
	return e.wal.Sync(seq)
}

// maintain takes snapshots when due and compacts indexes with many deletions.
func (e *Engine) maintain() {
	defer close(e.done)
	if e.wal == nil {
		return
	}
	tick := time.NewTicker(min(e.opts.SnapshotInterval, 30*time.Second))
	defer tick.Stop()
	lastSnap := time.Now()
	for {
		select {
		case <-e.stop:
			return
		case <-tick.C:
		}
		e.compactIfNeeded()
		e.writeMu.Lock()
		grown := e.changed > e.snapSeq || e.followerEdits() != e.snapEdits
		logged := e.seq > e.snapSeq // insights alone: only for the log's size
		e.writeMu.Unlock()
		if grown && time.Since(lastSnap) >= e.opts.SnapshotInterval || (grown || logged) && e.wal.Bytes() >= e.opts.SnapshotLogBytes {
			if err := e.Snapshot(); err != nil {
				e.log.Error("snapshot failed", "err", err)
			}
			lastSnap = time.Now()
		}
	}
}

// compactIfNeeded rebuilds an index whose deleted documents exceed a quarter
// of its live ones (index.Untidy). The copy is built beside running
// searches; only the swap takes the write lock.
func (e *Engine) compactIfNeeded() {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	for _, ix := range []**index.Index{&e.st.msgIdx, &e.st.docIdx} {
		if (*ix).Untidy() {
			c := (*ix).Compacted()
			e.mu.Lock()
			*ix = c
			e.mu.Unlock()
		}
	}
}

// Close stops background work, writes a final snapshot if the log grew, and
// closes the log. Writes after Close fail with ErrClosed.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	close(e.stop)
	<-e.done
	if f := e.opts.Follower; f != nil {
		f.Stop()
	}
	var errs []error
	if e.wal != nil {
		e.writeMu.Lock()
		grown := e.changed > e.snapSeq || e.followerEdits() != e.snapEdits
		e.writeMu.Unlock()
		if grown && !e.noFinalSnapshot {
			errs = append(errs, e.Snapshot())
		}
		errs = append(errs, e.wal.Close())
	}
	e.unlockDir()
	return errors.Join(errs...)
}

// versionLegacySources gives the sources loaded from records written
// before versions existed (Version 0, which PutSourceIf reads as "absent")
// the current sequence number: no later than their last write's, as every
// version is, and not 0.
func (e *Engine) versionLegacySources() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.st.sources {
		if s.Version == 0 {
			s.Version = max(1, e.seq)
		}
	}
}
