package engine

import (
	"cmp"
	"slices"
	"time"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
)

// content is the engine's role of keeping the channels, messages and
// documents: reading them by slug or id, for the pages, the reading API
// and the crawlers (this file, read_window.go, reads.go, threads.go), and
// writing them (engine_write.go). Like catalog it is the engine itself,
// embedded in it.
type content struct{ *Engine }

// countChannel adds c to the channels or, when it is a thread, to the
// threads.
func countChannel(chans, threads *int, c *record.Channel) {
	if c.ParentID != "" {
		*threads++
	} else {
		*chans++
	}
}

// countVisible counts the documents of ix tagged facet, less the hidden ones
// unless private.
func countVisible(ix *index.Index, facet string, private bool) int {
	set := ix.Facet(facet)
	n := int(set.GetCardinality())
	if !private {
		n -= ix.CountHidden(set)
	}
	return n
}

// Channels returns the channels of a source (all sources when id is ""),
// ordered by name; without private, only those callers without credentials
// may see.
func (e *content) Channels(sourceID string, private bool) []record.Channel {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []record.Channel
	for n, c := range e.st.chans {
		if c != nil && (sourceID == "" || c.SourceID == sourceID) {
			if ch := e.st.channel(uint32(n)); private || !ch.Hidden {
				out = append(out, ch)
			}
		}
	}
	slices.SortFunc(out, func(a, b record.Channel) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// ChannelBySlug returns the channel with the given slug.
func (e *content) ChannelBySlug(slug string) (record.Channel, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanSlug[slug]
	if !ok {
		return record.Channel{}, false
	}
	return e.st.channel(n), true
}

// ChannelMessages returns a page of a channel's messages in time order and
// the channel's message count.
func (e *content) ChannelMessages(slug string, offset, limit int) ([]record.Message, int, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	slots, err := e.channelSlots(slug)
	if err != nil {
		return nil, 0, err
	}
	total := len(slots)
	offset = min(max(offset, 0), total)
	slots = slots[offset:min(offset+max(limit, 0), total)]
	out := make([]record.Message, len(slots))
	for i, s := range slots {
		out[i] = e.st.message(s)
	}
	return out, total, nil
}

// channelSlots returns the message slots of a channel in time order (the
// order the state keeps for each channel; not to be changed); the caller
// holds mu.
func (e *content) channelSlots(slug string) ([]uint32, error) {
	n, ok := e.st.chanSlug[slug]
	if !ok {
		return nil, record.ErrNotFound
	}
	return e.st.chanOrder[n], nil
}

// MessagePosition returns where a message stands in its channel's time
// order (0 is the first), for the page that shows it.
func (e *content) MessagePosition(slug, id string) (int, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanSlug[slug]
	if !ok {
		return 0, record.ErrNotFound
	}
	slot, ok := e.st.findMessage(e.st.chans[n].SourceID, id)
	if !ok || e.st.msgs.at(slot).channel != n {
		return 0, record.ErrNotFound
	}
	at, found := slices.BinarySearchFunc(e.st.chanOrder[n], slot, e.st.msgCmp)
	if !found {
		return 0, record.ErrNotFound
	}
	return at, nil
}

// ChannelPageTimes splits a channel's messages, in time order, into pages
// of size and returns for each the latest time a message on it was
// written or edited; a channel without messages has no pages.
func (e *content) ChannelPageTimes(slug string, size int) ([]time.Time, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	slots, err := e.channelSlots(slug)
	if err != nil {
		return nil, err
	}
	size = max(size, 1)
	out := make([]time.Time, 0, (len(slots)+size-1)/size)
	for start := 0; start < len(slots); start += size {
		var last int64
		for _, s := range slots[start:min(start+size, len(slots))] {
			last = max(last, e.st.msgs.at(s).ts, e.st.msgExtra[s].edited)
		}
		out = append(out, microTime(last))
	}
	return out, nil
}

// Documents returns a page of documents, newest first, and their count;
// without private, only those callers without credentials may see.
func (e *content) Documents(offset, limit int, private bool) ([]record.Document, int) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	docs := make([]*record.Document, 0, len(e.st.docID))
	for i, d := range e.st.docs {
		if d != nil && (private || !e.st.docIdx.Hidden(uint32(i))) {
			docs = append(docs, d)
		}
	}
	slices.SortStableFunc(docs, func(a, b *record.Document) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	total := len(docs)
	offset = min(max(offset, 0), total)
	docs = docs[offset:min(offset+max(limit, 0), total)]
	out := make([]record.Document, len(docs))
	for i, d := range docs {
		out[i] = e.st.document(e.st.docID[d.ID])
	}
	return out, total
}

// SourceDocuments returns the documents of a source, ordered by key.
func (e *content) SourceDocuments(sourceID string) []record.Document {
	e.mu.RLock()
	defer e.mu.RUnlock()
	slots := e.st.docIdx.Facet(sourceFacet(sourceID)).ToArray()
	out := make([]record.Document, 0, len(slots))
	for _, n := range slots {
		if e.st.docs[n] != nil {
			out = append(out, e.st.document(n))
		}
	}
	slices.SortFunc(out, func(a, b record.Document) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// DocumentBySlug returns the document with the given slug.
func (e *content) DocumentBySlug(slug string) (record.Document, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.docSlug[slug]
	if !ok {
		return record.Document{}, false
	}
	return e.st.document(n), true
}

// Document returns the document with the given id.
func (e *content) Document(id string) (record.Document, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.docID[id]
	if !ok {
		return record.Document{}, false
	}
	return e.st.document(n), true
}

// ChannelByID returns a source's channel by its platform id.
func (e *content) ChannelByID(sourceID, id string) (record.Channel, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanKey[recKey{sourceID, id}]
	if !ok {
		return record.Channel{}, false
	}
	return e.st.channel(n), true
}

// ChannelMessageIDs returns the ids of a channel's messages, in time order.
func (e *content) ChannelMessageIDs(slug string) ([]string, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	slots, err := e.channelSlots(slug)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = e.st.msgID(s)
	}
	return out, nil
}
