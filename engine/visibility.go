package engine

import (
	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/tokenizer"
)

// Visibility (record.ChannelHiddenBy) is derived from the records, never
// persisted: the hidden sets are rebuilt at load and kept current by every
// write, so a query pays one bitmap test per candidate, and nothing when
// everything is public. Hidden messages and documents are held by their
// indexes (index.Hide), which also rank a public search by the statistics
// of public content alone.

// visibility is the state's role of applying the operators' rules: each
// source's exclusions and opt-outs (rules), what writes therefore drop,
// and what callers without credentials must not see (hid, and the
// indexes' hidden sets), kept current as the records change. Like
// messageTable it is the state itself, embedded in it.
type visibility struct{ *state }

// hidden holds the channels callers without credentials must not see; the
// message and document indexes hold the hidden messages and documents.
type hidden struct {
	chans *roaring.Bitmap // channel numbers
}

func newHidden() hidden { return hidden{chans: roaring.New()} }

// sourceRules are a source's exclusions and opt-outs as sets, rebuilt from
// the record whenever it is stored.
type sourceRules struct {
	excluded map[string]bool // channel ids
	optOuts  map[string]bool // folded usernames
	// dropped holds the threads of excluded channels that writes skipped,
	// so their messages are skipped too rather than refused as strays. It
	// is rebuilt as connectors put their channels again.
	dropped map[string]bool
}

// setRules rebuilds the rules of s; the caller holds the write locks.
func (st *visibility) setRules(s *record.Source) {
	r := &sourceRules{excluded: map[string]bool{}, optOuts: map[string]bool{}, dropped: map[string]bool{}}
	if old := st.rules[s.ID]; old != nil && len(s.ExcludedChannels) > 0 {
		r.dropped = old.dropped
	}
	for _, id := range s.ExcludedChannels {
		r.excluded[id] = true
	}
	for _, a := range s.OptOuts {
		r.optOuts[tokenizer.Fold(a)] = true
	}
	st.rules[s.ID] = r
}

// skipsChannel reports whether writes drop channel c: an operator deleted
// it or the channel it is a thread of.
func (st *visibility) skipsChannel(c *record.Channel) bool {
	r := st.rules[c.SourceID]
	return r != nil && (r.excluded[c.ID] || c.ParentID != "" && r.excluded[c.ParentID])
}

// skipsMessage reports whether writes drop m: its author opted out, or its
// channel was dropped.
func (st *visibility) skipsMessage(m *record.Message) bool {
	r := st.rules[m.SourceID]
	if r == nil {
		return false
	}
	return r.excluded[m.ChannelID] || r.dropped[m.ChannelID] || st.optedOut(m.SourceID, m.Author)
}

// optedOut reports whether author opted out of a source.
func (st *visibility) optedOut(source, author string) bool {
	r := st.rules[source]
	return r != nil && len(r.optOuts) > 0 && author != "" && r.optOuts[tokenizer.Fold(author)]
}

// channelHidden computes whether channel c is hidden; the caller holds mu.
func (st *visibility) channelHidden(c *record.Channel) bool {
	return record.ChannelHiddenBy(st.sources[c.SourceID], c, func(id string) *record.Channel {
		if n, ok := st.chanKey[recKey{c.SourceID, id}]; ok {
			return st.chans[n]
		}
		return nil
	})
}

// refreshVisibility recomputes what is hidden of one source's channels and
// documents ("" = every source), moving their messages and chunks in or out
// of the hidden sets. O(channels + the content whose visibility changed).
// The caller holds the write locks.
func (st *visibility) refreshVisibility(sourceID string) {
	for n, c := range st.chans {
		if c == nil || sourceID != "" && c.SourceID != sourceID {
			continue
		}
		ch := uint32(n)
		h := st.channelHidden(c)
		if h == st.hid.chans.Contains(ch) {
			continue
		}
		setBit(st.hid.chans, ch, h)
		for _, slot := range st.chanOrder[ch] {
			st.msgIdx.Hide(slot, h)
		}
		st.feed.changed(ChannelShown, ch)
	}
	refreshDocs := func(id string) {
		h := record.SourceHidden(st.sources[id])
		st.docIdx.Facet(sourceFacet(id)).Iterate(func(slot uint32) bool {
			if h != st.docIdx.Hidden(slot) {
				st.docIdx.Hide(slot, h)
				st.feed.changed(DocumentShown, slot)
			}
			return true
		})
	}
	if sourceID != "" {
		refreshDocs(sourceID)
		return
	}
	for id := range st.sources {
		refreshDocs(id)
	}
}

func setBit(b *roaring.Bitmap, i uint32, on bool) {
	if on {
		b.Add(i)
	} else {
		b.Remove(i)
	}
}

// applyPutSource stores s and carries out what its rules demand of the
// content already held: channels it excludes go with their threads and
// messages, messages of authors newly opted out go; then the visibility of
// its content is recomputed. The caller holds writeMu, not mu.
func (e *applier) applyPutSource(s *record.Source) {
	st := e.st
	old := st.sources[s.ID]
	e.mu.Lock()
	st.sources[s.ID] = s
	st.setRules(s)
	e.mu.Unlock()
	var gone []uint32
	for n, c := range st.chans {
		if c != nil && c.SourceID == s.ID && st.skipsChannel(c) {
			gone = append(gone, uint32(n))
		}
	}
	e.deleteChannels(gone)
	var before []string
	if old != nil {
		before = old.OptOuts
	}
	gone = gone[:0]
	for _, slot := range e.optedOutSlots(s.ID, before, s.OptOuts) {
		// A thread started by the message may be named after it.
		if n, ok := st.chanKey[recKey{s.ID, st.msgID(uint32(slot))}]; ok && st.chans[n].ParentID != "" {
			e.mu.Lock()
			st.chans[n].Name = record.AnonymousThread
			e.mu.Unlock()
		}
		gone = append(gone, slot)
	}
	e.deleteSlots(gone, nil)
	e.mu.Lock()
	st.refreshVisibility(s.ID)
	e.mu.Unlock()
}

// optedOutSlots returns the message slots of source id written by an author
// in now but not in before. The caller holds writeMu or mu.
func (e *applier) optedOutSlots(id string, before, now []string) []uint32 {
	was := map[string]bool{}
	for _, a := range before {
		was[tokenizer.Fold(a)] = true
	}
	var out []uint32
	st := e.st
	for _, a := range now {
		f := tokenizer.Fold(a)
		if was[f] {
			continue
		}
		was[f] = true
		cand := roaring.And(st.msgIdx.Facet(authorFacet(a)), st.msgIdx.Facet(sourceFacet(id)))
		cand.Iterate(func(slot uint32) bool {
			if tokenizer.Fold(st.authors[st.msgs.at(slot).author].name) == f {
				out = append(out, slot)
			}
			return true
		})
	}
	return out
}

// deleteChannels removes channels by number with their messages. The
// caller holds writeMu, not mu.
func (e *applier) deleteChannels(chans []uint32) {
	if len(chans) == 0 {
		return
	}
	st := e.st
	var msgs []uint32
	for _, n := range chans {
		msgs = append(msgs, st.chanOrder[n]...)
	}
	e.deleteSlots(msgs, nil)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range chans {
		c := st.chans[n]
		if c == nil {
			continue
		}
		delete(st.chanKey, recKey{c.SourceID, c.ID})
		delete(st.chanSlug, c.Slug)
		st.chans[n] = nil
		st.hid.chans.Remove(n)
		st.feed.changed(ChannelChanged, n)
	}
}
