package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/record"
)

func (s *content) channelObjID(source, id string) string { return s.objID("channel", source, id) }

func channelOwner(source, id string) string { return "c\x00" + source + "\x00" + id }

func (s *content) channelObject(c *record.Channel) *models.Object {
	rec := *c
	rec.Hidden, rec.NameAuthor = false, ""
	return &models.Object{Class: s.class("Channel"), ID: strfmt.UUID(s.channelObjID(c.SourceID, c.ID)),
		Properties: map[string]any{"sourceId": c.SourceID, "channelId": c.ID, "slug": c.Slug, "parentId": c.ParentID,
			"record": encodeRecord(&rec)}}
}

// PutChannels creates or updates channels and returns them with their
// slugs: an existing channel keeps its slug and creation time, a new one
// gets the Slug it carries when that is free (a migration's), else a
// unique slug of its name. Channels an operator excluded, and their
// threads, are not stored.
func (s *content) PutChannels(chs []record.Channel) ([]record.Channel, error) {
	out := slices.Clone(chs)
	for i := range out {
		if err := record.CheckChannel(&out[i]); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if cat.sources[out[i].SourceID] == nil {
			return nil, fmt.Errorf("%w: channel %q: unknown source %q", record.ErrInvalid, out[i].ID, out[i].SourceID)
		}
	}
	var objs []*models.Object
	taken := map[string]bool{}
	for i := range out {
		c := &out[i]
		src := cat.sources[c.SourceID]
		if optedOut(src, c.NameAuthor) {
			c.Name = record.AnonymousThread
		}
		c.NameAuthor = ""
		k := chanKey{c.SourceID, c.ID}
		if skipsChannel(src, c) {
			s.droppedMu.Lock()
			s.dropped[k] = true
			s.droppedMu.Unlock()
			continue
		}
		s.droppedMu.Lock()
		delete(s.dropped, k)
		s.droppedMu.Unlock()
		if old := cat.chans[k]; old != nil {
			c.Slug, c.CreatedAt = old.Slug, old.CreatedAt
			if reflect.DeepEqual(*old, *c) {
				continue
			}
		} else {
			used := func(x string) bool {
				_, ok := cat.bySlug[x]
				return ok || taken[x]
			}
			// A slug given with a new channel (a migration keeps the data
			// dir's) is claimed when free; else one of its name.
			slug, err := s.claimGiven(ctx, "c", c.Slug, channelOwner(c.SourceID, c.ID), used)
			if err == nil && slug == "" {
				slug, err = s.claimSlug(ctx, "c", c.Name, "channel", newChannelSlugKey(cat, c, out), channelOwner(c.SourceID, c.ID), used)
			}
			if err != nil {
				return nil, err
			}
			c.Slug, taken[slug] = slug, true
			if c.CreatedAt.IsZero() {
				c.CreatedAt = time.Now()
			}
			c.CreatedAt = record.ExactTime(c.CreatedAt)
		}
		objs = append(objs, s.channelObject(c))
	}
	if len(objs) == 0 {
		return out, nil
	}
	if err := s.upsert(ctx, objs); err != nil {
		return nil, err
	}
	touched := map[string]string{}
	for _, o := range objs {
		p := props(o)
		src, _ := p["sourceId"].(string)
		id, _ := p["channelId"].(string)
		touched[channelOwner(src, id)] = src
	}
	if err := s.contentChanged(ctx, touched); err != nil {
		return nil, err
	}
	return out, s.changed(ctx)
}

// optedOut reports whether author opted out of src.
func optedOut(src *record.Source, author string) bool {
	if src == nil || author == "" {
		return false
	}
	f := analysis.Fold(author)
	return slices.ContainsFunc(src.OptOuts, func(a string) bool { return analysis.Fold(a) == f })
}

// skipsChannel reports whether writes drop channel c of src: an operator
// excluded it or the channel it is a thread of.
func skipsChannel(src *record.Source, c *record.Channel) bool {
	return src != nil && (slices.Contains(src.ExcludedChannels, c.ID) || c.ParentID != "" && slices.Contains(src.ExcludedChannels, c.ParentID))
}

// Channels returns the channels of a source (every source's for ""),
// ordered by name; without private, only those callers without
// credentials may see.
func (s *content) Channels(sourceID string, private bool) []record.Channel {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil
	}
	var out []record.Channel
	for k := range cat.chans {
		if sourceID == "" || k.source == sourceID {
			if ch, _ := cat.channel(k); private || !ch.Hidden {
				out = append(out, ch)
			}
		}
	}
	slices.SortFunc(out, func(a, b record.Channel) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.SourceID, b.SourceID), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// ChannelBySlug returns the channel with the given slug.
func (s *content) ChannelBySlug(slug string) (record.Channel, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return record.Channel{}, false
	}
	k, ok := cat.bySlug[slug]
	if !ok {
		return record.Channel{}, false
	}
	return cat.channel(k)
}

// ChannelByID returns a source's channel by its platform id.
func (s *content) ChannelByID(sourceID, id string) (record.Channel, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return record.Channel{}, false
	}
	return cat.channel(chanKey{sourceID, id})
}

// SourceChannels returns the channels of a source ordered by name, each
// with the operator's choice, its visibility and its message count, and
// the ids of the channels an operator excluded.
func (s *content) SourceChannels(sourceID string) ([]record.ChannelInfo, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, nil, err
	}
	src := cat.sources[sourceID]
	if src == nil {
		return nil, nil, record.ErrNotFound
	}
	counts, err := s.countBy(ctx, s.class("Message"), "channelId", eqText("sourceId", sourceID))
	if err != nil {
		return nil, nil, err
	}
	out := []record.ChannelInfo{}
	for k := range cat.chans {
		if k.source == sourceID {
			ch, _ := cat.channel(k)
			out = append(out, record.ChannelInfo{Channel: ch, Visibility: cmp.Or(src.ChannelVisibility[k.id], record.VisibilityInherit),
				Messages: counts[k.id]})
		}
	}
	slices.SortFunc(out, func(a, b record.ChannelInfo) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return out, slices.Clone(src.ExcludedChannels), nil
}

// newChannelSlugKey is the hiddenKey of record.SlugFor for new channel c,
// written with the channels of batch: its key when it is hidden, else "".
func newChannelSlugKey(cat *catalog, c *record.Channel, batch []record.Channel) string {
	parent := func(id string) *record.Channel {
		for i := range batch {
			if batch[i].SourceID == c.SourceID && batch[i].ID == id {
				return &batch[i]
			}
		}
		return cat.chans[chanKey{c.SourceID, id}]
	}
	if record.ChannelHiddenBy(cat.sources[c.SourceID], c, parent) {
		return record.ChannelSlugKey(c.SourceID, c.ID)
	}
	return ""
}
