package engine

import (
	"strconv"
	"time"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/tokenizer"
)

// state is everything the engine holds. Writers change it holding both the
// engine's writeMu and mu; readers hold mu.RLock (or writeMu alone, which
// keeps every writer out).
//
// Its methods are split by role among the types it embeds, each of which
// is the state itself (newState sets them), as listed below. Its own are
// those of the sources, channels and documents: storing them, copies for
// readers, their slugs, their titles for suggestions, the languages they
// are in, and the insights table.
type state struct {
	messageTable // the messages and their order in each channel (messages.go, order.go)
	visibility   // the operators' rules and what they hide (visibility.go)
	snapCodec    // the state as a snapshot's frames, and back (snapshot.go)

	sources   map[string]*record.Source
	rules     map[string]*sourceRules // by source id; see visibility.go
	settings  map[string]string       // the instance's settings (site name, …)
	hid       hidden                  // what callers without credentials must not see
	langs     langCache               // the languages records are in (languages.go)
	chans     []*record.Channel       // by channel number; nil once deleted
	chanKey   map[recKey]uint32
	chanSlug  map[string]uint32
	msgs      recs // by message slot, which is the message's id in msgIdx
	msgExtra  map[uint32]msgExtra
	msgKey    keyTable           // hash of source and id -> slot; see messages.go
	text      slab               // the ids and contents of msgs
	docs      []*record.Document // by document slot, its id in docIdx; nil once deleted
	docID     map[string]uint32
	docSlug   map[string]uint32
	authors   []author
	authorNo  map[author]uint32
	msgIdx    *index.Index
	docIdx    *index.Index
	chanOrder map[uint32][]uint32 // channel -> its message slots in time order

	// insights is the insights table (insights.go), guarded by writeMu
	// alone: no search reads it.
	insights map[insightKey]insightCounts

	// feed records what writes change, for the follower; nil without one
	// and while a snapshot is read.
	feed *feed
	// commit installs the follower's section read with a snapshot; whoever
	// read the snapshot calls it (commitSection) once all of it checked out.
	commit func()
}

// commitSection installs the follower's section read with st, if any.
func (st *state) commitSection() {
	if st.commit != nil {
		st.commit()
		st.commit = nil
	}
}

type recKey struct{ source, id string }

type author struct{ name, display string }

func newState(opts index.Options) *state {
	st := &state{
		sources:   make(map[string]*record.Source),
		rules:     make(map[string]*sourceRules),
		settings:  make(map[string]string),
		insights:  make(map[insightKey]insightCounts),
		hid:       newHidden(),
		chanKey:   make(map[recKey]uint32),
		chanSlug:  make(map[string]uint32),
		msgExtra:  make(map[uint32]msgExtra),
		docID:     make(map[string]uint32),
		docSlug:   make(map[string]uint32),
		authorNo:  make(map[author]uint32),
		msgIdx:    index.New(opts),
		docIdx:    index.New(opts),
		chanOrder: make(map[uint32][]uint32),
	}
	st.messageTable, st.visibility, st.snapCodec = messageTable{st}, visibility{st}, snapCodec{st}
	return st
}

// Facet keys of the indexes.
func sourceFacet(id string) string   { return "s:" + id }
func channelFacet(n uint32) string   { return "c:" + strconv.FormatUint(uint64(n), 10) }
func authorFacet(name string) string { return "a:" + tokenizer.Fold(name) }

// messageFacets lists the facets message m of channel number ch is tagged with.
func messageFacets(dst []string, m *record.Message, ch uint32) []string {
	dst = append(dst, sourceFacet(m.SourceID), channelFacet(ch))
	if m.Author != "" {
		dst = append(dst, authorFacet(m.Author))
	}
	if m.AuthorName != "" && tokenizer.Fold(m.AuthorName) != tokenizer.Fold(m.Author) {
		dst = append(dst, authorFacet(m.AuthorName))
	}
	return dst
}

// deleteDocument frees slot i. The caller holds the write locks.
func (st *state) deleteDocument(i uint32) {
	d := st.docs[i]
	if d == nil {
		return
	}
	st.feed.changed(DocumentChanged, i)
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
