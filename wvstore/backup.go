package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

// Backup writes everything the cluster holds — sources with their crawl
// cursors, channels, messages, documents and settings — as an ordinary
// Sift snapshot, the file `sift backup` writes of a data dir: `sift
// restore` installs it into an empty data dir, `sift verify` checks it.
// It returns the file's sequence number.
//
// The records are copied into a memory store (an engine without a data
// dir, which holds all of them while the backup runs) whose Backup writes
// the file; channels and documents keep their slugs, sources their
// creation times. The cluster is read in pages while writers may run: each
// record is as a read found it, not the whole at one instant. Chunks and
// vectors are left out: a server restored from the file builds them again.
func (s *Store) Backup(w io.Writer) (uint64, error) {
	eng, err := engine.Open(engine.Options{})
	if err != nil {
		return 0, fmt.Errorf("backup: open a memory store: %w", err)
	}
	defer eng.Close()
	if err := s.copyTo(eng); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	seq, err := eng.Backup(w)
	if err != nil {
		return 0, fmt.Errorf("backup: write the snapshot: %w", err)
	}
	return seq, nil
}

// backupPage is how many objects one read of a backup takes; documents,
// which may be large, are read docPage at a time.
const (
	backupPage = 1000
	docPage    = 50
)

// copyTo copies every record into eng.
func (s *Store) copyTo(eng *engine.Engine) error {
	if err := s.copySources(eng); err != nil {
		return err
	}
	if err := s.copyChannels(eng); err != nil {
		return err
	}
	err := s.eachPage("Message", backupPage, func(objs []map[string]any) error {
		msgs := make([]record.Message, 0, len(objs))
		for _, o := range objs {
			m, err := decodeMessage(o)
			if err != nil {
				return fmt.Errorf("message %v: %w", o["_id"], err)
			}
			if _, ok := eng.ChannelByID(m.SourceID, m.ChannelID); ok { // else its channel went meanwhile
				msgs = append(msgs, m)
			}
		}
		// One source at a time, as the engine logs them.
		slices.SortStableFunc(msgs, func(a, b record.Message) int { return cmp.Compare(a.SourceID, b.SourceID) })
		if _, err := eng.PutMessages(msgs); err != nil {
			return fmt.Errorf("copy %d messages: %w", len(msgs), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.eachPage("Document", docPage, func(objs []map[string]any) error {
		docs := make([]record.Document, 0, len(objs))
		for _, o := range objs {
			var d record.Document
			if err := decodeRecord(o, &d); err != nil {
				return fmt.Errorf("document %v: %w", o["_id"], err)
			}
			if _, ok := eng.Source(d.SourceID); ok {
				docs = append(docs, d)
			}
		}
		if _, err := eng.PutDocumentsKeepingSlugs(docs); err != nil {
			return fmt.Errorf("copy %d documents: %w", len(docs), err)
		}
		return nil
	})
}

// copySources copies the sources, their cursors and the settings.
func (s *Store) copySources(eng *engine.Engine) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	h, err := s.hints(ctx, "")
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(h)) {
		cur, err := s.latest(ctx, id, h[id])
		if err != nil {
			return err
		}
		if cur.Rec == nil {
			continue // deleted
		}
		if id == settingsID {
			if set := settingsOf(cur); len(set) > 0 {
				if _, err := eng.UpdateSettings(set); err != nil {
					return fmt.Errorf("copy the settings: %w", err)
				}
			}
			continue
		}
		src := record.CopySource(cur.Rec)
		if src.Cursor, err = s.cursor(ctx, id); err != nil {
			return err
		}
		if _, err := eng.PutSourceKeepingCreated(src); err != nil {
			return fmt.Errorf("copy source %q: %w", id, err)
		}
	}
	return nil
}

// copyChannels copies the channels of the sources copied.
func (s *Store) copyChannels(eng *engine.Engine) error {
	var chs []record.Channel
	err := s.eachPage("Channel", backupPage, func(objs []map[string]any) error {
		for _, o := range objs {
			var ch record.Channel
			if err := decodeRecord(o, &ch); err != nil {
				return fmt.Errorf("channel %v: %w", o["_id"], err)
			}
			if _, ok := eng.Source(ch.SourceID); ok { // else its source's deletion is under way
				chs = append(chs, ch)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for start := 0; start < len(chs); start += backupPage {
		if _, err := eng.PutChannelsKeepingSlugs(chs[start:min(start+backupPage, len(chs))]); err != nil {
			return fmt.Errorf("copy channels: %w", err)
		}
	}
	return nil
}

// eachPage calls fn with the records of every object of a collection,
// limit (at most maxResults) at a time, in object id order (cursor paging:
// no bound on how many, no order needed).
func (s *Store) eachPage(suffix string, limit int, fn func([]map[string]any) error) error {
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
