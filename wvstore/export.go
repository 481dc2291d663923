package wvstore

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/sift-search/sift/record"
)

// Export reads out everything the cluster holds — sources with their crawl
// cursors, the settings, channels, messages and documents — for a copy
// into another store (transfer.Copy; `sift backup` writes a snapshot of
// that copy). The cluster is read in pages while writers may run: each
// record is as a read found it, not the whole at one instant. Chunks and
// vectors are left out: a store filled from the copy builds them again.

// exportPage is how many objects one read of an export takes; documents,
// which may be large, are read docPage at a time.
const (
	exportPage = 1000
	docPage    = 50
)

// ExportSources returns the sources, in id order, each with its crawl
// cursor and creation time, and the settings (nil when none are set).
func (s *bulk) ExportSources() ([]record.Source, map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	h, err := s.hints(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	var srcs []record.Source
	var set map[string]string
	for _, id := range slices.Sorted(maps.Keys(h)) {
		cur, err := s.latest(ctx, id, h[id])
		if err != nil {
			return nil, nil, err
		}
		if cur.Rec == nil {
			continue // deleted
		}
		if id == settingsID {
			if set = settingsOf(cur); len(set) == 0 {
				set = nil
			}
			continue
		}
		src := record.CopySource(cur.Rec)
		if src.Cursor, err = s.cursor(ctx, id); err != nil {
			return nil, nil, err
		}
		srcs = append(srcs, src)
	}
	return srcs, set, nil
}

// ExportChannels calls fn with every channel, a page at a time.
func (s *bulk) ExportChannels(fn func([]record.Channel) error) error {
	return s.eachPage("Channel", exportPage, func(objs []map[string]any) error {
		chs := make([]record.Channel, 0, len(objs))
		for _, o := range objs {
			var ch record.Channel
			if err := decodeRecord(o, &ch); err != nil {
				return fmt.Errorf("channel %v: %w", o["_id"], err)
			}
			chs = append(chs, ch)
		}
		return fn(chs)
	})
}

// ExportMessages calls fn with every message, a page at a time.
func (s *bulk) ExportMessages(fn func([]record.Message) error) error {
	return s.eachPage("Message", exportPage, func(objs []map[string]any) error {
		msgs := make([]record.Message, 0, len(objs))
		for _, o := range objs {
			m, err := decodeMessage(o)
			if err != nil {
				return fmt.Errorf("message %v: %w", o["_id"], err)
			}
			msgs = append(msgs, m)
		}
		return fn(msgs)
	})
}

// ExportDocuments calls fn with every document, docPage at a time.
func (s *bulk) ExportDocuments(fn func([]record.Document) error) error {
	return s.eachPage("Document", docPage, func(objs []map[string]any) error {
		docs := make([]record.Document, 0, len(objs))
		for _, o := range objs {
			var d record.Document
			if err := decodeRecord(o, &d); err != nil {
				return fmt.Errorf("document %v: %w", o["_id"], err)
			}
			docs = append(docs, d)
		}
		return fn(docs)
	})
}

// eachPage calls fn with the records of every object of a collection,
// limit (at most maxResults) at a time, in object id order (cursor paging:
// no bound on how many, no order needed).
func (s *bulk) eachPage(suffix string, limit int, fn func([]map[string]any) error) error {
	q := getQuery{class: s.class(suffix), fields: []string{"record", "_id"}, limit: perQuery(limit)}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		objs, err := s.get(ctx, q)
		cancel()
		if err != nil {
			return err
		}
		if len(objs) == 0 {
			return nil
		}
		if err := fn(objs); err != nil {
			return err
		}
		if len(objs) < q.limit {
			return nil
		}
		if q.after, _ = objs[len(objs)-1]["_id"].(string); q.after == "" {
			return fmt.Errorf("read %s: a page without object ids", q.class)
		}
	}
}
