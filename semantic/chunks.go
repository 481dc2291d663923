package semantic

import (
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
)

// Chunks are the units of semantic search: a document is cut into passages
// (semantic/chunk), a channel's messages into conversation windows, so a
// one-line reply is found with its context. Chunks are derived from the
// records by the indexer (semindex.go) in the background, as the change
// feed says what changed.

type chunkKind uint8

const (
	chunkNone chunkKind = iota // a deleted slot
	chunkDoc
	chunkChat
)

// chunkRec is a chunk. Its slot is its id in the chunk index and in the
// vector index. Owners and messages are the store's record numbers.
type chunkRec struct {
	kind    chunkKind
	owner   uint32   // document ref (chunkDoc) or channel ref (chunkChat)
	start   int32    // chunkDoc: byte span of the content
	end     int32    //
	heading string   // chunkDoc: the heading the passage falls under
	msgs    []uint32 // chunkChat: message refs in time order
}

// chunkIndexOptions: chunks are indexed without positions (semantic search
// has no phrase queries).
func chunkIndexOptions(o index.Options) index.Options {
	o.NoPositions = true
	return o
}

// chunkSource returns the source id of a chunk, or "" for a dead one.
func chunkSource(v follow.View, c *chunkRec) string {
	switch c.kind {
	case chunkDoc:
		if d := v.Document(c.owner); d != nil {
			return d.SourceID
		}
	case chunkChat:
		if ch := v.Channel(c.owner); ch != nil {
			return ch.SourceID
		}
	}
	return ""
}

// chunkLive reports whether everything a chunk was made of still exists:
// a search checks it, so a deletion hides a chunk at once, before the
// indexer removes it.
func chunkLive(v follow.View, c *chunkRec) bool {
	switch c.kind {
	case chunkDoc:
		return v.Document(c.owner) != nil
	case chunkChat:
		if v.Channel(c.owner) == nil {
			return false
		}
		for _, m := range c.msgs {
			if v.MessageText(m).Live {
				return true
			}
		}
	}
	return false
}

// ownerHidden reports whether the store hides chunk c's document or
// channel from callers without credentials, as of now.
func ownerHidden(v follow.View, c *chunkRec) bool {
	switch c.kind {
	case chunkDoc:
		return v.DocumentHidden(c.owner)
	case chunkChat:
		return v.ChannelHidden(c.owner)
	}
	return false
}

// refreshHidden recomputes the hidden set of every chunk, in st.hidden and
// in the chunk index. The caller holds mu.
func (st *state) refreshHidden(v follow.View) {
	st.hidden = roaring.New()
	for i := range st.chunks {
		c := &st.chunks[i]
		h := c.kind != chunkNone && ownerHidden(v, c)
		if h {
			st.hidden.Add(uint32(i))
		}
		st.chunkIdx.Hide(uint32(i), h)
	}
}

// chunkText is what a chunk is indexed and embedded as: a passage under its
// document's title and heading, or a window's messages as "author: text"
// lines under the channel's name. Deleted messages are left out.
func chunkText(v follow.View, c *chunkRec) (title, body string) {
	switch c.kind {
	case chunkDoc:
		d := v.Document(c.owner)
		if d == nil {
			return "", ""
		}
		title = d.Title
		if c.heading != "" && c.heading != d.Title {
			title += " — " + c.heading
		}
		return title, d.Content[c.start:c.end]
	case chunkChat:
		ch := v.Channel(c.owner)
		if ch == nil {
			return "", ""
		}
		var b strings.Builder
		for _, m := range c.msgs {
			r := v.MessageText(m)
			if !r.Live {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(r.Author)
			b.WriteString(": ")
			b.WriteString(r.Content)
		}
		return ch.Name, b.String()
	}
	return "", ""
}

// sourceFacet tags a chunk with its source in the chunk index.
func sourceFacet(id string) string { return "s:" + id }
