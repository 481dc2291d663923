package httpapi

import (
	"cmp"
	"fmt"
	"time"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// conversationData is a conversation's page.
type conversationData struct {
	Head       head
	C          conversation
	Source     record.Source
	Parent     *record.Channel // a thread's channel
	Msgs       []messageView
	Replies    int
	InHref     string // the conversation's place in its channel
	OnPlatform string // its first message (or its channel) on the platform
	More       string // the rest of a thread too long for this page
}

// conversationPage serves GET /t/{slug}: a thread, or a message and the
// replies that follow it (conversations.go). A message that is not the
// first of its conversation is sent to the conversation's page.
func (s *pages) conversationPage(ctx *fasthttp.RequestCtx) {
	slug, id, ok := splitConvoSlug(pathParam(ctx, "slug"))
	if !ok {
		s.notFound(ctx)
		return
	}
	ch, ok := s.eng.ChannelBySlug(slug)
	if !ok || ch.Hidden {
		s.notFound(ctx)
		return
	}
	var c conversation
	switch {
	case threadKind(ch.Kind) && id != "":
		redirect(ctx, conversationURL("", slug, "")+messageAnchor(id), fasthttp.StatusMovedPermanently)
		return
	case threadKind(ch.Kind):
		if c, ok = s.threadConvo(ch); !ok {
			// No message yet: the channel's page says so, until one comes.
			redirect(ctx, channelURL("", slug), fasthttp.StatusFound)
			return
		}
	case id == "":
		redirect(ctx, channelURL("", slug), fasthttp.StatusMovedPermanently)
		return
	default:
		c, ok = s.convoOf(ch, id)
		if ok && c.Msgs[0].ID != id {
			redirect(ctx, conversationURL("", c.Slug, "")+messageAnchor(id), fasthttp.StatusMovedPermanently)
			return
		}
	}
	if !ok {
		s.notFound(ctx)
		return
	}
	src, _ := s.eng.Source(ch.SourceID)
	data := conversationData{C: c, Source: src, Replies: c.Replies(),
		Msgs: messageViews(c.Msgs, nil, dialectOf(src.Type), ch.Slug)}
	root := &c.Msgs[0]
	data.OnPlatform = cmp.Or(root.URL, ch.URL)
	if threadKind(ch.Kind) {
		data.InHref = channelURL("", ch.Slug)
		if p, ok := s.eng.ChannelByID(ch.SourceID, ch.ParentID); ok && !p.Hidden {
			data.Parent = &p
		}
		if c.Total > len(c.Msgs) {
			data.More = channelURL("", ch.Slug) + fmt.Sprintf("?page=%d", len(c.Msgs)/messagesPerPage+1)
		}
	} else {
		data.InHref = MessageURL("", ch.Slug, root.ID)
	}
	canonical := conversationURL(s.opts.BaseURL, c.Slug, "")
	desc := fmt.Sprintf("%s in #%s on %s.", count(data.Replies, "reply"), ch.Name, src.Name)
	data.Head = head{
		Title: s.title(c.Title, "#"+ch.Name), Canonical: canonical, Type: "article", Script: true,
		Description: chatDescription(root.Content + " — " + desc),
		JSONLD:      s.partOfSite(conversationJSONLD(canonical, &c, data.Msgs)),
	}
	s.render(ctx, "conversation.html", pageOpts{modified: s.lastChange()}, data)
}

// conversationJSONLD describes a conversation for search engines: a
// question with replies as a QAPage, anything else as a
// DiscussionForumPosting with its comments.
func conversationJSONLD(pageURL string, c *conversation, msgs []messageView) map[string]any {
	root := &c.Msgs[0]
	if !asks(root.Content) || len(msgs) < 2 {
		return channelJSONLD(pageURL, c.Title, msgs)
	}
	var answers []any
	for _, v := range msgs[1:min(len(msgs), 21)] {
		m := v.m
		answers = append(answers, map[string]any{
			"@type": "Answer", "text": textCut(m.Content, 1000), "author": person(m),
			"datePublished": m.Timestamp.UTC().Format(time.RFC3339), "url": pageURL + messageAnchor(m.ID),
		})
	}
	return map[string]any{
		"@context": "https://schema.org", "@type": "QAPage", "url": pageURL,
		"mainEntity": map[string]any{
			"@type": "Question", "name": c.Title, "text": textCut(root.Content, 2000),
			"author": person(root), "datePublished": root.Timestamp.UTC().Format(time.RFC3339),
			"answerCount": c.Replies(), "suggestedAnswer": answers,
		},
	}
}

// person is a message's author for schema.org.
func person(m *record.Message) map[string]any {
	return map[string]any{"@type": "Person", "name": displayName(m)}
}

// redirect answers with a redirect to loc, a path within the site that may
// carry a fragment (fasthttp's Redirect drops it, and the fragment is what
// lands the reader on the message).
func redirect(ctx *fasthttp.RequestCtx, loc string, status int) {
	ctx.Response.Header.Set("Location", loc)
	ctx.SetStatusCode(status)
}
