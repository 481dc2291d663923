package engine

import (
	"time"

	"github.com/sift-search/sift/record"
)

// instance is the engine's role of answering for the store as a whole:
// where it stands (Seq, ContentSeq, LastWrite), what it holds (Counts,
// Footprint), its durability (LastSnapshot, LogStatus, Backup), the
// insights table, the instance's settings (operator.go), the follower's
// feed and view (follow.go), and the records copied in from another store
// (restore_records.go). Opening, writing and snapshotting are Engine's
// own. Like catalog it is the engine itself, embedded in it.
type instance struct{ *Engine }

// Seq returns the sequence number of the last applied write. It never
// waits, even while a snapshot holds writers off.
func (e *instance) Seq() uint64 { return e.seqSeen.Load() }

// ContentSeq returns the sequence number of the last write of content:
// Seq, but for writes of insights, which change no page.
func (e *instance) ContentSeq() uint64 { return e.chgSeen.Load() }

// LastWrite returns when the last write of content was applied (zero
// before any); writes of insights do not count.
func (e *instance) LastWrite() time.Time {
	if n := e.lastWrite.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// Counts returns what the engine holds. O(channels + sources).
// Without private it counts only what callers without credentials may see
// (and no terms): channels, threads, messages and documents they may see,
// and the sources that show them any (an empty source is not counted).
func (e *instance) Counts(private bool) record.Counts {
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.st
	if private {
		c := record.Counts{
			Sources:  len(st.sources),
			Messages: st.msgIdx.Len(), Documents: st.docIdx.Len(),
			MessageTerms: st.msgIdx.Terms(), DocumentTerms: st.docIdx.Terms(),
		}
		for _, ch := range st.chans {
			if ch != nil {
				countChannel(&c.Channels, &c.Threads, ch)
			}
		}
		return c
	}
	c := record.Counts{Messages: st.msgIdx.PublicLen(), Documents: st.docIdx.PublicLen()}
	shown := map[string]bool{}
	for n, ch := range st.chans {
		if ch != nil && !st.hid.chans.Contains(uint32(n)) {
			countChannel(&c.Channels, &c.Threads, ch)
			shown[ch.SourceID] = true
		}
	}
	for id := range st.sources {
		if !shown[id] && countVisible(st.docIdx, sourceFacet(id), false) > 0 {
			shown[id] = true
		}
	}
	c.Sources = len(shown)
	return c
}

// LastSnapshot describes the newest snapshot, or nil before the first.
func (e *instance) LastSnapshot() *record.SnapshotInfo { return e.lastSnap.Load() }

// LogStatus reports the write-ahead log's state.
func (e *instance) LogStatus() record.LogStatus {
	st := record.LogStatus{Seq: e.Seq(), InMemory: e.wal == nil}
	if snap := e.LastSnapshot(); snap != nil {
		st.SnapshotSeq = snap.Seq
	}
	if e.wal == nil {
		return st
	}
	ws := e.wal.Status()
	st.Segments = ws.Segments
	st.Bytes = ws.Bytes
	return st
}
