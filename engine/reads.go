package engine

import "github.com/sift-search/sift/record"

// MessageIDs returns the ids of the messages of a source's channel, found
// by the channel's platform id, in time order; ErrNotFound when the source
// has no such channel.
func (e *content) MessageIDs(sourceID, channelID string) ([]string, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n, ok := e.st.chanKey[recKey{sourceID, channelID}]
	if !ok {
		return nil, record.ErrNotFound
	}
	slots := e.st.chanOrder[n]
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = e.st.msgID(s)
	}
	return out, nil
}
