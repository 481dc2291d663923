package engine

import (
	"cmp"
	"slices"

	"github.com/sift-search/sift/record"
)

// OrphanThreads returns a source's threads that no visible message leads
// to, sorted by name: a thread is linked from the message that started it
// (the message whose id is the thread's), and an orphan's starting message
// is not stored in its channel, or its channel is not stored, or (private
// false) its channel is hidden. Without private, hidden threads are left
// out. O(channels of all sources).
func (e *content) OrphanThreads(sourceID string, private bool) []record.Channel {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []record.Channel
	for n, c := range e.st.chans {
		if c == nil || c.SourceID != sourceID || c.ParentID == "" {
			continue
		}
		ch := e.st.channel(uint32(n))
		if (private || !ch.Hidden) && !e.st.threadLinked(c, private) {
			out = append(out, ch)
		}
	}
	slices.SortFunc(out, func(a, b record.Channel) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	return out
}

// threadLinked reports whether thread c's starting message is stored in
// its channel, and that channel shown; the caller holds mu.
func (st *state) threadLinked(c *record.Channel, private bool) bool {
	parent, ok := st.chanKey[recKey{c.SourceID, c.ParentID}]
	if !ok || !private && st.hid.chans.Contains(parent) {
		return false
	}
	slot, ok := st.findMessage(c.SourceID, c.ID)
	return ok && st.msgs.at(slot).channel == parent
}
