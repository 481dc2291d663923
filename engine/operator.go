package engine

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/sift-search/sift/tokenizer"
)

// What an operator controls beyond a source's record: channel visibility,
// channels removed from a source, authors who opted out, and the instance's
// settings. Each change is one logged write (the source's record, or the
// settings), so it survives a crash and replays exactly.

// ChannelInfo is a channel as an operator sees it.
type ChannelInfo struct {
	Channel
	Visibility string // the operator's choice: public, private or inherit
	Messages   int
}

// SourceChannels returns the channels of a source ordered by name, each
// with the operator's choice, its effective visibility (Hidden) and its
// message count, and the ids of the channels an operator excluded.
func (e *Engine) SourceChannels(sourceID string) (chans []ChannelInfo, excluded []string, err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	src, ok := e.st.sources[sourceID]
	if !ok {
		return nil, nil, ErrNotFound
	}
	chans = []ChannelInfo{}
	for n, c := range e.st.chans {
		if c != nil && c.SourceID == sourceID {
			chans = append(chans, e.st.channelInfo(src, uint32(n)))
		}
	}
	slices.SortFunc(chans, func(a, b ChannelInfo) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	return chans, slices.Clone(src.ExcludedChannels), nil
}

// channelInfo describes channel n of src; the caller holds mu.
func (st *state) channelInfo(src *Source, n uint32) ChannelInfo {
	return ChannelInfo{
		Channel:    st.channel(n),
		Visibility: cmp.Or(src.ChannelVisibility[st.chans[n].ID], VisibilityInherit),
		Messages:   len(st.chanOrder[n]),
	}
}

// channel returns a copy of channel n with Hidden set; the caller holds mu.
func (st *state) channel(n uint32) Channel {
	c := *st.chans[n]
	c.Hidden = st.hid.chans.Contains(n)
	return c
}

// document returns a copy of document slot i with Hidden set; the caller
// holds mu.
func (st *state) document(i uint32) Document {
	d := *st.docs[i]
	d.Hidden = st.docIdx.Hidden(i)
	return d
}

// SetChannelVisibility records an operator's choice for a channel:
// VisibilityPublic, VisibilityPrivate or VisibilityInherit.
func (e *Engine) SetChannelVisibility(sourceID, channelID, vis string) (ChannelInfo, error) {
	switch vis {
	case VisibilityPublic, VisibilityPrivate, VisibilityInherit:
	default:
		return ChannelInfo{}, invalidf("visibility must be %q, %q or %q", VisibilityPublic, VisibilityPrivate, VisibilityInherit)
	}
	_, err := e.UpdateSource(sourceID, func(s *Source) error {
		if !e.hasChannel(sourceID, channelID) {
			return ErrNotFound
		}
		if s.ChannelVisibility == nil {
			s.ChannelVisibility = map[string]string{}
		}
		if vis == VisibilityInherit {
			delete(s.ChannelVisibility, channelID)
		} else {
			s.ChannelVisibility[channelID] = vis
		}
		return nil
	})
	if err != nil {
		return ChannelInfo{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanKey[recKey{sourceID, channelID}]
	if !ok {
		return ChannelInfo{}, ErrNotFound
	}
	return e.st.channelInfo(e.st.sources[sourceID], n), nil
}

// hasChannel reports whether a source has the channel.
func (e *Engine) hasChannel(sourceID, channelID string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, ok := e.st.chanKey[recKey{sourceID, channelID}]
	return ok
}

// ExcludeChannel deletes a channel of a source, its threads and all their
// messages, and keeps later crawls and imports from storing them again
// until RestoreChannel. Excluding an excluded channel changes nothing.
func (e *Engine) ExcludeChannel(sourceID, channelID string) error {
	_, err := e.UpdateSource(sourceID, func(s *Source) error {
		if slices.Contains(s.ExcludedChannels, channelID) {
			return nil
		}
		if !e.hasChannel(sourceID, channelID) {
			return ErrNotFound
		}
		s.ExcludedChannels = append(s.ExcludedChannels, channelID)
		return nil
	})
	return err
}

// RestoreChannel lets later crawls and imports store an excluded channel
// again; ErrNotFound when it is not excluded.
func (e *Engine) RestoreChannel(sourceID, channelID string) error {
	_, err := e.UpdateSource(sourceID, func(s *Source) error {
		i := slices.Index(s.ExcludedChannels, channelID)
		if i < 0 {
			return ErrNotFound
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
func (e *Engine) OptOut(sourceID, author string) (removed int, err error) {
	author = cleanName(author)
	_, err = e.UpdateSource(sourceID, func(s *Source) error {
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
func (e *Engine) OptIn(sourceID, author string) error {
	_, err := e.UpdateSource(sourceID, func(s *Source) error {
		i := slices.IndexFunc(s.OptOuts, func(a string) bool { return tokenizer.Fold(a) == tokenizer.Fold(author) })
		if i < 0 {
			return ErrNotFound
		}
		s.OptOuts = slices.Delete(s.OptOuts, i, i+1)
		return nil
	})
	return err
}

// Bounds of the instance's settings.
const (
	MaxSettings          = 64
	maxSettingKeyBytes   = 64
	MaxSettingValueBytes = 4096
)

// Settings returns a copy of the instance's settings.
func (e *Engine) Settings() map[string]string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return maps.Clone(e.st.settings)
}

// UpdateSettings sets the given settings; an empty value removes one.
func (e *Engine) UpdateSettings(changes map[string]string) (map[string]string, error) {
	if err := checkSettings(changes); err != nil {
		return nil, err
	}
	e.writeMu.Lock()
	next, err := applySettings(e.st.settings, changes)
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

// checkSettings validates changes to the settings.
func checkSettings(changes map[string]string) error {
	for k, v := range changes {
		if k == "" || len(k) > maxSettingKeyBytes || strings.ContainsFunc(k, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_') }) {
			return invalidf("setting names are 1 to %d characters of a-z and '_'", maxSettingKeyBytes)
		}
		if err := checkText(k, v, MaxSettingValueBytes, false, true); err != nil {
			return err
		}
	}
	return nil
}

// applySettings returns cur with changes made (an empty value removes a
// setting), or ErrInvalid when that holds too many.
func applySettings(cur, changes map[string]string) (map[string]string, error) {
	next := maps.Clone(cur)
	if next == nil {
		next = map[string]string{}
	}
	for k, v := range changes {
		if v = strings.TrimSpace(v); v == "" {
			delete(next, k)
		} else {
			next[k] = v
		}
	}
	if len(next) > MaxSettings {
		return nil, invalidf("at most %d settings", MaxSettings)
	}
	return next, nil
}
