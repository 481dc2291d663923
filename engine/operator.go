package engine

import (
	"cmp"
	"maps"
	"slices"

	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/tokenizer"
)

// What an operator controls beyond a source's record: channel visibility,
// channels removed from a source, authors who opted out, and the instance's
// settings. Each change is one logged write (the source's record, or the
// settings), so it survives a crash and replays exactly.

// SourceChannels returns the channels of a source ordered by name, each
// with the operator's choice, its effective visibility (Hidden) and its
// message count, and the ids of the channels an operator excluded.
func (e *catalog) SourceChannels(sourceID string) (chans []record.ChannelInfo, excluded []string, err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	src, ok := e.st.sources[sourceID]
	if !ok {
		return nil, nil, record.ErrNotFound
	}
	chans = []record.ChannelInfo{}
	for n, c := range e.st.chans {
		if c != nil && c.SourceID == sourceID {
			chans = append(chans, e.st.channelInfo(src, uint32(n)))
		}
	}
	slices.SortFunc(chans, func(a, b record.ChannelInfo) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return chans, slices.Clone(src.ExcludedChannels), nil
}

// channelInfo describes channel n of src; the caller holds mu.
func (st *state) channelInfo(src *record.Source, n uint32) record.ChannelInfo {
	return record.ChannelInfo{
		Channel:    st.channel(n),
		Visibility: cmp.Or(src.ChannelVisibility[st.chans[n].ID], record.VisibilityInherit),
		Messages:   len(st.chanOrder[n]),
	}
}

// channel returns a copy of channel n with Hidden set; the caller holds mu.
func (st *state) channel(n uint32) record.Channel {
	c := *st.chans[n]
	c.Hidden = st.hid.chans.Contains(n)
	return c
}

// document returns a copy of document slot i with Hidden set; the caller
// holds mu.
func (st *state) document(i uint32) record.Document {
	d := *st.docs[i]
	d.Hidden = st.docIdx.Hidden(i)
	return d
}

// SetChannelVisibility records an operator's choice for a channel:
// VisibilityPublic, VisibilityPrivate or VisibilityInherit.
func (e *catalog) SetChannelVisibility(sourceID, channelID, vis string) (record.ChannelInfo, error) {
	switch vis {
	case record.VisibilityPublic, record.VisibilityPrivate, record.VisibilityInherit:
	default:
		return record.ChannelInfo{}, invalidf("visibility must be %q, %q or %q", record.VisibilityPublic, record.VisibilityPrivate, record.VisibilityInherit)
	}
	_, err := e.UpdateSource(sourceID, func(s *record.Source) error {
		if !e.hasChannel(sourceID, channelID) {
			return record.ErrNotFound
		}
		if s.ChannelVisibility == nil {
			s.ChannelVisibility = map[string]string{}
		}
		if vis == record.VisibilityInherit {
			delete(s.ChannelVisibility, channelID)
		} else {
			s.ChannelVisibility[channelID] = vis
		}
		return nil
	})
	if err != nil {
		return record.ChannelInfo{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanKey[recKey{sourceID, channelID}]
	if !ok {
		return record.ChannelInfo{}, record.ErrNotFound
	}
	return e.st.channelInfo(e.st.sources[sourceID], n), nil
}

// hasChannel reports whether a source has the channel.
func (e *catalog) hasChannel(sourceID, channelID string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, ok := e.st.chanKey[recKey{sourceID, channelID}]
	return ok
}

// ExcludeChannel deletes a channel of a source, its threads and all their
// messages, and keeps later crawls and imports from storing them again
// until RestoreChannel. Excluding an excluded channel changes nothing.
func (e *catalog) ExcludeChannel(sourceID, channelID string) error {
	_, err := e.UpdateSource(sourceID, func(s *record.Source) error {
		if slices.Contains(s.ExcludedChannels, channelID) {
			return nil
		}
		if !e.hasChannel(sourceID, channelID) {
			return record.ErrNotFound
		}
		s.ExcludedChannels = append(s.ExcludedChannels, channelID)
		return nil
	})
	return err
}

// RestoreChannel lets later crawls and imports store an excluded channel
// again; ErrNotFound when it is not excluded.
func (e *catalog) RestoreChannel(sourceID, channelID string) error {
	_, err := e.UpdateSource(sourceID, func(s *record.Source) error {
		i := slices.Index(s.ExcludedChannels, channelID)
		if i < 0 {
			return record.ErrNotFound
		}
		s.ExcludedChannels = slices.Delete(s.ExcludedChannels, i, i+1)
		return nil
	})
	return err
}

// OptOut deletes every message of a source written by author (its
// username, in any case) and keeps later writes from storing theirs. It
// returns how many messages were deleted; opting out twice deletes nothing
// more.
func (e *catalog) OptOut(sourceID, author string) (removed int, err error) {
	author = record.CleanName(author)
	_, err = e.UpdateSource(sourceID, func(s *record.Source) error {
		if slices.ContainsFunc(s.OptOuts, func(a string) bool { return tokenizer.Fold(a) == tokenizer.Fold(author) }) {
			return nil
		}
		e.mu.RLock() // fn runs outside the write lock (see UpdateSource)
		removed = len(e.optedOutSlots(sourceID, s.OptOuts, []string{author}))
		e.mu.RUnlock()
		s.OptOuts = append(s.OptOuts, author)
		return nil
	})
	return removed, err
}

// OptIn lets an opted-out author's new messages in again (what was deleted
// stays deleted); ErrNotFound when the author has not opted out.
func (e *catalog) OptIn(sourceID, author string) error {
	_, err := e.UpdateSource(sourceID, func(s *record.Source) error {
		i := slices.IndexFunc(s.OptOuts, func(a string) bool { return tokenizer.Fold(a) == tokenizer.Fold(author) })
		if i < 0 {
			return record.ErrNotFound
		}
		s.OptOuts = slices.Delete(s.OptOuts, i, i+1)
		return nil
	})
	return err
}

// Settings returns a copy of the instance's settings.
func (e *instance) Settings() map[string]string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return maps.Clone(e.st.settings)
}

// UpdateSettings sets the given settings; an empty value removes one.
func (e *instance) UpdateSettings(changes map[string]string) (map[string]string, error) {
	if err := record.CheckSettings(changes); err != nil {
		return nil, err
	}
	e.writeMu.Lock()
	next, err := record.ApplySettings(e.st.settings, changes)
	if err != nil {
		e.writeMu.Unlock()
		return nil, err
	}
	seq, err := e.commit(&op{kind: opPutSettings, settings: next})
	e.writeMu.Unlock()
	if err != nil {
		return nil, err
	}
	return maps.Clone(next), e.sync(seq)
}
