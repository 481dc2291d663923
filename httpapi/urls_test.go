package httpapi

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
	"golang.org/x/net/html"
)

// odd is what an id or a name may hold that a URL must escape: its
// delimiters, HTML's, a space, a slash, a percent sign and non-ASCII.
const odd = `a?b#c&d"e<f g/h%2Fi+j;k'ü`

// pageLink is an <a> of a page: its href, text and the id of the message
// (<li id>) it is in.
type pageLink struct{ href, text, in string }

// pageLinks parses a page into its links and its elements' ids.
func pageLinks(t testing.TB, body []byte) (links []pageLink, ids map[string]bool) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]bool{}
	var walk func(n *html.Node, in string)
	walk = func(n *html.Node, in string) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" {
					ids[a.Val] = true
					if n.Data == "li" {
						in = a.Val
					}
				}
			}
			if n.Data == "a" {
				l := pageLink{in: in}
				for _, a := range n.Attr {
					if a.Key == "href" {
						l.href = a.Val
					}
				}
				var text func(*html.Node)
				text = func(c *html.Node) {
					if c.Type == html.TextNode {
						l.text += c.Data
					}
					for c := c.FirstChild; c != nil; c = c.NextSibling {
						text(c)
					}
				}
				text(n)
				links = append(links, l)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, "")
	return links, ids
}

// follow resolves a link of the page at pagePath as a browser does,
// checking that it is a well-formed URL (one fragment, nothing a URL must
// escape left bare), and fetches the page it leads to.
func follow(t testing.TB, ts *testServer, pagePath, href string) (*url.URL, resp) {
	t.Helper()
	if strings.Count(href, "#") > 1 || strings.ContainsAny(href, " \"<>'\\") || strings.ContainsFunc(href, func(r rune) bool { return r > 0x7e }) {
		t.Errorf("%s: link %q is not escaped", pagePath, href)
	}
	base, err := url.Parse(ts.url + pagePath)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := url.Parse(href)
	if err != nil {
		t.Fatalf("%s: link %q: %v", pagePath, href, err)
	}
	u := base.ResolveReference(ref)
	if u.Host != base.Host {
		t.Fatalf("%s: link %q leaves the site", pagePath, href)
	}
	target := *u
	target.Fragment, target.RawFragment = "", ""
	return u, htmlGet(t, ts, strings.TrimPrefix(target.String(), ts.url))
}

// findLink is the link of links whose text contains text, in the element
// in ("" for any).
func findLink(t testing.TB, page string, links []pageLink, text, in string) pageLink {
	t.Helper()
	for _, l := range links {
		if strings.Contains(l.text, text) && (in == "" || l.in == in) {
			return l
		}
	}
	t.Fatalf("%s: no link %q in %q", page, text, in)
	return pageLink{}
}

// TestPageLinksEscaped: ids and names with URL and HTML delimiters, spaces
// and non-ASCII make links that lead to their pages and their messages.
func TestPageLinksEscaped(t *testing.T) {
	ts := start(t)
	e := ts.eng
	if _, err := e.PutSource(record.Source{ID: "odd", Name: `Odd & "Source"`, Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	threadID, found := odd+"1", odd+"2"
	chs, err := e.PutChannels([]record.Channel{
		{SourceID: "odd", ID: "c " + odd, Name: `Q? #&"< ü Café`},
		{SourceID: "odd", ID: threadID, Name: `Why? #1 & "two" <3 ünï`, ParentID: "c " + odd, Kind: "thread"},
		{SourceID: "odd", ID: "o " + odd, Name: `Orphan? & <ü>`, ParentID: "c " + odd, Kind: "thread"},
	})
	if err != nil {
		t.Fatal(err)
	}
	chSlug, threadSlug, orphanSlug := chs[0].Slug, chs[1].Slug, chs[2].Slug
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var msgs []record.Message
	for i := range 150 {
		m := record.Message{SourceID: "odd", ChannelID: "c " + odd, ID: fmt.Sprintf("m%d", i), Author: fmt.Sprint("u", i%2),
			Content: fmt.Sprintf("message %d", i), Timestamp: t0.Add(time.Duration(i) * time.Minute)}
		switch i {
		case 0:
			m.ID = odd // replied to on its page and from the next
		case 1:
			m.ReplyTo = odd
		case 5:
			m.ID = threadID // starts the thread
		case 120:
			m.ReplyTo, m.Content = odd, "a late answer"
		case 130:
			m.ID, m.Content = found, "the needle is here"
		}
		msgs = append(msgs, m)
	}
	msgs = append(msgs, record.Message{SourceID: "odd", ChannelID: threadID, ID: "t " + odd, Author: "ana", Content: "in the thread", Timestamp: t0.Add(time.Hour)})
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutDocuments([]record.Document{{Title: `Doc? #&"< ü`, Key: "doc.md", Format: record.FormatMarkdown, Content: "a needle document"}}); err != nil {
		t.Fatal(err)
	}

	// Page 1 of the channel: each message's element and the anchors of its
	// own link and of a reply to it; the thread a message starts.
	chPath := "/c/" + chSlug
	r := htmlGet(t, ts, chPath)
	if r.status != 200 {
		t.Fatalf("%s: %d", chPath, r.status)
	}
	links, ids := pageLinks(t, r.body)
	for _, id := range []string{odd, threadID} {
		if !ids["m-"+id] {
			t.Errorf("%s: no element m-%s", chPath, id)
		}
	}
	for _, l := range []pageLink{
		findLink(t, chPath, links, "2026-03-01 09:00", "m-"+odd), // the message's own link
		findLink(t, chPath, links, "in reply", "m-m1"),
	} {
		u, _ := follow(t, ts, chPath, l.href)
		if u.Path != chPath || u.RawQuery != "" || u.Fragment != "m-"+odd {
			t.Errorf("%s: %q leads to %s#%s", chPath, l.href, u.Path, u.Fragment)
		}
	}
	u, tr := follow(t, ts, chPath, findLink(t, chPath, links, "Thread →", "m-"+threadID).href)
	if u.Path != "/t/"+threadSlug || tr.status != 200 || !strings.Contains(string(tr.body), "in the thread") {
		t.Fatalf("%s: the thread link leads to %s (%d)", chPath, u, tr.status)
	}
	if u, r := follow(t, ts, chPath, findLink(t, chPath, links, "Orphan?", "").href); u.Path != "/c/"+orphanSlug || r.status != 200 {
		t.Errorf("%s: the list of threads links %s (%d)", chPath, u, r.status)
	}
	// The thread's page leads back to its channel.
	tlinks, tids := pageLinks(t, tr.body)
	if !tids["m-t "+odd] {
		t.Errorf("thread page: no element m-t %s", odd)
	}
	if u, back := follow(t, ts, u.Path, findLink(t, u.Path, tlinks, "#Q?", "").href); u.Path != chPath || back.status != 200 {
		t.Errorf("the thread page's channel link leads to %s (%d)", u, back.status)
	}

	// Page 2: a reply to a message of page 1 finds its page by ?m= and its
	// element by the anchor.
	p2 := chPath + "?page=2"
	r = htmlGet(t, ts, p2)
	links, _ = pageLinks(t, r.body)
	u, target := follow(t, ts, p2, findLink(t, p2, links, "in reply", "m-m120").href)
	_, ids = pageLinks(t, target.body)
	if u.Path != chPath || u.Query().Get("m") != odd || u.Fragment != "m-"+odd || target.status != 200 || !ids[u.Fragment] {
		t.Errorf("%s: the reply link leads to %s (%d)", p2, u, target.status)
	}

	// The home page's results link a message's conversation and a
	// document; the conversation links the message's place in its channel.
	home := "/?q=needle"
	r = htmlGet(t, ts, home)
	links, _ = pageLinks(t, r.body)
	u, target = follow(t, ts, home, findLink(t, home, links, "in #Q?", "").href)
	clinks, ids := pageLinks(t, target.body)
	if u.Path != "/t/"+convoSlug(chSlug, found) || u.Fragment != "m-"+found || target.status != 200 || !ids["m-"+found] {
		t.Errorf("home: the message result leads to %s (%d)", u, target.status)
	}
	u, target = follow(t, ts, u.Path, findLink(t, u.Path, clinks, "See it in #Q?", "").href)
	_, ids = pageLinks(t, target.body)
	if u.Path != chPath || u.Query().Get("m") == "" || u.Fragment != "m-"+u.Query().Get("m") || target.status != 200 || !ids[u.Fragment] {
		t.Errorf("the conversation's channel link leads to %s (%d)", u, target.status)
	}
	u, target = follow(t, ts, home, findLink(t, home, links, `Doc? #&"< ü`, "").href)
	if !strings.HasPrefix(u.Path, "/d/") || target.status != 200 || !strings.Contains(string(target.body), "needle document") {
		t.Errorf("home: the document result leads to %s (%d)", u, target.status)
	}

	// /sources lists the channel, its orphan thread and the document.
	r = htmlGet(t, ts, "/sources")
	links, _ = pageLinks(t, r.body)
	for text, want := range map[string]string{"#Q?": chPath, "Orphan?": "/c/" + orphanSlug, "Doc?": ""} {
		u, target := follow(t, ts, "/sources", findLink(t, "/sources", links, text, "").href)
		if want != "" && u.Path != want || target.status != 200 {
			t.Errorf("/sources: %q leads to %s (%d)", text, u, target.status)
		}
	}
}

// TestLinkFuncs: the template functions escape what they are given, whatever
// it holds, and spell ordinary links as the templates did.
func TestLinkFuncs(t *testing.T) {
	tpl := template.Must(template.New("").Funcs(linkFuncs()).Parse(
		`{{define "new"}}<a href="{{channelHref .S}}"></a><a href="{{documentHref .S}}"></a><a href="{{messageHref .S .ID}}"></a><li id="{{messageID .ID}}"><a href="{{anchorHref .ID}}"></a></li>{{end}}` +
			`{{define "old"}}<a href="/c/{{.S}}"></a><a href="/d/{{.S}}"></a><a href="/c/{{.S}}?m={{.ID}}#m-{{.ID}}"></a><li id="m-{{.ID}}"><a href="#m-{{.ID}}"></a></li>{{end}}`))
	render := func(name, slug, id string) []byte {
		var b bytes.Buffer
		if err := tpl.ExecuteTemplate(&b, name, map[string]string{"S": slug, "ID": id}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// Ordinary slugs and ids: the same HTML as before.
	for _, c := range [][2]string{{"general", "m200"}, {"help-2", "1712345678.123456"}, {"a-b-c", "123456789012345678"}} {
		if n, o := render("new", c[0], c[1]), render("old", c[0], c[1]); !bytes.Equal(n, o) {
			t.Errorf("%q %q:\n%s\nwas\n%s", c[0], c[1], n, o)
		}
	}
	// Anything else: links that name it exactly.
	for _, s := range []string{odd, "sp ace", "?q", "#f", "&amp;", `"><script>`, "../x", "ünï", "%41", "javascript:alert(1)"} {
		b := render("new", s, s)
		links, ids := pageLinks(t, b)
		if len(links) != 4 || !ids["m-"+s] {
			t.Fatalf("%q: %s", s, b)
		}
		for i, prefix := range []string{"/c/", "/d/", "/c/", ""} {
			href := links[i].href
			if strings.Count(href, "#") > 1 || strings.ContainsAny(href, " \"<>'") {
				t.Errorf("%q: link %q is not escaped", s, href)
			}
			u, err := url.Parse(href)
			if err != nil {
				t.Fatalf("%q: %q: %v", s, href, err)
			}
			if prefix != "" {
				seg, ok := strings.CutPrefix(u.EscapedPath(), prefix)
				if got, err := url.PathUnescape(seg); !ok || err != nil || got != s || strings.Contains(seg, "/") {
					t.Errorf("%q: link %q names %q", s, href, got)
				}
			} else if u.Path != "" {
				t.Errorf("%q: anchor %q has a path", s, href)
			}
			wantFrag := ""
			if i >= 2 {
				wantFrag = "m-" + s
			}
			if u.Fragment != wantFrag {
				t.Errorf("%q: link %q: fragment %q", s, href, u.Fragment)
			}
			if wantQuery := i == 2; wantQuery != (u.RawQuery != "") || wantQuery && u.Query().Get("m") != s {
				t.Errorf("%q: link %q: query %q", s, href, u.RawQuery)
			}
		}
	}
}
