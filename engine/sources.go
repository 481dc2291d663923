package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sift-search/sift/record"
)

// catalog is the engine's role of keeping the sources and what operators
// decide about them: source records and their versions, crawl cursors,
// and (operator.go) channel visibility, exclusions and opt-outs. It is the engine itself, embedded in it, so its
// methods are the engine's: the split is of methods by role, not of the
// data, which every role reads.
type catalog struct{ *Engine }

// Sources returns every source, ordered by id.
func (e *catalog) Sources() []record.Source {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]record.Source, 0, len(e.st.sources))
	for _, id := range sortedKeys(e.st.sources) {
		out = append(out, record.CopySource(e.st.sources[id]))
	}
	return out
}

// Source returns one source.
func (e *catalog) Source(id string) (record.Source, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s, ok := e.st.sources[id]
	if !ok {
		return record.Source{}, false
	}
	return record.CopySource(s), true
}

// SourceStats counts the channels, threads, messages and documents of a
// source; without private, only what callers without credentials may see.
// O(channels).
func (e *catalog) SourceStats(id string, private bool) record.SourceStats {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var s record.SourceStats
	for n, c := range e.st.chans {
		if c != nil && c.SourceID == id && (private || !e.st.hid.chans.Contains(uint32(n))) {
			countChannel(&s.Channels, &s.Threads, c)
		}
	}
	s.Messages = countVisible(e.st.msgIdx, sourceFacet(id), private)
	s.Documents = countVisible(e.st.docIdx, sourceFacet(id), private)
	return s
}

// PutSource creates or replaces a source, its crawl cursor included.
// CreatedAt is kept for an existing source and set for a new one; UpdatedAt
// is set to now; Version becomes the stored one plus one.
func (e *catalog) PutSource(s record.Source) (record.Source, error) {
	if err := record.CheckSource(&s); err != nil {
		return record.Source{}, err
	}
	e.writeMu.Lock()
	seq, err := e.commitSource(&s, true)
	e.writeMu.Unlock()
	if err != nil {
		return record.Source{}, err
	}
	return record.CopySource(&s), e.sync(seq)
}

// PutSourceIf creates or replaces a source like PutSource, provided the
// stored source's Version is version (0 when no source has the id, so
// version 0 creates one only if there is none); otherwise it changes
// nothing and returns an error wrapping ErrConflict. It leaves the crawl
// cursor as stored, whatever s.Cursor says: the cursor is SetCursor's.
func (e *catalog) PutSourceIf(s record.Source, version uint64) (record.Source, error) {
	if err := record.CheckSource(&s); err != nil {
		return record.Source{}, err
	}
	return e.putSourceIf(&s, version, false)
}

// putSourceIf is PutSourceIf for a checked s; setCursor stores s.Cursor
// too, in the same record.
func (e *catalog) putSourceIf(s *record.Source, version uint64, setCursor bool) (record.Source, error) {
	e.writeMu.Lock()
	var stored uint64
	if old, ok := e.st.sources[s.ID]; ok {
		stored = old.Version
	}
	if stored != version {
		e.writeMu.Unlock()
		return record.Source{}, fmt.Errorf("%w: source %q is at version %d, not %d", record.ErrConflict, s.ID, stored, version)
	}
	seq, err := e.commitSource(s, setCursor)
	e.writeMu.Unlock()
	if err != nil {
		return record.Source{}, err
	}
	return record.CopySource(s), e.sync(seq)
}

// updateAttempts bounds UpdateSource's retries after a conflict.
const updateAttempts = 64

// UpdateSource changes a stored source: it reads the source, gives fn a
// copy and stores fn's changes unless fn fails, by PutSourceIf on the
// version it read, so a write to the source in between is never lost. On
// such a conflict it reads the source again and calls fn again, up to a
// bound, then returns an error wrapping ErrConflict: fn may run more than
// once, must not write to the store, and should keep its effects to the
// copy it is given. The crawl cursor is stored only when fn changes it.
// The id and creation time cannot change.
func (e *catalog) UpdateSource(id string, fn func(*record.Source) error) (record.Source, error) {
	var err error
	for attempt := range updateAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(rand.IntN(attempt*50)+1) * time.Microsecond)
		}
		old, ok := e.Source(id)
		if !ok {
			return record.Source{}, record.ErrNotFound
		}
		s := record.CopySource(&old)
		if err := fn(&s); err != nil {
			return record.Source{}, err
		}
		s.ID = id
		if err := record.CheckSource(&s); err != nil {
			return record.Source{}, err
		}
		var out record.Source
		out, err = e.putSourceIf(&s, old.Version, s.Cursor != old.Cursor)
		if !errors.Is(err, record.ErrConflict) {
			return out, err
		}
	}
	return record.Source{}, err
}

// commitSource stamps s and logs it; the caller holds writeMu. Without
// setCursor the stored cursor stays (and s.Cursor is set to it).
func (e *catalog) commitSource(s *record.Source, setCursor bool) (uint64, error) {
	now := record.ExactTime(time.Now())
	// A new source's version is the sequence number of its first write:
	// higher than any version a source of the same id, deleted since,
	// ever had (a version never passes its last write's number), so a
	// compare-and-set read before the delete cannot land on the new one.
	s.Version = e.seq + 1
	old, ok := e.st.sources[s.ID]
	if ok {
		s.CreatedAt = old.CreatedAt
		s.Version = old.Version + 1
	} else if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if !setCursor {
		s.Cursor = ""
		if ok {
			s.Cursor = old.Cursor
		}
	}
	s.CreatedAt, s.UpdatedAt = record.ExactTime(s.CreatedAt), now
	return e.commit(&op{kind: opPutSource, source: *s, cursorOK: setCursor})
}

// SetCursor stores the crawl cursor of a source, a record of its own: it
// leaves the source's record and Version alone. ErrNotFound when there is
// no such source; deleting the source deletes its cursor.
func (e *catalog) SetCursor(sourceID, cursor string) error {
	if len(cursor) > record.MaxCursorBytes {
		return invalidf("cursor is too long: %d bytes, at most %d", len(cursor), record.MaxCursorBytes)
	}
	e.writeMu.Lock()
	if _, ok := e.st.sources[sourceID]; !ok {
		e.writeMu.Unlock()
		return record.ErrNotFound
	}
	seq, err := e.commit(&op{kind: opPutCursor, id: sourceID, cursor: cursor})
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}

// Cursor returns the crawl cursor of a source, "" before the first;
// ErrNotFound when there is no such source.
func (e *catalog) Cursor(sourceID string) (string, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s, ok := e.st.sources[sourceID]
	if !ok {
		return "", record.ErrNotFound
	}
	return s.Cursor, nil
}

// DeleteSource removes a source and every channel, message and document
// that came from it.
func (e *catalog) DeleteSource(id string) error {
	if id == record.UploadsSourceID {
		return invalidf("the built-in %q source cannot be deleted", record.UploadsSourceID)
	}
	e.writeMu.Lock()
	if _, ok := e.st.sources[id]; !ok {
		e.writeMu.Unlock()
		return record.ErrNotFound
	}
	seq, err := e.commit(&op{kind: opDeleteSource, id: id})
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}
