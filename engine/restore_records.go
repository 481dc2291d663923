package engine

import (
	"slices"
	"time"
)

// Records another store kept, written as it kept them: a backup of a
// Weaviate-backed service copies every record into an engine, and its
// channels and documents must keep their slugs (links point at them) and
// every source its creation time, which PutChannels, PutDocuments and
// PutSource would assign afresh. Nothing else uses these.

// PutSourceKeepingCreated is PutSource that keeps s.CreatedAt (when set)
// even for a source that exists, such as the built-in uploads source.
func (e *Engine) PutSourceKeepingCreated(s Source) (Source, error) {
	if err := checkSource(&s); err != nil {
		return Source{}, err
	}
	e.writeMu.Lock()
	now := exactTime(time.Now())
	s.Version = e.seq + 1 // as commitSource numbers a new source
	if old, ok := e.st.sources[s.ID]; ok {
		s.Version = old.Version + 1
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.CreatedAt, s.UpdatedAt = exactTime(s.CreatedAt), now
	seq, err := e.commit(&op{kind: opPutSource, source: s, cursorOK: true})
	e.writeMu.Unlock()
	if err != nil {
		return Source{}, err
	}
	return copySource(&s), e.sync(seq)
}

// PutChannelsKeepingSlugs is PutChannels that gives a new channel the
// Slug it carries when that is a valid slug no other channel holds (else
// a unique slug of its name, as PutChannels does).
func (e *Engine) PutChannelsKeepingSlugs(chs []Channel) ([]Channel, error) {
	out := slices.Clone(chs)
	for i := range out {
		if err := checkChannel(&out[i]); err != nil {
			return nil, err
		}
	}
	e.writeMu.Lock()
	taken := map[string]uint32{}
	used := slugsIn(e.st.chanSlug, taken)
	for i := range out {
		c := &out[i]
		if _, ok := e.st.sources[c.SourceID]; !ok {
			e.writeMu.Unlock()
			return nil, invalidf("channel %q: unknown source %q", c.ID, c.SourceID)
		}
		c.NameAuthor = ""
		if n, ok := e.st.chanKey[recKey{c.SourceID, c.ID}]; ok {
			c.Slug, c.CreatedAt = e.st.chans[n].Slug, e.st.chans[n].CreatedAt
			continue
		}
		if !ValidSlug(c.Slug) || used(c.Slug) {
			c.Slug = uniqueSlug(c.Name, "channel", used)
		}
		taken[c.Slug] = 0
		if c.CreatedAt.IsZero() {
			c.CreatedAt = time.Now()
		}
		c.CreatedAt = exactTime(c.CreatedAt)
	}
	seq, err := e.commit(&op{kind: opPutChannels, channels: out})
	e.writeMu.Unlock()
	if err != nil {
		return nil, err
	}
	return out, e.sync(seq)
}

// PutDocumentsKeepingSlugs is PutDocuments that gives a new document the
// Slug it carries when that is a valid slug no other document holds (else
// a unique slug of its title, as PutDocuments does).
func (e *Engine) PutDocumentsKeepingSlugs(docs []Document) ([]Document, error) {
	out := slices.Clone(docs)
	now := time.Now()
	for i := range out {
		if err := checkDocument(&out[i], now); err != nil {
			return nil, err
		}
	}
	out = lastOfEachID(out)
	var lastSeq uint64
	for start := 0; start < len(out); {
		e.writeMu.Lock()
		taken := map[string]uint32{}
		used := slugsIn(e.st.docSlug, taken)
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
			if !ValidSlug(d.Slug) || used(d.Slug) {
				d.Slug = uniqueSlug(d.Title, "doc", used)
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
