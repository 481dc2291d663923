package engine

import (
	"fmt"
	"sort"

	"github.com/sift-search/sift/record"
)

// ChannelWindow returns the messages of channel slug that q picks, in time
// order. An anchor message that is not in the channel is ErrNotFound; a
// Limit below 1 or Around with Before or After is ErrInvalid. It costs
// O(log n + Limit) for a channel of n messages.
func (e *content) ChannelWindow(slug string, q record.WindowQuery) (record.ChannelWindow, error) {
	if q.Limit < 1 {
		return record.ChannelWindow{}, invalidf("limit must be at least 1")
	}
	if !q.Around.IsZero() && (!q.Before.IsZero() || !q.After.IsZero()) {
		return record.ChannelWindow{}, invalidf("around cannot be combined with before or after")
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanSlug[slug]
	if !ok {
		return record.ChannelWindow{}, record.ErrNotFound
	}
	o := e.st.chanOrder[n]
	lo, hi := 0, len(o)
	var err error
	switch {
	case !q.Around.IsZero():
		var at int
		if at, err = e.anchorAt(n, o, q.Around, false); err != nil {
			return record.ChannelWindow{}, err
		}
		at = min(at, len(o)-1) // a time after the last message: the latest
		lo = max(min(at-(q.Limit-1)/2, len(o)-q.Limit), 0)
		hi = min(lo+q.Limit, len(o))
	default:
		if !q.After.IsZero() {
			if lo, err = e.anchorAt(n, o, q.After, true); err != nil {
				return record.ChannelWindow{}, err
			}
		}
		if !q.Before.IsZero() {
			if hi, err = e.anchorAt(n, o, q.Before, false); err != nil {
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
	w := record.ChannelWindow{Messages: make([]record.Message, 0, hi-lo), HasBefore: lo > 0, HasAfter: hi < len(o)}
	for _, s := range o[lo:hi] {
		w.Messages = append(w.Messages, e.st.message(s))
	}
	return w, nil
}

// anchorAt returns the position in channel n's time order o of anchor a:
// of its message (just past it when after), or of the first message at
// (after: past) its time. The caller holds mu.
func (e *content) anchorAt(n uint32, o []uint32, a record.Anchor, after bool) (int, error) {
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
