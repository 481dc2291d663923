package chunk

import (
	"time"

	"github.com/sift-search/sift/follow"
)

// Conversation windows: consecutive messages of a channel, split at a
// silence longer than WindowGap — unless the message replies to one of the
// window (a question answered an hour later stays with its answer) — or
// when a window reaches WindowMaxMsgs messages or WindowMaxBytes of text.
const (
	WindowGap      = 30 * time.Minute
	WindowMaxMsgs  = 20
	WindowMaxBytes = 2000
)

// Windows cuts a channel's messages, in time order, into conversation
// windows: refs[i] names the message texts[i] holds; each window is a run
// of refs.
func Windows[R any](refs []R, texts []follow.MessageText) [][]R {
	var out [][]R
	var cur []R
	bytes := 0
	gap := WindowGap.Microseconds()
	var last int64
	start := 0 // of cur in texts
	replies := func(r *follow.MessageText) bool {
		for j := start; r.ReplyTo != "" && j < start+len(cur); j++ {
			if texts[j].ID == r.ReplyTo {
				return true
			}
		}
		return false
	}
	for i, ref := range refs {
		r := &texts[i]
		if len(cur) > 0 && (r.Micros-last > gap && !replies(r) || len(cur) >= WindowMaxMsgs ||
			bytes+len(r.Content) > WindowMaxBytes) {
			out = append(out, cur)
			cur, bytes, start = nil, 0, i
		}
		cur = append(cur, ref)
		bytes += len(r.Content)
		last = r.Micros
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
