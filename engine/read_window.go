package engine

import (
	"fmt"
	"sort"
	"time"

	"github.com/sift-search/sift/record"
)

// Anchor is where a window of a channel's messages starts, ends or is
// centred: one of the channel's messages (ID), else a time; the zero Anchor
// is none.
type Anchor struct {
	ID   string
	Time time.Time
}

// IsZero reports whether a is no anchor.
func (a Anchor) IsZero() bool { return a.ID == "" && a.Time.IsZero() }

// WindowQuery picks a stretch of a channel's messages. Around gives the
// Limit messages centred on a message (or on the first message at or after
// a time); Before and After give those strictly before or after an anchor,
// the Limit closest to it (both: the first Limit between them). Without
// anchors it gives the latest Limit messages. Around excludes Before and
// After.
type WindowQuery struct {
	Around, Before, After Anchor
	Limit                 int
}

// ChannelWindow is a stretch of a channel's messages in time order.
type ChannelWindow struct {
	Messages []record.Message
	// HasBefore and HasAfter: the channel has messages before the first
	// and after the last of Messages (with none, around the anchor).
	HasBefore, HasAfter bool
}

// ChannelWindow returns the messages of channel slug that q picks, in time
// order. An anchor message that is not in the channel is ErrNotFound; a
// Limit below 1 or Around with Before or After is ErrInvalid. It costs
// O(log n + Limit) for a channel of n messages.
func (e *Engine) ChannelWindow(slug string, q WindowQuery) (ChannelWindow, error) {
	if q.Limit < 1 {
		return ChannelWindow{}, invalidf("limit must be at least 1")
	}
	if !q.Around.IsZero() && (!q.Before.IsZero() || !q.After.IsZero()) {
		return ChannelWindow{}, invalidf("around cannot be combined with before or after")
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanSlug[slug]
	if !ok {
		return ChannelWindow{}, record.ErrNotFound
	}
	o := e.st.chanOrder[n]
	lo, hi := 0, len(o)
	var err error
	switch {
	case !q.Around.IsZero():
		var at int
		if at, err = e.anchorAt(n, o, q.Around, false); err != nil {
			return ChannelWindow{}, err
		}
		at = min(at, len(o)-1) // a time after the last message: the latest
		lo = max(min(at-(q.Limit-1)/2, len(o)-q.Limit), 0)
		hi = min(lo+q.Limit, len(o))
	default:
		if !q.After.IsZero() {
			if lo, err = e.anchorAt(n, o, q.After, true); err != nil {
				return ChannelWindow{}, err
			}
		}
		if !q.Before.IsZero() {
			if hi, err = e.anchorAt(n, o, q.Before, false); err != nil {
				return ChannelWindow{}, err
			}
		}
		hi = max(hi, lo)
		if !q.After.IsZero() {
			hi = min(hi, lo+q.Limit)
		} else {
			lo = max(lo, hi-q.Limit)
		}
	}
	w := ChannelWindow{Messages: make([]record.Message, 0, hi-lo), HasBefore: lo > 0, HasAfter: hi < len(o)}
	for _, s := range o[lo:hi] {
		w.Messages = append(w.Messages, e.st.message(s))
	}
	return w, nil
}

// anchorAt returns the position in channel n's time order o of anchor a:
// of its message (just past it when after), or of the first message at
// (after: past) its time. The caller holds mu.
func (e *Engine) anchorAt(n uint32, o []uint32, a Anchor, after bool) (int, error) {
	if a.ID != "" {
		slot, ok := e.st.findMessage(e.st.chans[n].SourceID, a.ID)
		if !ok || e.st.msgs.at(slot).channel != n {
			return 0, fmt.Errorf("message %q: %w", a.ID, record.ErrNotFound)
		}
		at := sort.Search(len(o), func(i int) bool { return e.st.msgCmp(o[i], slot) >= 0 })
		if at == len(o) || o[at] != slot {
			return 0, fmt.Errorf("message %q: %w", a.ID, record.ErrNotFound)
		}
		if after {
			at++
		}
		return at, nil
	}
	return sort.Search(len(o), func(i int) bool {
		t := microTime(e.st.msgs.at(o[i]).ts)
		if after {
			return t.After(a.Time)
		}
		return !t.Before(a.Time)
	}), nil
}
