package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/record"
)

// What an operator controls: channel visibility, excluded channels and
// opt-outs live in the source's record (one compare-and-set write each);
// what they demand of the content already stored — deleting an excluded
// channel with its threads and messages, an opted-out author's messages —
// is carried out after the record is written (applyRules). A crash between
// the two leaves the record's rules in force for every later write; the
// deletion is done again by the next write of the source. Visibility needs
// no rewrite of the content: reads filter by the catalog (search.go).

// applyRules carries out what src's rules demand of the stored content,
// given the record it replaced (nil for a new source).
func (s *operator) applyRules(ctx context.Context, old, src *record.Source) error {
	cat, err := s.cat(ctx)
	if err != nil {
		return err
	}
	var gone []chanKey
	for k, ch := range cat.chans {
		if k.source == src.ID && skipsChannel(src, ch) {
			gone = append(gone, k)
		}
	}
	if err := s.deleteChannels(ctx, cat, gone); err != nil {
		return err
	}
	changed := len(gone) > 0
	was := map[string]bool{}
	if old != nil {
		for _, a := range old.OptOuts {
			was[analysis.Fold(a)] = true
		}
	}
	for _, a := range src.OptOuts {
		f := analysis.Fold(a)
		if was[f] {
			continue
		}
		was[f] = true
		if err := s.removeAuthor(ctx, cat, src.ID, f); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		return s.changed(ctx)
	}
	return nil
}

// removeAuthor deletes an author's messages of a source, renaming the
// threads their messages started.
func (s *operator) removeAuthor(ctx context.Context, cat *catalog, source, folded string) error {
	where := and(eqText("sourceId", source), eqText("author", folded))
	objs, err := s.getAll(ctx, getQuery{class: s.class("Message"), fields: []string{"msgId", "channelId"}, where: where})
	if err != nil {
		return err
	}
	var renamed []*record.Channel
	touched := map[string]string{}
	for _, o := range objs {
		id, _ := o["msgId"].(string)
		ch, _ := o["channelId"].(string)
		touched[channelOwner(source, ch)] = source
		if ch := cat.chans[chanKey{source, id}]; ch != nil && ch.ParentID != "" && ch.Name != record.AnonymousThread {
			c := *ch
			c.Name = record.AnonymousThread
			renamed = append(renamed, &c)
		}
	}
	if len(renamed) > 0 {
		objs2 := make([]*models.Object, 0, len(renamed))
		for _, c := range renamed {
			objs2 = append(objs2, s.channelObject(c))
		}
		if err := s.upsert(ctx, objs2); err != nil {
			return err
		}
	}
	if _, err = s.deleteWhere(ctx, s.class("Message"), where); err != nil {
		return err
	}
	for _, c := range renamed {
		touched[channelOwner(source, c.ID)] = source
	}
	return s.contentChanged(ctx, touched)
}

// deleteChannels deletes channels with their messages and frees their
// slugs.
func (s *operator) deleteChannels(ctx context.Context, cat *catalog, keys []chanKey) error {
	for _, k := range keys {
		if _, err := s.deleteWhere(ctx, s.class("Message"), channelWhere(k)); err != nil {
			return err
		}
		if err := s.deleteObject(ctx, s.class("Channel"), s.channelObjID(k.source, k.id)); err != nil {
			return err
		}
		if ch := cat.chans[k]; ch != nil {
			if err := s.release(ctx, "c", ch.Slug); err != nil {
				return err
			}
		}
		if err := s.contentChanged(ctx, map[string]string{channelOwner(k.source, k.id): k.source}); err != nil {
			return err
		}
	}
	return nil
}

// deleteContent deletes everything of a source: channels, messages,
// documents, chunks, and the slugs they held.
func (s *operator) deleteContent(ctx context.Context, id string) error {
	chans, err := s.getAll(ctx, getQuery{class: s.class("Channel"), fields: []string{"slug"}, where: eqText("sourceId", id)})
	if err != nil {
		return err
	}
	docs, err := s.getAll(ctx, getQuery{class: s.class("Document"), fields: []string{"slug"}, where: eqText("sourceId", id)})
	if err != nil {
		return err
	}
	for _, class := range []string{"Message", "Chunk", "Document", "Channel", "Change"} {
		if _, err := s.deleteWhere(ctx, s.class(class), eqText("sourceId", id)); err != nil {
			return err
		}
	}
	for kind, objs := range map[string][]map[string]any{"c": chans, "d": docs} {
		for _, o := range objs {
			if slug, _ := o["slug"].(string); slug != "" {
				if err := s.release(ctx, kind, slug); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hasChannel reports whether a source has a channel.
func (s *operator) hasChannel(sourceID, channelID string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return false, err
	}
	return cat.chans[chanKey{sourceID, channelID}] != nil, nil
}

// SetChannelVisibility records an operator's choice for a channel.
func (s *operator) SetChannelVisibility(sourceID, channelID, vis string) (record.ChannelInfo, error) {
	switch vis {
	case record.VisibilityPublic, record.VisibilityPrivate, record.VisibilityInherit:
	default:
		return record.ChannelInfo{}, fmt.Errorf("%w: visibility must be %q, %q or %q", record.ErrInvalid,
			record.VisibilityPublic, record.VisibilityPrivate, record.VisibilityInherit)
	}
	_, err := s.UpdateSource(sourceID, func(src *record.Source) error {
		if ok, err := s.hasChannel(sourceID, channelID); err != nil || !ok {
			return cmp.Or(err, record.ErrNotFound)
		}
		if src.ChannelVisibility == nil {
			src.ChannelVisibility = map[string]string{}
		}
		if vis == record.VisibilityInherit {
			delete(src.ChannelVisibility, channelID)
		} else {
			src.ChannelVisibility[channelID] = vis
		}
		return nil
	})
	if err != nil {
		return record.ChannelInfo{}, err
	}
	infos, _, err := s.SourceChannels(sourceID)
	if err != nil {
		return record.ChannelInfo{}, err
	}
	for _, ci := range infos {
		if ci.ID == channelID {
			return ci, nil
		}
	}
	return record.ChannelInfo{}, record.ErrNotFound
}

// ExcludeChannel deletes a channel of a source, its threads and their
// messages, and keeps later writes from storing them again.
func (s *operator) ExcludeChannel(sourceID, channelID string) error {
	_, err := s.UpdateSource(sourceID, func(src *record.Source) error {
		if slices.Contains(src.ExcludedChannels, channelID) {
			return nil
		}
		if ok, err := s.hasChannel(sourceID, channelID); err != nil || !ok {
			return cmp.Or(err, record.ErrNotFound)
		}
		src.ExcludedChannels = append(src.ExcludedChannels, channelID)
		return nil
	})
	return err
}

// RestoreChannel lets later writes store an excluded channel again.
func (s *operator) RestoreChannel(sourceID, channelID string) error {
	_, err := s.UpdateSource(sourceID, func(src *record.Source) error {
		i := slices.Index(src.ExcludedChannels, channelID)
		if i < 0 {
			return record.ErrNotFound
		}
		src.ExcludedChannels = slices.Delete(src.ExcludedChannels, i, i+1)
		return nil
	})
	if err == nil {
		s.droppedMu.Lock()
		for k := range s.dropped {
			if k.source == sourceID {
				delete(s.dropped, k)
			}
		}
		s.droppedMu.Unlock()
	}
	return err
}

// OptOut deletes every message of a source written by author and keeps
// later writes from storing theirs; it returns how many were deleted.
func (s *operator) OptOut(sourceID, author string) (removed int, err error) {
	author = record.CleanName(author)
	f := analysis.Fold(author)
	_, err = s.UpdateSource(sourceID, func(src *record.Source) error {
		if slices.ContainsFunc(src.OptOuts, func(a string) bool { return analysis.Fold(a) == f }) {
			removed = 0
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		n, err := s.count(ctx, s.class("Message"), and(eqText("sourceId", sourceID), eqText("author", f)))
		if err != nil {
			return err
		}
		removed = n
		src.OptOuts = append(src.OptOuts, author)
		return nil
	})
	return removed, err
}

// OptIn lets an opted-out author's new messages in again.
func (s *operator) OptIn(sourceID, author string) error {
	f := analysis.Fold(author)
	_, err := s.UpdateSource(sourceID, func(src *record.Source) error {
		i := slices.IndexFunc(src.OptOuts, func(a string) bool { return analysis.Fold(a) == f })
		if i < 0 {
			return record.ErrNotFound
		}
		src.OptOuts = slices.Delete(src.OptOuts, i, i+1)
		return nil
	})
	return err
}
