// Package follow is the vocabulary between a store and a follower that
// derives its own state from the store's records (the semantic layer's
// chunks and vectors): the change feed's entries (Change), the view of the
// records by number (View), what a derived index reads of a message
// (MessageText), and the follower's part in the store's snapshots
// (Follower). The store implements View and calls a Follower; the follower
// imports neither the store nor anything of it.
package follow

import "github.com/sift-search/sift/record"

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
	ReadSection(seq uint64, v View, next func() ([]byte, error)) (commit func(), err error)
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

// View reads a store's records for a follower, by record number, while
// the store holds its read lock (the store's Read). Pointers it returns are
// the store's: read them within the call, never change them. Refs of
// documents, channels and messages are stable for the record's life and
// never reused.
type View interface {
	// Documents returns the number of document records; refs are below it.
	Documents() uint32
	// Document returns document ref, or nil once deleted.
	Document(ref uint32) *record.Document
	// DocumentHidden reports whether document ref is hidden from callers
	// without credentials.
	DocumentHidden(ref uint32) bool
	// Channels returns the number of channel records; refs are below it.
	Channels() uint32
	// Channel returns channel ref, or nil once deleted.
	Channel(ref uint32) *record.Channel
	// ChannelHidden reports whether channel ref is hidden from callers
	// without credentials.
	ChannelHidden(ref uint32) bool
	// ChannelMessages returns the message refs of channel ref in time order.
	ChannelMessages(ref uint32) []uint32
	// Messages returns the number of message records; refs are below it.
	Messages() uint32
	// MessageText returns message ref's text; a deleted message is not Live.
	MessageText(ref uint32) MessageText
	// Message returns message ref whole. It must exist (MessageText.Live).
	Message(ref uint32) record.Message
	// Source returns a source, or nil.
	Source(id string) *record.Source
}

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
