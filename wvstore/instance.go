package wvstore

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/sift-search/sift/record"
	"github.com/weaviate/weaviate/entities/models"
)

// The instance as a whole, for health, metrics and the dashboard: the write
// stamp that stands for the sequence number, the counts of what the store
// and each source hold, and the instance's settings.

// The write stamp stands for the memory store's sequence number: every
// write through any process stores the time it was made in Meta (last
// writer wins), and Seq reads it at most once a second. Pages and the
// sitemap are cached until it moves.

const writtenKey = "written"

type stamp struct {
	mu   sync.Mutex
	read time.Time
	seq  uint64
}

// wrote records a write.
func (s *instance) wrote(ctx context.Context) error {
	now := uint64(time.Now().UnixMicro())
	s.stamp.mu.Lock()
	s.stamp.seq = max(s.stamp.seq, now)
	s.stamp.mu.Unlock()
	return s.upsert(ctx, []*models.Object{{Class: s.class("Meta"), ID: strfmt.UUID(metaID(s.opts.Namespace, writtenKey)),
		Properties: map[string]any{"key": writtenKey, "value": strconv.FormatUint(now, 10)}}})
}

// Seq is the time of the latest write through any process, in unix
// microseconds, as this process last read it (at most a second ago).
func (s *instance) Seq() uint64 {
	s.stamp.mu.Lock()
	defer s.stamp.mu.Unlock()
	if time.Since(s.stamp.read) < time.Second {
		return s.stamp.seq
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, _, err := getProps(ctx, s.c, s.class("Meta"), metaID(s.opts.Namespace, writtenKey))
	if err == nil {
		v, _ := strconv.ParseUint(fmt.Sprint(p["value"]), 10, 64)
		s.stamp.seq, s.stamp.read = max(s.stamp.seq, v), time.Now()
	}
	return s.stamp.seq
}

// LogStatus reports no log: the cluster keeps the records.
func (s *instance) LogStatus() record.LogStatus {
	return record.LogStatus{InMemory: true, Seq: s.Seq()}
}

// LastSnapshot is nil: the cluster keeps the records (backups are
// written by Backup on demand).
func (s *instance) LastSnapshot() *record.SnapshotInfo { return nil }

// Describe says where the records are, for the dashboard.
func (s *instance) Describe() string {
	u := s.opts.URL
	if p, err := url.Parse(u); err == nil {
		p.User = nil
		u = p.Redacted()
	}
	return fmt.Sprintf("Records in the Weaviate cluster at %s: collections %s*, replication factor %d, %d shard(s) each; last write %s",
		u, s.opts.Namespace, s.opts.Replication, s.opts.Shards, time.UnixMicro(int64(s.Seq())).UTC().Format(time.RFC3339))
}

// SourceStats counts what a source holds; without private, only what
// callers without credentials may see.
func (s *instance) SourceStats(id string, private bool) record.SourceStats {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var st record.SourceStats
	cat, err := s.cat(ctx)
	if err != nil || cat.sources[id] == nil {
		return st
	}
	for k, ch := range cat.chans {
		if k.source == id && (private || !cat.hidden[k]) {
			countChannel(&st.Channels, &st.Threads, ch)
		}
	}
	src := cond{}.and(eqText("sourceId", id))
	st.Messages, _ = s.countCond(ctx, s.class("Message"), src.except(hiddenMessages(cat, private)))
	st.Documents, _ = s.countCond(ctx, s.class("Document"), src.except(hiddenDocuments(cat, private)))
	return st
}

// countChannel adds ch to the channels or, when it is a thread, to the
// threads, as the memory store counts them.
func countChannel(chans, threads *int, ch *record.Channel) {
	if ch.ParentID != "" {
		*threads++
	} else {
		*chans++
	}
}

// Counts returns what the store holds; without private, what callers
// without credentials may see, with only the sources that show them
// something. Term counts are the memory store's only.
func (s *instance) Counts(private bool) record.Counts {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var c record.Counts
	cat, err := s.cat(ctx)
	if err != nil {
		return c
	}
	shown := map[string]bool{}
	for k, ch := range cat.chans {
		if private || !cat.hidden[k] {
			countChannel(&c.Channels, &c.Threads, ch)
			shown[k.source] = true
		}
	}
	for id, src := range cat.sources {
		if private || !shown[id] && !src.Hidden() && s.holdsDocuments(ctx, id) {
			shown[id] = true
		}
	}
	c.Sources = len(shown)
	c.Messages, _ = s.countCond(ctx, s.class("Message"), cond{}.except(hiddenMessages(cat, private)))
	c.Documents, _ = s.countCond(ctx, s.class("Document"), cond{}.except(hiddenDocuments(cat, private)))
	return c
}

// holdsDocuments reports whether a source holds a document.
func (s *instance) holdsDocuments(ctx context.Context, id string) bool {
	n, _ := s.countCond(ctx, s.class("Document"), cond{}.and(eqText("sourceId", id)))
	return n > 0
}

// Settings are kept as the versions of a record of their own, written
// as sources are (compare-and-set by steps), under an id no source can
// have.
const settingsID = "!settings"

// Settings returns a copy of the instance's settings.
func (s *instance) Settings() map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cur, err := s.current(ctx, settingsID)
	if err != nil {
		return map[string]string{}
	}
	return settingsOf(cur)
}

func settingsOf(cur sourceVersion) map[string]string {
	out := map[string]string{}
	if cur.Rec != nil {
		for k, v := range cur.Rec.Config {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
	}
	return out
}

// UpdateSettings sets the given settings; an empty value removes one.
func (s *instance) UpdateSettings(changes map[string]string) (map[string]string, error) {
	if err := record.CheckSettings(changes); err != nil {
		return nil, err
	}
	var next map[string]string
	_, err := s.retry(settingsID, func(ctx context.Context, cur sourceVersion) (record.Source, error) {
		var err error
		if next, err = record.ApplySettings(settingsOf(cur), changes); err != nil {
			return record.Source{}, err
		}
		cfg := map[string]any{}
		for k, v := range next {
			cfg[k] = v
		}
		return record.Source{}, s.advance(ctx, settingsID, cur.Version,
			sourceVersion{Version: cur.Version + 1, Rec: &record.Source{ID: settingsID, Config: cfg}})
	})
	if err != nil {
		return nil, err
	}
	return maps.Clone(next), nil
}
