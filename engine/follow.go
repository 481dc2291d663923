package engine

import (
	"sync"

	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/record"
)

// The follow vocabulary (Follower, Change, View, MessageText) is the
// follow package's; the engine implements View and calls its Follower.
type (
	Follower    = follow.Follower
	ChangeKind  = follow.ChangeKind
	Change      = follow.Change
	MessageText = follow.MessageText
)

// The kinds of changes the feed holds (follow.ChangeKind).
const (
	DocumentChanged = follow.DocumentChanged
	ChannelChanged  = follow.ChannelChanged
	DocumentShown   = follow.DocumentShown
	ChannelShown    = follow.ChannelShown
)

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
func (e *instance) Changes(after uint64, dst []Change) []Change {
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

// View is the engine's follow.View: the records for a follower, by record
// number, while the store holds its read lock (Engine.Read).
type View struct{ st *state }

var _ follow.View = (*View)(nil)

// Read calls fn with a view of the records under the store's read lock.
// Writers wait meanwhile: keep fn short.
func (e *instance) Read(fn func(v follow.View)) {
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
