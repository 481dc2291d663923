package engine

import (
	"sync"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
)

// A Follower derives its own state from the store's records — the semantic
// layer's chunks and vectors — without the store knowing what it derives.
// It learns what changed from the change feed (Changes), reads the records
// through a View, and keeps its state in the store's snapshots as a section
// of its own, so that a restart resumes where the snapshot left off and
// the change feed, replayed from the log, brings it up to date.
type Follower interface {
	// Section names the follower's section in snapshots.
	Section() string
	// WriteSection writes the follower's state as of sequence number seq,
	// as payloads passed to put, in order. The store holds writers off
	// meanwhile, so every change up to seq is in the feed: the follower
	// takes them in (at least as work to do) before writing.
	WriteSection(seq uint64, put func(payload []byte) error) error
	// ReadSection reads what WriteSection wrote, next returning the
	// payloads in order, and validates it against the records in v. It
	// returns a commit the store calls only once the whole snapshot has
	// validated (a damaged snapshot is set aside for an older one).
	ReadSection(seq uint64, v *View, next func() ([]byte, error)) (commit func(), err error)
	// Edits counts the changes the follower made to its state; a snapshot
	// is due when it moved, even if no write came.
	Edits() uint64
	// Changed tells the follower that the feed grew. It is called after
	// each write and must return at once.
	Changed()
	// Stop ends the follower's background work. The store calls it when it
	// closes, before the final snapshot.
	Stop()
}

// ChangeKind says what a write changed.
type ChangeKind uint8

const (
	// DocumentChanged: the document in record Ref was stored or deleted
	// (an update is a deletion of the old record and a new record).
	DocumentChanged ChangeKind = iota + 1
	// ChannelChanged: channel Ref gained or lost messages, or was deleted.
	ChannelChanged
	// DocumentShown and ChannelShown: whether document or channel Ref is
	// hidden from callers without credentials changed (View.DocumentHidden,
	// View.ChannelHidden say how it is now).
	DocumentShown
	ChannelShown
)

// A Change is one entry of the change feed: at sequence number Seq, the
// record Ref of the kind changed. Refs are the store's record numbers of
// documents and channels: stable for the record's life and never reused.
type Change struct {
	Seq  uint64
	Kind ChangeKind
	Ref  uint32
}

// feed holds the changes the follower has not yet taken. Writers append
// under writeMu; Changes reads under the feed's own lock, so a follower
// never waits on a writer, nor a writer on it.
type feed struct {
	mu      sync.Mutex
	cur     uint64 // sequence number of the write being applied
	applied uint64 // the last write applied whole: Changes shows no later one
	buf     []Change
}

// changed records that the write being applied changed ref. Consecutive
// changes of one record by one write coalesce, so a bulk import into one
// channel is a handful of entries, not one per message. A change of an
// earlier write is never moved to the write being applied: Changes holds
// that write back until it is whole, and would hold the acknowledged
// change back with it (a channel written to without a pause would never
// reach the follower). A nil feed records nothing.
func (f *feed) changed(kind ChangeKind, ref uint32) {
	if f == nil {
		return
	}
	f.mu.Lock()
	if n := len(f.buf); n == 0 || f.buf[n-1] != (Change{Seq: f.cur, Kind: kind, Ref: ref}) {
		f.buf = append(f.buf, Change{Seq: f.cur, Kind: kind, Ref: ref})
	}
	f.mu.Unlock()
}

// Changes appends to dst the changes made after sequence number after,
// oldest first (several of one write share its number, so they come
// together). It is the feed of one follower: asking for the changes after
// N acknowledges those up to N, which the store then forgets. Without a
// follower (Options.Follower) it returns dst unchanged.
func (e *Engine) Changes(after uint64, dst []Change) []Change {
	f := e.feed
	if f == nil {
		return dst
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	after = min(after, f.applied)
	i := 0
	for i < len(f.buf) && f.buf[i].Seq <= after {
		i++
	}
	if i > 0 {
		f.buf = f.buf[:copy(f.buf, f.buf[i:])]
		if cap(f.buf) > 4096 && len(f.buf) < cap(f.buf)/4 {
			f.buf = append([]Change(nil), f.buf...)
		}
	}
	// A write being applied has appended part of its changes: they come
	// once it is whole, so that the follower never acknowledges half of it.
	n := len(f.buf)
	for n > 0 && f.buf[n-1].Seq > f.applied {
		n--
	}
	return append(dst, f.buf[:n]...)
}

// View reads the records for a follower, by record number, while the store
// holds its read lock (Engine.Read). Pointers it returns are the store's:
// read them within the call, never change them.
type View struct{ st *state }

// Read calls fn with a view of the records under the store's read lock.
// Writers wait meanwhile: keep fn short.
func (e *Engine) Read(fn func(v *View)) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	fn(&View{e.st})
}

// Documents returns the number of document records; refs are below it.
func (v *View) Documents() uint32 { return uint32(len(v.st.docs)) }

// Document returns document ref, or nil once deleted.
func (v *View) Document(ref uint32) *record.Document {
	if int(ref) >= len(v.st.docs) {
		return nil
	}
	return v.st.docs[ref]
}

// DocumentHidden reports whether document ref is hidden from callers
// without credentials.
func (v *View) DocumentHidden(ref uint32) bool { return v.st.docIdx.Hidden(ref) }

// Channels returns the number of channel records; refs are below it.
func (v *View) Channels() uint32 { return uint32(len(v.st.chans)) }

// Channel returns channel ref, or nil once deleted.
func (v *View) Channel(ref uint32) *record.Channel {
	if int(ref) >= len(v.st.chans) {
		return nil
	}
	return v.st.chans[ref]
}

// ChannelHidden reports whether channel ref is hidden from callers without
// credentials.
func (v *View) ChannelHidden(ref uint32) bool { return v.st.hid.chans.Contains(ref) }

// ChannelMessages returns the message refs of channel ref in time order.
func (v *View) ChannelMessages(ref uint32) []uint32 { return v.st.chanOrder[ref] }

// Messages returns the number of message records; refs are below it.
func (v *View) Messages() uint32 { return uint32(v.st.msgs.len()) }

// MessageText is what a derived index reads of a message: whether it still
// exists, its time (unix microseconds), its author as shown (display name,
// else username), its content, and its id and the id of the message it
// replies to ("" when none).
type MessageText struct {
	Live    bool
	Micros  int64
	Author  string
	Content string
	ID      string
	ReplyTo string
}

// MessageText returns message ref's text; a deleted message is not Live.
func (v *View) MessageText(ref uint32) MessageText {
	if int(ref) >= v.st.msgs.len() {
		return MessageText{}
	}
	r := v.st.msgs.at(ref)
	if !r.live() {
		return MessageText{}
	}
	a := v.st.authors[r.author]
	name := a.display
	if name == "" {
		name = a.name
	}
	return MessageText{Live: true, Micros: r.ts, Author: name, Content: v.st.text.msgContent(r.text),
		ID: v.st.text.msgID(r.text), ReplyTo: v.st.msgExtra[ref].replyTo}
}

// Message returns message ref whole. It must exist (MessageText.Live).
func (v *View) Message(ref uint32) record.Message { return v.st.message(ref) }

// Source returns a source, or nil.
func (v *View) Source(id string) *record.Source { return v.st.sources[id] }

// Analyzer analyses text as the store's full-text indexes do, so a
// follower's own index (the semantic layer's chunks) matches the same
// words. It is not safe for concurrent use.
type Analyzer = analysis.Analyzer

// NewAnalyzer returns an analyzer with large stem caches, for indexing.
func NewAnalyzer() *Analyzer { return analysis.New(0) }

// QueryTerms analyses plain text (no search syntax) into the ranked terms
// of a query as Search does.
func QueryTerms(text string) []index.Term { return analysis.QueryTerms(text) }

// AnalyzerVersion names the analyzer's output: a follower that saved an
// index made by another rebuilds it.
const AnalyzerVersion = analysis.Version

// Facet keys a follower may tag its own index with.
func SourceFacet(id string) string { return sourceFacet(id) }
