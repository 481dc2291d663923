package engine

import (
	"cmp"
	"slices"
)

// Each channel's messages are kept in time order (chanOrder), for channel
// pages, reading windows and the follower's conversation windows.

// orderInsert adds message slot i to its channel's time order.
func (st *messageTable) orderInsert(ch, i uint32) {
	o := st.chanOrder[ch]
	at := len(o)
	if at > 0 && st.msgCmp(i, o[at-1]) < 0 { // not the newest: a backfill
		at, _ = slices.BinarySearchFunc(o, i, st.msgCmp)
	}
	st.chanOrder[ch] = slices.Insert(o, at, i)
	st.feed.changed(ChannelChanged, ch)
}

// orderRemove drops message slot i from its channel's time order. Called
// before the record is cleared.
func (st *messageTable) orderRemove(ch, i uint32) {
	o := st.chanOrder[ch]
	if at, ok := slices.BinarySearchFunc(o, i, st.msgCmp); ok {
		st.chanOrder[ch] = slices.Delete(o, at, at+1)
	}
	if len(st.chanOrder[ch]) == 0 {
		delete(st.chanOrder, ch)
	}
	st.feed.changed(ChannelChanged, ch)
}

// msgCmp orders message slots by time, then slot.
func (st *messageTable) msgCmp(a, b uint32) int {
	if c := cmp.Compare(st.msgs.at(a).ts, st.msgs.at(b).ts); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// buildChannelOrders sorts every channel's messages by time (at load).
func (st *messageTable) buildChannelOrders() {
	for i := range st.msgs.len() {
		if r := st.msgs.at(uint32(i)); r.live() {
			st.chanOrder[r.channel] = append(st.chanOrder[r.channel], uint32(i))
		}
	}
	for _, o := range st.chanOrder {
		slices.SortFunc(o, st.msgCmp)
	}
}
