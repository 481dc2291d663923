package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sift-search/sift/engine/internal/fsx"
	"github.com/sift-search/sift/engine/internal/wal"
)

// LossError means start-up cannot replay every acknowledged write: records
// the log should hold are missing or unreadable, and a later log segment
// or a snapshot's name shows they were acknowledged. It names the files,
// the missing sequence numbers (From, To), what replay reaches (Reached)
// and the last acknowledged write (Acked). Open refuses with it unless
// Options.AcceptDataLoss is set. It wraps the damage, a *CorruptionError,
// when there is one.
type LossError = wal.LossError

// snapshotChoice is start-up's choice among the snapshot files, and what
// the newer files it could not load show about acknowledged writes.
type snapshotChoice struct {
	loaded  int    // index of the loaded file; -1 when none loaded
	failed  int    // files that could not be loaded
	acked   uint64 // the highest sequence number the files show
	ackedBy string // the file that shows it, and why it failed
}

// chooseSnapshot returns the first of files (newest first) that load does
// not refuse. A file refused shows that every write up to its sequence
// number — its name's, or its header's when that is whole and higher —
// was acknowledged: a snapshot is written only after the log holding
// those writes was synced.
func chooseSnapshot(files []snapFile, load func(i int) error) snapshotChoice {
	ch := snapshotChoice{loaded: -1}
	for i, sf := range files {
		err := load(i)
		if err == nil {
			ch.loaded = i
			if sf.seq > ch.acked {
				ch.acked, ch.ackedBy = sf.seq, sf.path
			}
			return ch
		}
		ch.failed++
		seq := sf.seq
		if h, herr := readSnapshotHeader(sf.path); herr == nil && h.seq > seq {
			seq = h.seq
		}
		if seq > ch.acked {
			ch.acked, ch.ackedBy = seq, fmt.Sprintf("%s (damaged: %v)", sf.path, err)
		}
	}
	return ch
}

// readSnapshotHeader reads and checks a snapshot file's header.
func readSnapshotHeader(path string) (snapHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return snapHeader{}, err
	}
	defer f.Close()
	return snapshotHeader(f)
}

// checkRecord decodes a log record as replay does, without applying it.
func checkRecord(seq uint64, kind uint8, payload []byte) error {
	if _, err := decodeOp(opKind(kind), payload); err != nil {
		return fmt.Errorf("record %d does not decode: %w", seq, err)
	}
	return nil
}

// replayOptions are start-up's: after the loaded snapshot, knowing what
// the snapshot files show.
func (e *Engine) replayOptions(after uint64, ch snapshotChoice) wal.ReplayOptions {
	return wal.ReplayOptions{After: after, Acked: max(after, ch.acked), AckedBy: ch.ackedBy, AcceptLoss: e.opts.AcceptDataLoss}
}

// refusal is Open's error for a replay that failed: with a LossError, it
// says what is lost and how to go on.
func (e *Engine) refusal(err error) error {
	var le *LossError
	if !errors.As(err, &le) {
		return fmt.Errorf("replay wal: %w", err)
	}
	return fmt.Errorf("refusing to start: %w. %s", err, RecoveryHint(e.opts.DataDir, le))
}

// RecoveryHint says how to go on from a data dir whose log cannot replay
// every acknowledged write: the commands to look, restore or accept the
// loss.
func RecoveryHint(dir string, le *LossError) string {
	return fmt.Sprintf("Start-up would serve the writes up to %d only, losing %d. "+
		"To see what is there: sift verify --data-dir %s. "+
		"To recover: restore a backup into an empty data dir (sift restore --data-dir NEW_DIR BACKUP_FILE); "+
		"or accept the loss and start with the writes up to %d: sift serve --accept-data-loss (or SIFT_ACCEPT_DATA_LOSS=1), "+
		"which moves the files it cannot replay to %s",
		le.Reached, le.Lost(), dir, le.Reached, filepath.Join(dir, "lost-<time>-*"))
}

// acceptLoss starts with what the log replayed (Options.AcceptDataLoss):
// it moves what holds or shows the lost writes — the log from the break
// on, the snapshots numbered beyond what was replayed — to a new
// DATA_DIR/lost-<time>-*/, so the directory is consistent again and new
// writes, numbered from le.Reached+1, collide with none of them; and it
// logs at ERROR what is lost. A read-only engine moves nothing.
func (e *Engine) acceptLoss(w *wal.Log, le *LossError) error {
	dir := e.opts.DataDir
	if e.opts.ReadOnly {
		e.log.Error("ACCEPTED DATA LOSS: serving without acknowledged writes the log cannot replay (read-only: no file moved)",
			"lost", lostSpan(le), "writes_lost", le.Lost(), "serving_up_to", le.Reached, "cause", le.Error())
		return nil
	}
	dst, err := os.MkdirTemp(dir, "lost-"+time.Now().UTC().Format("20060102T150405Z")+"-")
	if err != nil {
		return fmt.Errorf("accept data loss: %w", err)
	}
	if err := w.SetAside(le, filepath.Join(dst, "wal")); err != nil {
		return fmt.Errorf("accept data loss: %w", err)
	}
	files, err := snapshotFiles(dir)
	if err != nil {
		return fmt.Errorf("accept data loss: %w", err)
	}
	for _, sf := range files {
		if sf.seq > le.Reached {
			if err := os.Rename(sf.path, filepath.Join(dst, filepath.Base(sf.path))); err != nil {
				return fmt.Errorf("accept data loss: set aside snapshot: %w", err)
			}
		}
	}
	if err := fsx.SyncDir(dst); err != nil {
		return fmt.Errorf("accept data loss: %w", err)
	}
	if err := fsx.SyncDir(dir); err != nil {
		return fmt.Errorf("accept data loss: %w", err)
	}
	e.log.Error("ACCEPTED DATA LOSS: started without acknowledged writes the log cannot replay",
		"lost", lostSpan(le), "writes_lost", le.Lost(), "serving_up_to", le.Reached, "set_aside", dst, "cause", le.Error())
	return nil
}

// lostSpan names the lost writes, "51 to 131".
func lostSpan(le *LossError) string {
	if le.Acked == le.Reached+1 {
		return fmt.Sprint(le.Acked)
	}
	return fmt.Sprintf("%d to %d", le.Reached+1, le.Acked)
}
