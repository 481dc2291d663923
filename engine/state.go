package engine

import (
	"strconv"
	"time"

	"github.com/sift-search/sift/engine/index"
	"github.com/sift-search/sift/tokenizer"
)

// state is everything the engine holds. Writers change it holding both the
// engine's writeMu and mu; readers hold mu.RLock (or writeMu alone, which
// keeps every writer out).
type state struct {
	sources  map[string]*Source
	chans    []*Channel // by channel number; nil once deleted
	chanKey  map[recKey]uint32
	chanSlug map[string]uint32
	msgs     []msgRec // by message slot, which is the message's id in msgIdx
	msgKey   map[recKey]uint32
	docs     []*Document // by document slot, its id in docIdx; nil once deleted
	docID    map[string]uint32
	docSlug  map[string]uint32
	authors  []author
	authorNo map[author]uint32
	msgIdx   *index.Index
	docIdx   *index.Index
}

type recKey struct{ source, id string }

type author struct{ name, display string }

// msgRec is a stored message: the Message fields less those its channel and
// author tables hold. A deleted slot has an empty id.
type msgRec struct {
	id      string
	content string
	replyTo string
	url     string
	ts      int64 // unix microseconds
	edited  int64
	channel uint32
	author  uint32
}

func newState(opts index.Options) *state {
	return &state{
		sources:  make(map[string]*Source),
		chanKey:  make(map[recKey]uint32),
		chanSlug: make(map[string]uint32),
		msgKey:   make(map[recKey]uint32),
		docID:    make(map[string]uint32),
		docSlug:  make(map[string]uint32),
		authorNo: make(map[author]uint32),
		msgIdx:   index.New(opts),
		docIdx:   index.New(opts),
	}
}

// message rebuilds the public form of the message in slot i.
func (st *state) message(i uint32) Message {
	r := &st.msgs[i]
	ch := st.chans[r.channel]
	a := st.authors[r.author]
	return Message{
		SourceID: ch.SourceID, ChannelID: ch.ID, ID: r.id, Author: a.name, AuthorName: a.display,
		Content: r.content, Timestamp: microTime(r.ts), EditedAt: microTime(r.edited),
		ReplyTo: r.replyTo, URL: r.url,
	}
}

// sameMessage reports whether storing m would change nothing.
func (st *state) sameMessage(i uint32, m *Message) bool {
	r := &st.msgs[i]
	a := st.authors[r.author]
	ch := st.chans[r.channel]
	return r.content == m.Content && a.name == m.Author && a.display == m.AuthorName &&
		r.ts == timeMicro(m.Timestamp) && r.edited == timeMicro(m.EditedAt) &&
		r.replyTo == m.ReplyTo && r.url == m.URL && ch.ID == m.ChannelID
}

func (st *state) authorFor(name, display string) uint32 {
	a := author{name, display}
	if n, ok := st.authorNo[a]; ok {
		return n
	}
	n := uint32(len(st.authors))
	st.authors = append(st.authors, a)
	st.authorNo[a] = n
	return n
}

// Facet keys of the indexes.
func sourceFacet(id string) string   { return "s:" + id }
func channelFacet(n uint32) string   { return "c:" + strconv.FormatUint(uint64(n), 10) }
func authorFacet(name string) string { return "a:" + tokenizer.Fold(name) }

// messageFacets lists the facets message m of channel number ch is tagged with.
func messageFacets(dst []string, m *Message, ch uint32) []string {
	dst = append(dst, sourceFacet(m.SourceID), channelFacet(ch))
	if m.Author != "" {
		dst = append(dst, authorFacet(m.Author))
	}
	if m.AuthorName != "" && tokenizer.Fold(m.AuthorName) != tokenizer.Fold(m.Author) {
		dst = append(dst, authorFacet(m.AuthorName))
	}
	return dst
}

// deleteMessage frees slot i. The caller holds the write locks.
func (st *state) deleteMessage(i uint32) {
	r := &st.msgs[i]
	if r.id == "" {
		return
	}
	delete(st.msgKey, recKey{st.chans[r.channel].SourceID, r.id})
	st.msgIdx.Delete(i)
	*r = msgRec{}
}

// deleteDocument frees slot i. The caller holds the write locks.
func (st *state) deleteDocument(i uint32) {
	d := st.docs[i]
	if d == nil {
		return
	}
	delete(st.docID, d.ID)
	delete(st.docSlug, d.Slug)
	st.docIdx.Delete(i)
	st.docs[i] = nil
}

// timeMicro and microTime convert between times and unix microseconds, with
// 0 standing for the zero time.
func timeMicro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func microTime(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}
