package engine

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/sift-search/sift/engine/index"
)

// Chunks are the units of semantic search: a document is cut into passages
// (chunk_doc.go), a channel's messages into conversation windows, so a
// one-line reply is found with its context. Chunks are derived from the
// records by the semantic indexer (semindex.go) in the background; writes
// only mark what changed.

type chunkKind uint8

const (
	chunkNone chunkKind = iota // a deleted slot
	chunkDoc
	chunkChat
)

// chunkRec is a chunk. Its slot is its id in the chunk index and in the
// vector index.
type chunkRec struct {
	kind    chunkKind
	owner   uint32   // document slot (chunkDoc) or channel number (chunkChat)
	start   int32    // chunkDoc: byte span of the content
	end     int32    //
	heading string   // chunkDoc: the heading the passage falls under
	msgs    []uint32 // chunkChat: message slots in time order
}

// Conversation windows: consecutive messages of a channel, split at a
// silence longer than windowGap or when a window reaches windowMaxMsgs
// messages or windowMaxBytes of text.
const (
	windowGap      = 30 * time.Minute
	windowMaxMsgs  = 20
	windowMaxBytes = 2000
)

// chunkOptions: chunks are indexed without positions (semantic search has
// no phrase queries), and a document chunk's title counts like a document's.
func chunkIndexOptions(o index.Options) index.Options {
	o.NoPositions = true
	return o
}

// orderInsert adds message slot i to its channel's time order.
func (st *state) orderInsert(ch, i uint32) {
	o := st.chanOrder[ch]
	at := len(o)
	if at > 0 && st.msgCmp(i, o[at-1]) < 0 { // not the newest: a backfill
		at, _ = slices.BinarySearchFunc(o, i, st.msgCmp)
	}
	st.chanOrder[ch] = slices.Insert(o, at, i)
	st.dirtyChans.Add(ch)
}

// orderRemove drops message slot i from its channel's time order. Called
// before the record is cleared.
func (st *state) orderRemove(ch, i uint32) {
	o := st.chanOrder[ch]
	if at, ok := slices.BinarySearchFunc(o, i, st.msgCmp); ok {
		st.chanOrder[ch] = slices.Delete(o, at, at+1)
	}
	if len(st.chanOrder[ch]) == 0 {
		delete(st.chanOrder, ch)
	}
	st.dirtyChans.Add(ch)
}

// msgCmp orders message slots by time, then slot.
func (st *state) msgCmp(a, b uint32) int {
	if c := cmp.Compare(st.msgs[a].ts, st.msgs[b].ts); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// windows cuts a channel's messages (in time order) into conversation
// windows.
func (st *state) windows(order []uint32) [][]uint32 {
	var out [][]uint32
	var cur []uint32
	bytes := 0
	gap := windowGap.Microseconds()
	for _, i := range order {
		r := &st.msgs[i]
		if len(cur) > 0 && (r.ts-st.msgs[cur[len(cur)-1]].ts > gap || len(cur) >= windowMaxMsgs ||
			bytes+len(r.content) > windowMaxBytes) {
			out = append(out, cur)
			cur, bytes = nil, 0
		}
		cur = append(cur, i)
		bytes += len(r.content)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// chunkSource returns the source id of a chunk, or "" for a dead one.
func (st *state) chunkSource(c *chunkRec) string {
	switch c.kind {
	case chunkDoc:
		if d := st.docs[c.owner]; d != nil {
			return d.SourceID
		}
	case chunkChat:
		if ch := st.chans[c.owner]; ch != nil {
			return ch.SourceID
		}
	}
	return ""
}

// chunkLive reports whether everything a chunk was made of still exists:
// a search checks it, so a deletion hides a chunk at once, before the
// indexer removes it.
func (st *state) chunkLive(c *chunkRec) bool {
	switch c.kind {
	case chunkDoc:
		return st.docs[c.owner] != nil
	case chunkChat:
		if st.chans[c.owner] == nil {
			return false
		}
		for _, m := range c.msgs {
			if st.msgs[m].id != "" {
				return true
			}
		}
	}
	return false
}

// chunkText is what a chunk is indexed and embedded as: a passage under its
// document's title and heading, or a window's messages as "author: text"
// lines under the channel's name. Deleted messages are left out.
func (st *state) chunkText(c *chunkRec) (title, body string) {
	switch c.kind {
	case chunkDoc:
		d := st.docs[c.owner]
		if d == nil {
			return "", ""
		}
		title = d.Title
		if c.heading != "" && c.heading != d.Title {
			title += " — " + c.heading
		}
		return title, d.Content[c.start:c.end]
	case chunkChat:
		ch := st.chans[c.owner]
		if ch == nil {
			return "", ""
		}
		var b strings.Builder
		for _, m := range c.msgs {
			r := &st.msgs[m]
			if r.id == "" {
				continue
			}
			a := st.authors[r.author]
			name := a.display
			if name == "" {
				name = a.name
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(name)
			b.WriteString(": ")
			b.WriteString(r.content)
		}
		return ch.Name, b.String()
	}
	return "", ""
}
