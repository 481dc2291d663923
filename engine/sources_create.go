package engine

import (
	"fmt"

	"github.com/sift-search/sift/record"
)

// CreateSource stores a new source and returns it as stored; it never
// replaces one. Without an id, the id derives from the name by the slug
// of channels and documents ("Acme Discord" → acme-discord, "Café" →
// cafe, "source" for a name with no letters or digits), and the first of
// it, it-2, it-3… that no source has is taken, in one step with the write,
// so concurrent creations of the same name get distinct ids. A given id
// that a source has already is an error wrapping ErrConflict. CreatedAt
// is set to now unless given; UpdatedAt is set to now.
func (e *catalog) CreateSource(s record.Source) (record.Source, error) {
	derive := s.ID == ""
	if derive {
		s.ID = record.SourceIDBase(s.Name) // checked with the rest; made free below
	}
	if err := record.CheckSource(&s); err != nil {
		return record.Source{}, err
	}
	e.writeMu.Lock()
	taken := func(id string) bool { _, ok := e.st.sources[id]; return ok }
	switch {
	case derive:
		s.ID = record.FirstFree(s.ID, taken)
	case taken(s.ID):
		e.writeMu.Unlock()
		return record.Source{}, fmt.Errorf("%w: a source with id %q exists", record.ErrConflict, s.ID)
	}
	seq, err := e.commitSource(&s, true)
	e.writeMu.Unlock()
	if err != nil {
		return record.Source{}, err
	}
	return record.CopySource(&s), e.sync(seq)
}
