package engine

import (
	"slices"
	"time"

	"github.com/sift-search/sift/record"
)

// Limits on what one logged operation may carry.
const (
	maxMessagesPerOp  = 4096
	maxOpPayloadBytes = 32 << 20
)

// PutChannels creates or updates channels and returns them with their slugs.
// An existing channel keeps its slug; a new one gets a unique slug of its name.
func (e *content) PutChannels(chs []record.Channel) ([]record.Channel, error) {
	return e.putChannels(chs, false)
}

// putChannels is PutChannels; with keepSlugs, a new channel keeps the Slug
// it carries when that is a valid slug no other channel holds.
func (e *content) putChannels(chs []record.Channel, keepSlugs bool) ([]record.Channel, error) {
	out := make([]record.Channel, len(chs))
	copy(out, chs)
	for i := range out {
		if err := record.CheckChannel(&out[i]); err != nil {
			return nil, err
		}
	}
	e.writeMu.Lock()
	taken := map[string]uint32{}
	for i := range out {
		c := &out[i]
		if _, ok := e.st.sources[c.SourceID]; !ok {
			e.writeMu.Unlock()
			return nil, invalidf("channel %q: unknown source %q", c.ID, c.SourceID)
		}
		if e.st.optedOut(c.SourceID, c.NameAuthor) {
			c.Name = record.AnonymousThread
		}
		c.NameAuthor = ""
		if n, ok := e.st.chanKey[recKey{c.SourceID, c.ID}]; ok {
			c.Slug, c.CreatedAt = e.st.chans[n].Slug, e.st.chans[n].CreatedAt
			continue
		}
		if used := slugsIn(e.st.chanSlug, taken); !keepSlugs || !record.ValidSlug(c.Slug) || used(c.Slug) {
			c.Slug = record.SlugFor(c.Name, "channel", e.st.newChannelSlugKey(c, out), used)
		}
		taken[c.Slug] = 0
		if c.CreatedAt.IsZero() {
			c.CreatedAt = time.Now()
		}
		c.CreatedAt = record.ExactTime(c.CreatedAt)
	}
	seq, err := e.commit(&op{kind: opPutChannels, channels: out})
	e.writeMu.Unlock()
	if err != nil {
		return nil, err
	}
	return out, e.sync(seq)
}

// PutMessages creates or updates messages; each names a source and one of
// its channels. Messages identical to the stored ones are skipped, so a
// repeated import writes nothing. It returns how many were new or changed.
// Author names lose control characters; times are kept to the microsecond.
func (e *content) PutMessages(msgs []record.Message) (int, error) {
	c, err := e.PutMessagesCounted(msgs)
	return c.New + c.Updated, err
}

// PutMessagesCounted is PutMessages, counting what became of each message
// written; on an error, the counts are those of what was written before it.
func (e *content) PutMessagesCounted(msgs []record.Message) (record.PutCounts, error) {
	var counts record.PutCounts
	msgs = slices.Clone(msgs)
	for i := range msgs {
		if err := record.CheckMessage(&msgs[i]); err != nil {
			return counts, err
		}
	}
	e.mu.RLock()
	for i := range msgs {
		if _, ok := e.st.chanKey[recKey{msgs[i].SourceID, msgs[i].ChannelID}]; !ok && !e.st.skipsMessage(&msgs[i]) {
			e.mu.RUnlock()
			return counts, invalidf("message %q: unknown channel %q of source %q", msgs[i].ID, msgs[i].ChannelID, msgs[i].SourceID)
		}
	}
	e.mu.RUnlock()

	lastSeq := uint64(0)
	for start := 0; start < len(msgs); {
		e.writeMu.Lock()
		batch := make([]record.Message, 0, min(len(msgs)-start, maxMessagesPerOp))
		var step record.PutCounts
		bytes := 0
		for ; start < len(msgs) && len(batch) < maxMessagesPerOp && bytes < maxOpPayloadBytes; start++ {
			m := msgs[start]
			if len(batch) > 0 && m.SourceID != batch[0].SourceID {
				break // one source per record
			}
			old, found := e.st.findMessage(m.SourceID, m.ID)
			switch {
			case e.st.skipsMessage(&m):
				step.KeptOut++ // an operator keeps it out
				continue
			case found && e.st.sameMessage(old, &m):
				step.Unchanged++
				continue
			case found:
				step.Updated++
			default:
				step.New++
			}
			batch = append(batch, m)
			bytes += len(m.Content) + len(m.ID) + len(m.ChannelID) + len(m.Author) + len(m.AuthorName) + len(m.ReplyTo) + len(m.URL) + 64
		}
		if len(batch) > 0 {
			seq, err := e.commit(&op{kind: opPutMessages, messages: batch})
			if err != nil {
				e.writeMu.Unlock()
				return counts, err
			}
			lastSeq = seq
		}
		counts.New, counts.Updated = counts.New+step.New, counts.Updated+step.Updated
		counts.Unchanged, counts.KeptOut = counts.Unchanged+step.Unchanged, counts.KeptOut+step.KeptOut
		e.writeMu.Unlock()
	}
	return counts, e.sync(lastSeq)
}

// DeleteMessages deletes messages of a source by id; unknown ids are
// ignored. It returns how many were deleted.
func (e *content) DeleteMessages(sourceID string, ids []string) (int, error) {
	e.writeMu.Lock()
	n := len(e.st.messageSlots(sourceID, ids))
	if n == 0 {
		e.writeMu.Unlock()
		return 0, nil
	}
	seq, err := e.commit(&op{kind: opDeleteMessages, id: sourceID, ids: ids})
	e.writeMu.Unlock()
	if err != nil {
		return 0, err
	}
	return n, e.sync(seq)
}

// PutDocuments creates or replaces documents and returns them as stored.
// SourceID defaults to the uploads source; Key defaults to the URL, else the
// title; the id derives from both. A replaced document keeps its slug.
func (e *content) PutDocuments(docs []record.Document) ([]record.Document, error) {
	return e.putDocuments(docs, false)
}

// putDocuments is PutDocuments; with keepSlugs, a new document keeps the
// Slug it carries when that is a valid slug no other document holds.
func (e *content) putDocuments(docs []record.Document, keepSlugs bool) ([]record.Document, error) {
	out := make([]record.Document, len(docs))
	copy(out, docs)
	now := time.Now()
	for i := range out {
		if err := record.CheckDocument(&out[i], now); err != nil {
			return nil, err
		}
	}
	out = record.LastOfEachID(out)
	var lastSeq uint64
	for start := 0; start < len(out); {
		e.writeMu.Lock()
		taken := map[string]uint32{}
		end, bytes := start, 0
		for ; end < len(out) && (end == start || bytes+len(out[end].Content) < maxOpPayloadBytes); end++ {
			d := &out[end]
			bytes += len(d.Content) + len(d.Title) + 256
			if _, ok := e.st.sources[d.SourceID]; !ok {
				e.writeMu.Unlock()
				return nil, invalidf("document %q: unknown source %q", d.Title, d.SourceID)
			}
			if n, ok := e.st.docID[d.ID]; ok {
				d.Slug, d.CreatedAt = e.st.docs[n].Slug, e.st.docs[n].CreatedAt
				continue
			}
			if used := slugsIn(e.st.docSlug, taken); !keepSlugs || !record.ValidSlug(d.Slug) || used(d.Slug) {
				d.Slug = record.SlugFor(d.Title, "doc", e.st.newDocumentSlugKey(d), used)
			}
			taken[d.Slug] = 0
			if d.CreatedAt.IsZero() {
				d.CreatedAt = d.UpdatedAt
			}
		}
		seq, err := e.commit(&op{kind: opPutDocuments, docs: out[start:end]})
		e.writeMu.Unlock()
		if err != nil {
			return nil, err
		}
		lastSeq, start = seq, end
	}
	return out, e.sync(lastSeq)
}

// DeleteDocument deletes a document by id.
func (e *content) DeleteDocument(id string) error {
	e.writeMu.Lock()
	if _, ok := e.st.docID[id]; !ok {
		e.writeMu.Unlock()
		return record.ErrNotFound
	}
	seq, err := e.commit(&op{kind: opDeleteDocuments, ids: []string{id}})
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}
