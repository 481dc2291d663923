package record

import "time"

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
	Messages []Message
	// HasBefore and HasAfter: the channel has messages before the first
	// and after the last of Messages (with none, around the anchor).
	HasBefore, HasAfter bool
}
