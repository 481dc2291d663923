package httpapi

import (
	"html/template"
	"net/url"
	"strings"

	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// The URLs of Sift's pages are spelled here and nowhere else: the store and
// the retrieval layer give ids and slugs, these functions make them links.
// base is BASE_URL without its trailing slash; "" gives a path within the
// site. A platform's own links (a Discord or Slack message, a crawled
// page's origin) are data and are not made here.

// The routes of the pages (routes.go serves them).
const (
	channelRoute  = "/c/{slug}"
	documentRoute = "/d/{slug}"
	convoRoute    = "/t/{slug}"
)

// Every piece of a URL made here is escaped for its place in it (a slug or
// an id in a path segment or a fragment by url.PathEscape, in a query by
// url.QueryEscape), so what these functions return is a URL as is: the
// template functions (linkFuncs) hand it to html/template as a
// template.URL, and a slug or id never ends a path or starts a query or a
// fragment. Slugs are ASCII letters, digits and hyphens (record.ValidSlug),
// which escaping leaves as they are.

// channelURL is the first page of a channel: base/c/{slug}.
func channelURL(base, slug string) string { return base + "/c/" + url.PathEscape(slug) }

// conversationURL is the page of a conversation (conversations.go):
// base/t/{slug} for a thread, base/t/{slug}.{id} for the conversation a
// message of channel slug starts.
func conversationURL(base, slug, id string) string {
	return base + "/t/" + url.PathEscape(convoSlug(slug, id))
}

// DocumentURL is the page of a document: base/d/{slug}.
func DocumentURL(base, slug string) string { return base + "/d/" + url.PathEscape(slug) }

// MessageURL is the permalink of a message: the page of its channel that
// holds it (?m=) at its anchor, base/c/{slug}?m={id}#m-{id}.
func MessageURL(base, channelSlug, id string) string {
	return channelURL(base, channelSlug) + messageRef(id)
}

// messageElementID is the HTML id of a message's element on its channel's
// page, which its anchor names.
func messageElementID(id string) string { return "m-" + id }

// messageAnchor is the fragment of a message on its channel's page: #m-{id}.
func messageAnchor(id string) string { return "#" + url.PathEscape(messageElementID(id)) }

// messageRef links, from a page of its channel, a message on another page
// of it: ?m={id}#m-{id}.
func messageRef(id string) string { return "?m=" + url.QueryEscape(id) + messageAnchor(id) }

// linkFuncs are the template functions that make the pages' links, as
// paths within the site; the templates spell no page URL themselves.
func linkFuncs() template.FuncMap {
	return template.FuncMap{
		// channelHref is a channel's page: /c/{slug}.
		"channelHref": func(slug string) template.URL { return template.URL(channelURL("", slug)) },
		// documentHref is a document's page: /d/{slug}.
		"documentHref": func(slug string) template.URL { return template.URL(DocumentURL("", slug)) },
		// messageHref is a message's permalink: /c/{slug}?m={id}#m-{id}.
		"messageHref": func(slug, id string) template.URL { return template.URL(MessageURL("", slug, id)) },
		// convoHref is a conversation's page: /t/{slug}.
		"convoHref": func(slug string) template.URL { return template.URL(conversationURL("", slug, "")) },
		// anchorHref is a message's anchor on its page: #m-{id}.
		"anchorHref": func(id string) template.URL { return template.URL(messageAnchor(id)) },
		// messageID is the id attribute a message's anchor names: m-{id}.
		"messageID": messageElementID,
	}
}

// documentURL is a document's origin, or its page here.
func documentURL(base string, d *record.Document) string {
	if d.URL != "" {
		return d.URL
	}
	return DocumentURL(base, d.Slug)
}

// HitLinks returns what names a semantic hit's links at base (for
// ask.Options.Link): its deep link and Sift's own page of it.
func HitLinks(base string) func(h *semantic.Hit) (url, page string) {
	base = strings.TrimRight(base, "/")
	return func(h *semantic.Hit) (string, string) { return hitURL(base, h), hitPageURL(base, h) }
}

// hitURL links a semantic hit to its origin: a document passage to its
// origin URL or its page, with the text fragment that locates it; a
// conversation to its first message's platform link, else to its anchor on
// the channel page.
func hitURL(base string, h *semantic.Hit) string {
	if h.Type == "document" {
		u := h.DocURL
		if u == "" {
			u = DocumentURL(base, h.DocSlug)
		}
		return withFragment(u, h.Fragment)
	}
	if h.MessageURL != "" {
		return h.MessageURL
	}
	return channelURL(base, h.ChannelSlug) + messageAnchor(h.MessageID)
}

// hitPageURL links a semantic hit to Sift's own page of it: a document
// passage to its page with its text fragment, a conversation to the page of
// the conversation its first message belongs to.
func hitPageURL(base string, h *semantic.Hit) string {
	if h.Type == "document" {
		return withFragment(DocumentURL(base, h.DocSlug), h.Fragment)
	}
	return conversationURL(base, h.ChannelSlug, h.MessageID) + messageAnchor(h.MessageID)
}

// withFragment adds a "#:~:text=…" fragment directive to u. A URL that has
// a fragment keeps it, the directive following its ":~:" delimiter
// ("page#section:~:text=…"); a directive u already had is replaced.
func withFragment(u, frag string) string {
	if frag == "" {
		return u
	}
	base, old, ok := strings.Cut(u, "#")
	if !ok {
		return u + frag
	}
	old, _, _ = strings.Cut(old, ":~:")
	return base + "#" + old + strings.TrimPrefix(frag, "#")
}
