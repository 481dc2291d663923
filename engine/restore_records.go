package engine

import (
	"time"

	"github.com/sift-search/sift/record"
)

// Records another store kept, written as it kept them: a backup of a
// Weaviate-backed service copies every record into an engine, and its
// channels and documents must keep their slugs (links point at them) and
// every source its creation time, which PutChannels, PutDocuments and
// PutSource would assign afresh. Nothing else uses these.

// PutSourceKeepingCreated is PutSource that keeps s.CreatedAt (when set)
// even for a source that exists, such as the built-in uploads source.
func (e *instance) PutSourceKeepingCreated(s record.Source) (record.Source, error) {
	if err := record.CheckSource(&s); err != nil {
		return record.Source{}, err
	}
	e.writeMu.Lock()
	now := record.ExactTime(time.Now())
	s.Version = e.seq + 1 // as commitSource numbers a new source
	if old, ok := e.st.sources[s.ID]; ok {
		s.Version = old.Version + 1
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	s.CreatedAt, s.UpdatedAt = record.ExactTime(s.CreatedAt), now
	seq, err := e.commit(&op{kind: opPutSource, source: s, cursorOK: true})
	e.writeMu.Unlock()
	if err != nil {
		return record.Source{}, err
	}
	return record.CopySource(&s), e.sync(seq)
}

// PutChannelsKeepingSlugs is PutChannels that gives a new channel the
// Slug it carries when that is a valid slug no other channel holds (else
// a unique slug of its name, as PutChannels does).
func (e *instance) PutChannelsKeepingSlugs(chs []record.Channel) ([]record.Channel, error) {
	return e.putChannels(chs, true)
}

// PutDocumentsKeepingSlugs is PutDocuments that gives a new document the
// Slug it carries when that is a valid slug no other document holds (else
// a unique slug of its title, as PutDocuments does).
func (e *instance) PutDocumentsKeepingSlugs(docs []record.Document) ([]record.Document, error) {
	return e.putDocuments(docs, true)
}
