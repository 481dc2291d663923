package httpapi

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/record"
)

// A conversation is what people search for and link to: a thread (a
// channel of kind thread, topic, issue or discussion is one conversation
// whole), or, in a channel without threads, a message that starts one
// and the messages that follow it: those that answer it or its replies
// (by reply reference) and those that carry on soon after without
// answering anything else. The rules read only the messages near a
// conversation, so a page, the home page and the sitemap, each reading a
// different stretch of a channel, find the same conversations.
const (
	// convoGap: a message that answers nothing continues the conversation
	// of the message before it when it comes this soon after it…
	convoGap = 30 * time.Minute
	// convoCarry: …and the conversation started less than this before.
	convoCarry = 12 * time.Hour
	// convoSpan: a reply joins the conversation of the message it
	// answers when that message is at most this old.
	convoSpan = 7 * 24 * time.Hour
	// convoMax is the most messages one conversation holds.
	convoMax = 200
	// convoLookback is how many messages before a stretch are read to
	// place its first messages.
	convoLookback = 100
)

// threadKind reports whether a channel of this kind is one conversation.
func threadKind(kind string) bool {
	return kind != "" && kind != "channel"
}

// convo is a conversation within a stretch of a channel's messages.
type convo struct {
	msgs    []*record.Message // the first starts it; time order
	authors map[string]bool
}

func (c *convo) root() *record.Message { return c.msgs[0] }
func (c *convo) last() *record.Message { return c.msgs[len(c.msgs)-1] }

// open reports whether m, posted within span of the conversation's start,
// may still join it.
func (c *convo) open(m *record.Message, span time.Duration) bool {
	age := m.Timestamp.Sub(c.root().Timestamp)
	return len(c.msgs) < convoMax && age >= 0 && age <= span
}

// grouper places a channel's messages, in time order, in conversations.
type grouper struct {
	of   map[string]*convo // message id → its conversation
	all  []*convo          // in the order they started
	prev *record.Message
	last map[string]*record.Message // each author's latest message
}

func newGrouper() *grouper {
	return &grouper{of: map[string]*convo{}, last: map[string]*record.Message{}}
}

// add places m, the message after the last one added.
func (g *grouper) add(m *record.Message) *convo {
	c := g.join(m)
	if c == nil {
		c = &convo{authors: map[string]bool{}}
		g.all = append(g.all, c)
	}
	c.msgs = append(c.msgs, m)
	c.authors[m.Author] = true
	g.of[m.ID] = c
	g.prev, g.last[m.Author] = m, m
	return c
}

// join finds the conversation m belongs to, nil when m starts one.
func (g *grouper) join(m *record.Message) *convo {
	if m.ReplyTo != "" {
		if c := g.of[m.ReplyTo]; c != nil && c.open(m, convoSpan) {
			return c
		}
		return nil // answers what is not here, or long ago
	}
	// Soon after the author's own message, in a conversation the message
	// before is not part of: back to it (two conversations interleave).
	if own := g.carries(g.last[m.Author], m); own != nil && (g.prev == nil || !g.of[g.prev.ID].authors[m.Author]) {
		return own
	}
	c := g.carries(g.prev, m)
	if c != nil && asks(m.Content) && !c.authors[m.Author] {
		return nil // someone new asking: a question of their own
	}
	return c
}

// carries is p's conversation when m, answering nothing, may carry it on:
// soon after p, while it is open.
func (g *grouper) carries(p, m *record.Message) *convo {
	if p == nil {
		return nil
	}
	c := g.of[p.ID]
	if gap := m.Timestamp.Sub(p.Timestamp); c == nil || gap < 0 || gap > convoGap || !c.open(m, convoCarry) {
		return nil
	}
	return c
}

// forget drops the conversations started before cut from the lookup, so a
// long channel is read in constant memory; it returns them.
func (g *grouper) forget(cut time.Time) []*convo {
	n := 0
	for n < len(g.all) && g.all[n].root().Timestamp.Before(cut) && g.all[n] != g.of[g.prev.ID] {
		n++
	}
	done := g.all[:n]
	for _, c := range done {
		for _, m := range c.msgs {
			delete(g.of, m.ID)
			if g.last[m.Author] == m {
				delete(g.last, m.Author)
			}
		}
	}
	g.all = g.all[n:]
	return done
}

// asks reports whether a chat message asks something.
func asks(content string) bool { return strings.Contains(content, "?") }

// group places msgs, a stretch of one channel in time order, in
// conversations; the first skip messages are read only to place those
// after them, and the conversations they start are left out.
func group(msgs []record.Message, skip int) []*convo {
	g := newGrouper()
	for i := range msgs {
		g.add(&msgs[i])
	}
	out := g.all[:0]
	start := map[*record.Message]bool{}
	for i := range msgs[:min(max(skip, 0), len(msgs))] {
		start[&msgs[i]] = true
	}
	for _, c := range g.all {
		if !start[c.root()] {
			out = append(out, c)
		}
	}
	return out
}

// convoTitle is a conversation's title: its first message on one line,
// cut at a word.
func convoTitle(m *record.Message) string {
	line := strings.Join(strings.Fields(mdtext.PlainChat(m.Content)), " ")
	if line == "" {
		return "Conversation of " + cmp.Or(m.AuthorName, m.Author)
	}
	return mdtext.Cut(line, 110)
}

// conversation is one conversation as the pages show it.
type conversation struct {
	Channel record.Channel
	Title   string
	Slug    string // the conversation's path segment: /t/{Slug}
	Msgs    []record.Message
	Total   int // messages in the conversation when it has more than Msgs
	Started time.Time
	Last    time.Time // its latest message
	Author  string    // who started it
	Where   string    // its channel, as the lists name it: #help
}

// Avatar is the avatar of who started it.
func (c *conversation) Avatar() avatar { return avatarOf(&c.Msgs[0]) }

// Replies is how many messages answer the first.
func (c *conversation) Replies() int { return max(c.Total, len(c.Msgs)) - 1 }

// convoSlug is the path segment of a conversation: a thread's channel
// slug, or the channel's slug and the first message's id after a dot. An
// id of other characters than letters, digits and ".-_:" (a slash would
// end the segment once the server decodes the path) is written "~" and
// its base64url.
func convoSlug(channelSlug, rootID string) string {
	switch {
	case rootID == "":
		return channelSlug
	case strings.ContainsFunc(rootID, func(r rune) bool { return !plainIDRune(r) }) || rootID[0] == '~':
		return channelSlug + ".~" + base64.RawURLEncoding.EncodeToString([]byte(rootID))
	}
	return channelSlug + "." + rootID
}

func plainIDRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_:", r)
}

// splitConvoSlug reads a conversation's path segment; a channel slug has
// no dot, so the first one ends it.
func splitConvoSlug(s string) (channelSlug, rootID string, ok bool) {
	channelSlug, rootID, _ = strings.Cut(s, ".")
	if enc, found := strings.CutPrefix(rootID, "~"); found {
		b, err := base64.RawURLEncoding.DecodeString(enc)
		if err != nil {
			return "", "", false
		}
		rootID = string(b)
	}
	return channelSlug, rootID, record.ValidSlug(channelSlug) && len(rootID) <= 1024
}

// fromConvo makes a page's conversation of c in channel ch.
func fromConvo(ch record.Channel, c *convo) conversation {
	msgs := make([]record.Message, len(c.msgs))
	for i, m := range c.msgs {
		msgs[i] = *m
	}
	r := c.root()
	return conversation{Channel: ch, Title: convoTitle(r), Slug: convoSlug(ch.Slug, r.ID), Msgs: msgs,
		Started: r.Timestamp, Last: c.last().Timestamp, Author: displayName(r), Where: "#" + ch.Name}
}

// convoOf finds the conversation of message id in channel ch (not of a
// thread kind): read from convoLookback messages before it to as far as
// a conversation may reach after it.
func (s *pages) convoOf(ch record.Channel, id string) (conversation, bool) {
	pos, err := s.eng.MessagePosition(ch.Slug, id)
	if err != nil {
		return conversation{}, false
	}
	from := max(pos-convoLookback, 0)
	msgs, _, err := s.eng.ChannelMessages(ch.Slug, from, pos-from+2*convoMax)
	if err != nil {
		return conversation{}, false
	}
	g := newGrouper()
	var found *convo
	for i := range msgs {
		c := g.add(&msgs[i])
		if msgs[i].ID == id {
			found = c
		}
	}
	if found == nil {
		return conversation{}, false
	}
	return fromConvo(ch, found), true
}

// threadConvo is a thread's conversation: its first convoMax messages.
func (s *pages) threadConvo(ch record.Channel) (conversation, bool) {
	msgs, total, err := s.eng.ChannelMessages(ch.Slug, 0, convoMax)
	if err != nil || len(msgs) == 0 {
		return conversation{}, false
	}
	title := ch.Name
	if title == "" || title == "Thread" {
		title = convoTitle(&msgs[0])
	}
	first, last := &msgs[0], &msgs[len(msgs)-1]
	if total > len(msgs) {
		if tail, _, err := s.eng.ChannelMessages(ch.Slug, total-1, 1); err == nil && len(tail) == 1 {
			last = &tail[0]
		}
	}
	return conversation{Channel: ch, Title: title, Slug: ch.Slug, Msgs: msgs, Total: total,
		Started: first.Timestamp, Last: last.Timestamp, Author: displayName(first), Where: "#" + ch.Name}, true
}

// recentConvos is how many recent conversations the home page lists, and
// recentRead how many of each channel's latest messages it reads to find
// them.
const (
	recentConvos  = 8
	recentRead    = 300
	recentThreads = 40 // the threads started last, of which the latest active are shown
)

// front is what the home page shows of the content a caller without
// credentials may see: the recent conversations, latest activity first,
// each with at least one reply, and the channels (not threads), busiest
// first.
type front struct {
	recent   []conversation
	channels []channelCount
}

// frontContent is the home page's content, computed once per write.
func (s *pages) frontContent() front {
	return s.front.get(s.contentSeq(), s.findFront)
}

func (s *pages) findFront() front {
	out := []conversation{}
	var chans []channelCount
	var threads []record.Channel
	for _, ch := range s.eng.Channels("", false) {
		if threadKind(ch.Kind) {
			threads = append(threads, ch)
			continue
		}
		_, total, err := s.eng.ChannelMessages(ch.Slug, 0, 0)
		if err != nil {
			continue
		}
		chans = append(chans, channelCount{Name: ch.Name, Slug: ch.Slug, Topic: ch.Topic, Messages: total})
		if total == 0 {
			continue
		}
		from := max(total-recentRead-convoLookback, 0)
		msgs, _, err := s.eng.ChannelMessages(ch.Slug, from, total-from)
		if err != nil {
			continue
		}
		for _, c := range group(msgs, total-recentRead-from) {
			if len(c.msgs) > 1 {
				out = append(out, fromConvo(ch, c))
			}
		}
	}
	slices.SortFunc(threads, func(a, b record.Channel) int { return b.CreatedAt.Compare(a.CreatedAt) })
	names := map[[2]string]string{}
	for _, ch := range threads[:min(len(threads), recentThreads)] {
		if c, ok := s.threadConvo(ch); ok && c.Replies() > 0 {
			c.Msgs = c.Msgs[:1] // the list shows the first message only
			key := [2]string{ch.SourceID, ch.ParentID}
			if _, ok := names[key]; !ok {
				if p, ok := s.eng.ChannelByID(ch.SourceID, ch.ParentID); ok && !p.Hidden {
					names[key] = "#" + p.Name
				}
			}
			c.Where = cmp.Or(names[key], "a thread")
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b conversation) int {
		return cmp.Or(b.Last.Compare(a.Last), strings.Compare(a.Slug, b.Slug))
	})
	slices.SortStableFunc(chans, func(a, b channelCount) int { return cmp.Compare(b.Messages, a.Messages) })
	return front{recent: out[:min(len(out), recentConvos)], channels: chans}
}

// eachConversation calls fn with every conversation of ch that has a
// reply (for the sitemap), reading the channel a stretch at a time.
func (s *pages) eachConversation(ch record.Channel, fn func(slug string, last time.Time)) {
	if threadKind(ch.Kind) {
		if c, ok := s.threadConvo(ch); ok {
			fn(c.Slug, c.Last)
		}
		return
	}
	const stretch = 2000
	emit := func(cs []*convo) {
		for _, c := range cs {
			if len(c.msgs) > 1 {
				fn(convoSlug(ch.Slug, c.root().ID), c.last().Timestamp)
			}
		}
	}
	g := newGrouper()
	for offset := 0; ; offset += stretch {
		msgs, total, err := s.eng.ChannelMessages(ch.Slug, offset, stretch)
		if err != nil {
			return
		}
		for i := range msgs {
			g.add(&msgs[i])
		}
		if offset+len(msgs) >= total || len(msgs) == 0 {
			emit(g.all)
			return
		}
		// The messages of the conversations forgotten stay referenced by
		// nothing once emitted; those kept point into this stretch.
		emit(g.forget(g.prev.Timestamp.Add(-convoSpan)))
	}
}
