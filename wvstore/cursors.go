package wvstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/sift-search/sift/record"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
)

// A source's crawl cursor is a record of its own (one object per source,
// last write wins): storing it leaves the source's version alone.

func (s *sources) cursorObjID(id string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("sift:"+s.opts.Namespace+":cursor:"+id)).String()
}

// SetCursor stores a source's crawl cursor; record.ErrNotFound without
// the source.
func (s *sources) SetCursor(sourceID, cursor string) error {
	if len(cursor) > record.MaxCursorBytes {
		return fmt.Errorf("%w: cursor is too long: %d bytes, at most %d", record.ErrInvalid, len(cursor), record.MaxCursorBytes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cur, err := s.current(ctx, sourceID)
	if err != nil {
		return err
	}
	if cur.Rec == nil {
		return record.ErrNotFound
	}
	return s.setCursor(ctx, sourceID, cursor)
}

// Cursor returns a source's crawl cursor, "" before the first;
// record.ErrNotFound without the source.
func (s *sources) Cursor(sourceID string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cur, err := s.current(ctx, sourceID)
	if err != nil {
		return "", err
	}
	if cur.Rec == nil {
		return "", record.ErrNotFound
	}
	return s.cursor(ctx, sourceID)
}

func (s *sources) setCursor(ctx context.Context, id, cursor string) error {
	props := map[string]any{"sourceId": id, "cursor": cursor}
	existed, err := createObject(ctx, s.c, s.opts.Namespace+"Cursor", s.cursorObjID(id), props)
	if existed {
		err = s.c.Data().Updater().WithClassName(s.opts.Namespace + "Cursor").WithID(s.cursorObjID(id)).
			WithConsistencyLevel(replication.ConsistencyLevel.QUORUM).WithProperties(props).Do(ctx)
	}
	if err != nil {
		return fmt.Errorf("store the cursor of %q: %w", id, err)
	}
	return nil
}

func (s *sources) cursor(ctx context.Context, id string) (string, error) {
	props, _, err := getProps(ctx, s.c, s.opts.Namespace+"Cursor", s.cursorObjID(id))
	c, _ := props["cursor"].(string)
	return c, err
}

func (s *sources) deleteCursor(ctx context.Context, id string) error {
	err := s.c.Data().Deleter().WithClassName(s.opts.Namespace + "Cursor").WithID(s.cursorObjID(id)).
		WithConsistencyLevel(replication.ConsistencyLevel.QUORUM).Do(ctx)
	if err != nil && !notFound(err) {
		return fmt.Errorf("delete the cursor of %q: %w", id, err)
	}
	return nil
}
