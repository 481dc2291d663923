package httpapi

import (
	"fmt"
	"html/template"
	"strconv"
	"time"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// channelData is a page of a channel.
type channelData struct {
	Head    head
	Channel record.Channel
	Parent  *record.Channel
	Threads []threadView // the threads no message on this page starts
	Source  record.Source
	Msgs    []messageView
	Total   int
	Pager   pager
	Pager2  pager
}

// threadView is a thread in a channel page's list of threads.
type threadView struct {
	Slug, Name string
	Orphan     bool // its starting message is on no page
}

// messageView is a message as the channel template shows it, prepared in
// Go: flat fields and formatted times (the template's reflection on
// embedded structs and function calls per message was most of a page's
// cost).
type messageView struct {
	ID, Who, Handle string
	ISO, When       string
	Clock           string // the time of day, shown beside a grouped message
	Cont            bool   // continues its author's group: no author line
	Edited          bool
	ReplyHref       string // the message it answers: on this page, or found by ?m=
	Body            template.HTML
	Thread          string // slug of the thread this message started, if any
	Convo           string // slug of the conversation it starts, if it has replies
	Replies         int    // how many
	Avatar          avatar

	m *record.Message
}

// groupGap is how long after an author's message their next one still
// joins it under one author line, as chat clients group them.
const groupGap = 7 * time.Minute

// channelPage serves GET /c/{slug}[?page=N | ?m=ID]: a page of a
// channel's messages, oldest first. ?m= finds the page of a message.
func (s *pages) channelPage(ctx *fasthttp.RequestCtx) {
	slug, ok := s.slugParam(ctx)
	if !ok {
		return
	}
	ch, ok := s.eng.ChannelBySlug(slug)
	if !ok || ch.Hidden {
		s.notFound(ctx)
		return
	}
	page := 1
	if m := string(ctx.QueryArgs().Peek("m")); m != "" {
		if pos, err := s.eng.MessagePosition(slug, m); err == nil {
			page = pos/messagesPerPage + 1
		}
	} else if p := ctx.QueryArgs().Peek("page"); p != nil {
		n, err := strconv.Atoi(string(p))
		if err != nil || n < 1 {
			s.notFound(ctx)
			return
		}
		page = n
	}
	msgs, total, err := s.eng.ChannelMessages(slug, (page-1)*messagesPerPage, messagesPerPage)
	if err != nil {
		s.notFound(ctx)
		return
	}
	pages := max(1, (total+messagesPerPage-1)/messagesPerPage)
	if page > pages {
		s.notFound(ctx)
		return
	}
	src, _ := s.eng.Source(ch.SourceID)
	data := channelData{Channel: ch, Source: src, Total: total,
		Pager:  pager{URL: channelURL("", slug), Page: page, Pages: pages, Label: "Pages"},
		Pager2: pager{URL: channelURL("", slug), Page: page, Pages: pages, Label: "Pages (end of list)"}}
	threads := s.channelThreads(&data, msgs)
	data.Msgs = messageViews(msgs, threads, dialectOf(src.Type), "")
	if !threadKind(ch.Kind) {
		s.markConversations(slug, (page-1)*messagesPerPage, data.Msgs)
	}
	canonical := channelURL(s.opts.BaseURL, slug)
	if page > 1 {
		canonical += "?page=" + strconv.Itoa(page)
	}
	name := "#" + ch.Name
	title := name
	if page > 1 {
		title += fmt.Sprintf(" (page %d)", page)
	}
	desc := fmt.Sprintf("%s messages in %s on %s.", thousands(total), name, src.Name)
	if ch.Topic != "" {
		desc = ch.Topic + " — " + desc
	} else if len(msgs) > 0 {
		desc = msgs[0].Content + " — " + desc
	}
	data.Head = head{
		Title: s.title(title, src.Name), Description: chatDescription(desc), Canonical: canonical,
		Type: "article", JSONLD: s.partOfSite(channelJSONLD(canonical, name, data.Msgs)), Script: true,
	}
	// The page also shows counts and links that other writes change: it is
	// dated by the engine's last change, not by its own messages.
	s.render(ctx, "channel.html", pageOpts{modified: s.lastChange()}, data)
}

// markConversations links each message of a channel page that starts a
// conversation with replies to the conversation's page; the page's
// messages start at offset in the channel.
func (s *pages) markConversations(slug string, offset int, views []messageView) {
	if len(views) == 0 {
		return
	}
	from := max(offset-convoLookback, 0)
	msgs, _, err := s.eng.ChannelMessages(slug, from, offset-from+len(views)+convoMax)
	if err != nil {
		return
	}
	replies := map[string]int{}
	for _, c := range group(msgs, offset-from) {
		if len(c.msgs) > 1 {
			replies[c.root().ID] = len(c.msgs) - 1
		}
	}
	for i := range views {
		if n := replies[views[i].ID]; n > 0 {
			views[i].Convo, views[i].Replies = convoSlug(slug, views[i].ID), n
		}
	}
}

// channelThreads finds the channel's parent and its threads: those a
// message of msgs starts are returned (thread id → slug) for the message
// to link; the others, orphans first, are listed on the page.
func (s *pages) channelThreads(data *channelData, msgs []record.Message) map[string]string {
	ch := &data.Channel
	orphan := map[string]bool{}
	for _, t := range s.eng.OrphanThreads(ch.SourceID, false) {
		orphan[t.ID] = t.ParentID == ch.ID
	}
	onPage := make(map[string]bool, len(msgs))
	for i := range msgs {
		onPage[msgs[i].ID] = true
	}
	threads := map[string]string{}
	var others []threadView
	for _, c := range s.eng.Channels(ch.SourceID, false) {
		switch {
		case c.ParentID == ch.ID && c.ID != ch.ID && onPage[c.ID] && !orphan[c.ID]:
			threads[c.ID] = c.Slug
		case c.ParentID == ch.ID && c.ID != ch.ID && orphan[c.ID]:
			data.Threads = append(data.Threads, threadView{Slug: c.Slug, Name: c.Name, Orphan: true})
		case c.ParentID == ch.ID && c.ID != ch.ID:
			others = append(others, threadView{Slug: c.Slug, Name: c.Name})
		case ch.ParentID != "" && c.ID == ch.ParentID:
			p := c
			data.Parent = &p
		}
	}
	data.Threads = append(data.Threads, others...)
	return threads
}

// messageViews prepares a page's messages for the template, grouping each
// author's consecutive messages. A reply to a message not among msgs links
// it on its channel's page: channelSlug's when the page is not a page of
// that channel.
func messageViews(msgs []record.Message, threads map[string]string, d chatDialect, channelSlug string) []messageView {
	ids := make(map[string]bool, len(msgs))
	for i := range msgs {
		ids[msgs[i].ID] = true
	}
	out := make([]messageView, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		ts := m.Timestamp.UTC()
		v := messageView{
			ID: m.ID, Who: displayName(m), ISO: ts.Format(time.RFC3339), Avatar: avatarOf(m),
			When: ts.Format("2006-01-02 15:04"), Clock: ts.Format("15:04"), Edited: !m.EditedAt.IsZero(),
			Body: renderChat(m.Content, d), Thread: threads[m.ID], m: m,
		}
		switch {
		case m.ReplyTo != "" && ids[m.ReplyTo]:
			v.ReplyHref = messageAnchor(m.ReplyTo)
		case m.ReplyTo != "" && channelSlug != "":
			v.ReplyHref = MessageURL("", channelSlug, m.ReplyTo)
		case m.ReplyTo != "":
			v.ReplyHref = messageRef(m.ReplyTo)
		}
		if m.AuthorName != "" && m.AuthorName != m.Author {
			v.Handle = m.Author
		}
		v.Cont = i > 0 && continues(&out[i-1], &v)
		out = append(out, v)
	}
	return out
}

// continues reports whether v joins prev's group: the same author, soon
// after, neither a reply (its header names the message answered) nor
// after a message that started a thread (whose link ends the group).
func continues(prev, v *messageView) bool {
	gap := v.m.Timestamp.Sub(prev.m.Timestamp)
	return prev.m.Author == v.m.Author && prev.Who == v.Who && gap >= 0 && gap <= groupGap &&
		v.ReplyHref == "" && prev.Thread == ""
}

// channelJSONLD describes a channel page as a schema.org discussion: the
// first message is the posting, the others its comments.
func channelJSONLD(pageURL, name string, msgs []messageView) map[string]any {
	if len(msgs) == 0 {
		return nil
	}
	first := msgs[0].m
	post := map[string]any{
		"@context": "https://schema.org", "@type": "DiscussionForumPosting",
		"headline": name, "url": pageURL, "author": person(first),
		"datePublished": first.Timestamp.UTC().Format(time.RFC3339),
		"text":          textCut(first.Content, 2000),
	}
	var comments []any
	for i := range msgs[1:min(len(msgs), 21)] {
		m := msgs[i+1].m
		comments = append(comments, map[string]any{
			"@type": "Comment", "author": person(m), "datePublished": m.Timestamp.UTC().Format(time.RFC3339),
			"text": textCut(m.Content, 500), "url": pageURL + messageAnchor(m.ID),
		})
	}
	if len(comments) > 0 {
		post["comment"] = comments
		post["commentCount"] = len(msgs) - 1
	}
	return post
}

// channelItem is a channel on /sources, with its orphan threads.
type channelItem struct {
	record.Channel
	Threads []record.Channel
}

// sourceChannels lists a source's channels for /sources, each with the
// threads no message leads to (the store's OrphanThreads), which are on no
// other page; those whose channel is not listed come apart.
func (s *pages) sourceChannels(v *sourceView) {
	at := map[string]int{}
	for _, c := range s.eng.Channels(v.ID, false) {
		if c.ParentID == "" {
			at[c.ID] = len(v.Channels)
			v.Channels = append(v.Channels, channelItem{Channel: c})
		}
	}
	for _, t := range s.eng.OrphanThreads(v.ID, false) {
		if i, ok := at[t.ParentID]; ok {
			v.Channels[i].Threads = append(v.Channels[i].Threads, t)
		} else {
			v.Threads = append(v.Threads, t)
		}
	}
}
