package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"

	"github.com/sift-search/sift/record"
)

// The reads pages and the reading API make beyond the conformance suite's.

// MessageIDs returns the ids of the messages of a source's channel, found
// by the channel's platform id, in time order.
func (s *content) MessageIDs(sourceID, channelID string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, err
	}
	ch := cat.chans[chanKey{sourceID, channelID}]
	if ch == nil {
		return nil, record.ErrNotFound
	}
	return s.ChannelMessageIDs(ch.Slug)
}

// OrphanThreads returns a source's threads that no visible message leads
// to (the message whose id is the thread's, stored in the thread's
// channel, shown), sorted by name; without private, hidden threads are
// left out.
func (s *content) OrphanThreads(sourceID string, private bool) []record.Channel {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil
	}
	var threads []record.Channel
	var ids []string
	for k, c := range cat.chans {
		if k.source == sourceID && c.ParentID != "" {
			ch, _ := cat.channel(k)
			if private || !ch.Hidden {
				threads = append(threads, ch)
				ids = append(ids, c.ID)
			}
		}
	}
	starts, err := s.storedMessages(ctx, sourceID, ids)
	if err != nil {
		return nil
	}
	var out []record.Channel
	for _, t := range threads {
		parent := chanKey{sourceID, t.ParentID}
		m, ok := starts[t.ID]
		linked := ok && m.ChannelID == t.ParentID && cat.chans[parent] != nil && (private || !cat.hidden[parent])
		if !linked {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b record.Channel) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	return out
}

// ChannelWindow returns the messages of channel slug that q picks, in time
// order (see record.WindowQuery): positions are counted by the cluster,
// then the stretch read as a page.
func (s *content) ChannelWindow(slug string, q record.WindowQuery) (record.ChannelWindow, error) {
	if q.Limit < 1 {
		return record.ChannelWindow{}, fmt.Errorf("%w: limit must be at least 1", record.ErrInvalid)
	}
	if !q.Around.IsZero() && (!q.Before.IsZero() || !q.After.IsZero()) {
		return record.ChannelWindow{}, fmt.Errorf("%w: around cannot be combined with before or after", record.ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, k, err := s.channelKey(ctx, slug)
	if err != nil {
		return record.ChannelWindow{}, err
	}
	n, err := s.count(ctx, s.class("Message"), channelWhere(k))
	if err != nil {
		return record.ChannelWindow{}, err
	}
	lo, hi := 0, n
	switch {
	case !q.Around.IsZero():
		at, err := s.anchorAt(ctx, k, q.Around, false)
		if err != nil {
			return record.ChannelWindow{}, err
		}
		at = min(at, n-1)
		lo = max(min(at-(q.Limit-1)/2, n-q.Limit), 0)
		hi = min(lo+q.Limit, n)
	default:
		if !q.After.IsZero() {
			if lo, err = s.anchorAt(ctx, k, q.After, true); err != nil {
				return record.ChannelWindow{}, err
			}
		}
		if !q.Before.IsZero() {
			if hi, err = s.anchorAt(ctx, k, q.Before, false); err != nil {
				return record.ChannelWindow{}, err
			}
		}
		hi = max(hi, lo)
		if !q.After.IsZero() {
			hi = min(hi, lo+q.Limit)
		} else {
			lo = max(lo, hi-q.Limit)
		}
	}
	w := record.ChannelWindow{Messages: []record.Message{}, HasBefore: lo > 0, HasAfter: hi < n}
	if hi <= lo {
		return w, nil
	}
	objs, err := s.listPage(ctx, s.channelListing(k), lo, hi-lo)
	if err != nil {
		return record.ChannelWindow{}, err
	}
	for _, o := range objs {
		m, err := decodeMessage(o)
		if err != nil {
			return record.ChannelWindow{}, err
		}
		w.Messages = append(w.Messages, m)
	}
	return w, nil
}

// anchorAt returns the position in channel k's time order of anchor a: of
// its message (just past it when after), or of the first message at
// (after: past) its time.
func (s *content) anchorAt(ctx context.Context, k chanKey, a record.Anchor, after bool) (int, error) {
	if a.ID != "" {
		cat, err := s.cat(ctx)
		if err != nil {
			return 0, err
		}
		at, err := s.MessagePosition(cat.chans[k].Slug, a.ID)
		if err != nil {
			return 0, fmt.Errorf("message %q: %w", a.ID, record.ErrNotFound)
		}
		if after {
			at++
		}
		return at, nil
	}
	op := filters.LessThan
	if after {
		op = filters.LessThanEqual
	}
	return s.count(ctx, s.class("Message"), and(channelWhere(k), dateCmp("ts", op, record.ExactTime(a.Time))))
}

// ChannelPageTimes splits a channel's messages, in time order, into pages
// of size and returns for each the latest time a message on it was
// written or edited.
func (s *content) ChannelPageTimes(slug string, size int) ([]time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, k, err := s.channelKey(ctx, slug)
	if err != nil {
		return nil, err
	}
	objs, err := s.getAll(ctx, getQuery{class: s.class("Message"), fields: msgFields, where: channelWhere(k), sort: timeOrder})
	if err != nil {
		return nil, err
	}
	size = max(size, 1)
	out := make([]time.Time, 0, (len(objs)+size-1)/size)
	for start := 0; start < len(objs); start += size {
		var last time.Time
		for _, o := range objs[start:min(start+size, len(objs))] {
			m, err := decodeMessage(o)
			if err != nil {
				return nil, err
			}
			if m.Timestamp.After(last) {
				last = m.Timestamp
			}
			if m.EditedAt.After(last) {
				last = m.EditedAt
			}
		}
		out = append(out, last)
	}
	return out, nil
}
