package wvstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/record"
)

// Messages are objects with deterministic ids (namespace, source, message
// id) holding the record as JSON beside what queries filter and rank on:
// source, channel, the "chan" of both, folded author names, the time and
// Sift's analysed words.

func (s *content) messageObjID(source, id string) string { return s.objID("message", source, id) }

func (s *content) messageObject(m *record.Message) *models.Object {
	words := analysis.IndexTerms(nil, m.Content, 1)
	o := &models.Object{Class: s.class("Message"), ID: strfmt.UUID(s.messageObjID(m.SourceID, m.ID)),
		Properties: map[string]any{
			"sourceId": m.SourceID, "channelId": m.ChannelID, "chan": chanRef(m.SourceID, m.ChannelID), "msgId": m.ID,
			"author": analysis.Fold(m.Author), "authorName": analysis.Fold(m.AuthorName),
			"terms": strings.Join(words, " "), "len": len(words),
			"ts": m.Timestamp.UTC().Format("2006-01-02T15:04:05.000000Z07:00"), "record": encodeRecord(m),
		}}
	if s.pairs {
		props(o)["pairs"] = strings.Join(analysis.IndexPairs(nil, m.Content), " ")
	}
	return o
}

// msgFields are the properties a message is read from.
var msgFields = []string{"record"}

func decodeMessage(o map[string]any) (record.Message, error) {
	var m record.Message
	err := decodeRecord(o, &m)
	return m, err
}

// storedMessages returns the stored messages of a source among ids.
func (s *content) storedMessages(ctx context.Context, source string, ids []string) (map[string]record.Message, error) {
	out := map[string]record.Message{}
	step := perQuery(501) - 1
	for start := 0; start < len(ids); start += step {
		part := ids[start:min(start+step, len(ids))]
		objs, err := s.get(ctx, getQuery{class: s.class("Message"), fields: msgFields,
			where: and(eqText("sourceId", source), anyText("msgId", part)), limit: len(part) + 1})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			m, err := decodeMessage(o)
			if err != nil {
				return nil, err
			}
			out[m.ID] = m
		}
	}
	return out, nil
}

// PutMessages creates or updates messages; it returns how many were new
// or changed.
func (s *content) PutMessages(msgs []record.Message) (int, error) {
	c, err := s.PutMessagesCounted(msgs)
	return c.New + c.Updated, err
}

// PutMessagesCounted is PutMessages, counting what became of each message.
func (s *content) PutMessagesCounted(msgs []record.Message) (record.PutCounts, error) {
	var counts record.PutCounts
	msgs = slices.Clone(msgs)
	for i := range msgs {
		if err := record.CheckMessage(&msgs[i]); err != nil {
			return counts, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return counts, err
	}
	keep := msgs[:0:0]
	for i := range msgs {
		m := &msgs[i]
		src := cat.sources[m.SourceID]
		k := chanKey{m.SourceID, m.ChannelID}
		s.droppedMu.Lock()
		dropped := s.dropped[k]
		s.droppedMu.Unlock()
		if src != nil && (slices.Contains(src.ExcludedChannels, m.ChannelID) || dropped || optedOut(src, m.Author)) {
			counts.KeptOut++
			continue
		}
		if cat.chans[k] == nil {
			return record.PutCounts{}, fmt.Errorf("%w: message %q: unknown channel %q of source %q", record.ErrInvalid, m.ID, m.ChannelID, m.SourceID)
		}
		keep = append(keep, *m)
	}
	// The last of each id wins, as in the memory store's batches.
	bySource := map[string][]string{}
	last := map[chanKey]int{}
	for i, m := range keep {
		k := chanKey{m.SourceID, m.ID}
		if _, seen := last[k]; !seen {
			bySource[m.SourceID] = append(bySource[m.SourceID], m.ID)
		}
		last[k] = i
	}
	stored := map[chanKey]record.Message{}
	for src, ids := range bySource {
		got, err := s.storedMessages(ctx, src, ids)
		if err != nil {
			return record.PutCounts{}, err
		}
		for id, m := range got {
			stored[chanKey{src, id}] = m
		}
	}
	var objs []*models.Object
	touched := map[string]string{}
	for i := range keep {
		m := &keep[i]
		k := chanKey{m.SourceID, m.ID}
		old, found := stored[k]
		switch {
		case found && record.SameMessage(&old, m):
			counts.Unchanged++
			continue
		case found:
			counts.Updated++
			touched[channelOwner(old.SourceID, old.ChannelID)] = old.SourceID
		default:
			counts.New++
		}
		touched[channelOwner(m.SourceID, m.ChannelID)] = m.SourceID
		stored[k] = *m
		if last[k] == i {
			objs = append(objs, s.messageObject(m))
		}
	}
	if len(objs) == 0 {
		return counts, nil
	}
	if err := s.upsert(ctx, objs); err != nil {
		return record.PutCounts{}, err
	}
	if err := s.contentChanged(ctx, touched); err != nil {
		return record.PutCounts{}, err
	}
	return counts, s.wrote(ctx)
}

// DeleteMessages deletes messages of a source by id; unknown ids are
// ignored. It returns how many were deleted.
func (s *content) DeleteMessages(sourceID string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	stored, err := s.storedMessages(ctx, sourceID, ids)
	if err != nil || len(stored) == 0 {
		return 0, err
	}
	var gone []string
	touched := map[string]string{}
	for id, m := range stored {
		gone = append(gone, id)
		touched[channelOwner(sourceID, m.ChannelID)] = sourceID
	}
	for start := 0; start < len(gone); start += 500 {
		part := gone[start:min(start+500, len(gone))]
		if _, err := s.deleteWhere(ctx, s.class("Message"), and(eqText("sourceId", sourceID), anyText("msgId", part))); err != nil {
			return 0, err
		}
	}
	if err := s.contentChanged(ctx, touched); err != nil {
		return 0, err
	}
	return len(gone), s.wrote(ctx)
}

// channelWhere is the filter of one channel's messages.
func channelWhere(k chanKey) *filters.WhereBuilder { return eqText("chan", chanRef(k.source, k.id)) }

// timeOrder is a channel's order: time, then id.
var timeOrder = []graphql.Sort{{Path: []string{"ts"}, Order: graphql.Asc}, {Path: []string{"msgId"}, Order: graphql.Asc}}

// channelListing is channel k's messages in time order.
func (s *content) channelListing(k chanKey) listing {
	return listing{class: s.class("Message"), where: channelWhere(k), ts: "ts", id: "msgId", fields: msgFields}
}

// channelKey finds a channel by slug.
func (s *content) channelKey(ctx context.Context, slug string) (*catalog, chanKey, error) {
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, chanKey{}, err
	}
	k, ok := cat.bySlug[slug]
	if !ok {
		return nil, chanKey{}, record.ErrNotFound
	}
	return cat, k, nil
}

// ChannelMessages returns a page of a channel's messages in time order and
// the channel's message count.
func (s *content) ChannelMessages(slug string, offset, limit int) ([]record.Message, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, k, err := s.channelKey(ctx, slug)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.count(ctx, s.class("Message"), channelWhere(k))
	if err != nil {
		return nil, 0, err
	}
	offset = min(max(offset, 0), total)
	limit = min(max(limit, 0), total-offset)
	out := []record.Message{}
	if limit == 0 {
		return out, total, nil
	}
	objs, err := s.listPage(ctx, s.channelListing(k), offset, limit)
	if err != nil {
		return nil, 0, err
	}
	for _, o := range objs {
		m, err := decodeMessage(o)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, m)
	}
	return out, total, nil
}

// ChannelMessageIDs returns the ids of a channel's messages, in time order.
func (s *content) ChannelMessageIDs(slug string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, k, err := s.channelKey(ctx, slug)
	if err != nil {
		return nil, err
	}
	objs, err := s.getAll(ctx, getQuery{class: s.class("Message"), fields: []string{"msgId"}, where: channelWhere(k), sort: timeOrder})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		id, _ := o["msgId"].(string)
		out = append(out, id)
	}
	return out, nil
}

// MessagePosition returns where a message stands in its channel's time
// order (0 is the first).
func (s *content) MessagePosition(slug, id string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, k, err := s.channelKey(ctx, slug)
	if err != nil {
		return 0, err
	}
	got, err := s.storedMessages(ctx, k.source, []string{id})
	if err != nil {
		return 0, err
	}
	m, ok := got[id]
	if !ok || m.ChannelID != k.id {
		return 0, record.ErrNotFound
	}
	before, err := s.count(ctx, s.class("Message"), and(channelWhere(k), dateCmp("ts", filters.LessThan, m.Timestamp)))
	if err != nil {
		return 0, err
	}
	same, err := s.getAll(ctx, getQuery{class: s.class("Message"), fields: []string{"msgId"},
		where: and(channelWhere(k), dateCmp("ts", filters.Equal, m.Timestamp))})
	if err != nil {
		return 0, err
	}
	tied := 0
	for _, o := range same {
		if x, _ := o["msgId"].(string); x < id {
			tied++
		}
	}
	return before + tied, nil
}
