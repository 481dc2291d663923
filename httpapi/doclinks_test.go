package httpapi

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// linkedDocs link to each other the way files in a repository do: by
// relative path, with and without ./, ../ and the extension, and with
// fragments written for GitHub's heading ids.
var linkedDocs = map[string]string{
	"guide.md": `# Guide

Read [the options](reference.md#options--flags), [step 2](./upgrading.md#step-2-check-your-cron-expressions),
[the second FAQ](../docs/reference.md#faq-1), [what is new](upgrading#whats-new-in-20) and
[the flag](reference.md#--verbose-flag). [Up](#guide-intro), [main](upgrading.md#main).

Elsewhere: [missing](missing.md), [a site](https://example.com/x.md), [mail](mailto:a@example.com).

## Guide intro

Back to [the reference][ref].

[ref]: ./reference.md
`,
	"reference.md": `# Reference

## Options & flags

See [the guide](guide.md#guide-intro).

## FAQ

## FAQ

Still [upgrading](../upgrading.md#main)?

## ` + "`--verbose`" + ` flag

[Top](#options--flags)
`,
	"upgrading.md": `# Upgrading

## Main

## Step 2: check your cron expressions

Back to [the guide](guide) or [the FAQ](./reference#faq).

## What's new in 2.0?

Also the [Main section](#main).
`,
}

func TestDocumentLinks(t *testing.T) {
	ts := start(t)
	body, ct := multipartBody(t, linkedDocs)
	if r := ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1]); r.status != 201 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	slugs := map[string]string{}
	for _, d := range ts.eng.SourceDocuments(record.UploadsSourceID) {
		slugs[d.Key] = d.Slug
	}
	if len(slugs) != 3 {
		t.Fatalf("stored %v", slugs)
	}
	c := newLinkChecker(t, ts)
	for key, slug := range slugs {
		p := c.page("/d/" + slug)
		if p == nil {
			t.Fatalf("%s: no page", key)
		}
		for _, href := range p.links {
			if href == "missing.md" || strings.Contains(href, ":") {
				continue // not resolved (checked below), another site, mail
			}
			c.follow("/d/"+slug, href)
		}
	}
	// Exactly these links resolve; the rest stay as written.
	want := map[string][]string{
		"guide.md": {
			"/d/" + slugs["reference.md"] + "#options--flags", "/d/" + slugs["upgrading.md"] + "#step-2-check-your-cron-expressions",
			"/d/" + slugs["reference.md"] + "#faq-1", "/d/" + slugs["upgrading.md"] + "#whats-new-in-20",
			"/d/" + slugs["reference.md"] + "#--verbose-flag", "#guide-intro", "/d/" + slugs["upgrading.md"] + "#h-main",
			"missing.md", "https://example.com/x.md", "mailto:a@example.com", "/d/" + slugs["reference.md"],
		},
		"reference.md": {"/d/" + slugs["guide.md"] + "#guide-intro", "/d/" + slugs["upgrading.md"] + "#h-main", "#options--flags"},
		"upgrading.md": {"/d/" + slugs["guide.md"], "/d/" + slugs["reference.md"] + "#faq", "#h-main"},
	}
	ids := map[string][]string{
		"guide.md":     {"guide-intro"},
		"reference.md": {"options--flags", "faq", "faq-1", "--verbose-flag"},
		"upgrading.md": {"h-main", "step-2-check-your-cron-expressions", "whats-new-in-20"},
	}
	for key, slug := range slugs {
		p := c.page("/d/" + slug)
		if !slices.Equal(p.article, want[key]) {
			t.Errorf("%s links\n got %q\nwant %q", key, p.article, want[key])
		}
		if got := p.headings; !slices.Equal(got, ids[key]) {
			t.Errorf("%s heading ids %q, want %q", key, got, ids[key])
		}
	}
	if s := string(ts.get(t, "/d/"+slugs["guide.md"]).body); !strings.Contains(s, `<a href="/d/`+slugs["reference.md"]+`#faq-1">`) ||
		!strings.Contains(s, `<a href="https://example.com/x.md" rel="nofollow">`) {
		t.Errorf("guide's links are not rendered as expected:\n%s", s)
	}
}

// TestCrawledPageLinks: in a page with a URL, a link whose absolute URL
// is another stored page's leads to that page here.
func TestCrawledPageLinks(t *testing.T) {
	ts := start(t)
	if _, err := ts.eng.PutSource(record.Source{ID: "site", Name: "Site", Type: "web", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	page := func(u, content string) record.Document {
		return record.Document{SourceID: "site", Key: u, URL: u, Title: u, Content: content, Format: record.FormatMarkdown}
	}
	docs, err := ts.eng.PutDocuments([]record.Document{
		page("https://wren.example/docs/a", "[b](b#setup), [b again](https://wren.example/docs/b), [c](../c), [up](/docs/a#intro), [other](https://other.example/docs/b)\n\n## Intro"),
		page("https://wren.example/docs/b", "## Setup"),
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newLinkChecker(t, ts)
	p := c.page("/d/" + docs[0].Slug)
	want := []string{"/d/" + docs[1].Slug + "#setup", "/d/" + docs[1].Slug, "../c", "/d/" + docs[0].Slug + "#intro", "https://other.example/docs/b"}
	if !slices.Equal(p.article, want) {
		t.Fatalf("links\n got %q\nwant %q", p.article, want)
	}
	for _, href := range p.article {
		if strings.HasPrefix(href, "/d/") {
			c.follow("/d/"+docs[0].Slug, href)
		}
	}
}

// TestDemoDocumentLinks: every link on the demo documents' pages leads to
// a page that answers 200 and holds the fragment's id.
func TestDemoDocumentLinks(t *testing.T) {
	eng := demoEngine(t)
	ts := serve(t, eng, nil, Options{})
	c := newLinkChecker(t, ts)
	docs := eng.SourceDocuments(demo.DocsSource)
	if len(docs) < 10 {
		t.Fatalf("%d demo documents", len(docs))
	}
	crossLinks := 0
	for _, d := range docs {
		p := c.page("/d/" + d.Slug)
		for _, href := range p.links {
			if u, _ := url.Parse(href); u.Scheme != "" || u.Host != "" {
				continue
			}
			c.follow("/d/"+d.Slug, href)
		}
		for _, href := range p.article {
			if strings.HasPrefix(href, "/d/") {
				crossLinks++
			}
			if strings.Contains(href, ".md") {
				t.Errorf("%s: link %q not resolved", d.Key, href)
			}
		}
	}
	if crossLinks < 40 {
		t.Errorf("only %d links between demo documents", crossLinks)
	}
}

// linkChecker fetches pages once and checks links between them.
type linkChecker struct {
	t     *testing.T
	ts    *testServer
	pages map[string]*linkedPage // by path; nil: not 200
}

type linkedPage struct {
	ids      map[string]bool
	links    []string // every <a href> on the page
	article  []string // those in the document's body
	headings []string // the ids of the body's headings
}

func newLinkChecker(t *testing.T, ts *testServer) *linkChecker {
	return &linkChecker{t: t, ts: ts, pages: map[string]*linkedPage{}}
}

// follow checks that href on the page at from answers 200 and, with a
// fragment, that the target holds an element with that id.
func (c *linkChecker) follow(from, href string) {
	c.t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		c.t.Errorf("%s: link %q: %v", from, href, err)
		return
	}
	target := (&url.URL{Path: from}).ResolveReference(u).Path // as a browser does
	p := c.page(target)
	if p == nil {
		c.t.Errorf("%s: link %q does not answer 200", from, href)
		return
	}
	if u.Fragment != "" && !p.ids[u.Fragment] {
		c.t.Errorf("%s: link %q: no id %q on %s", from, href, u.Fragment, target)
	}
}

func (c *linkChecker) page(path string) *linkedPage {
	c.t.Helper()
	if p, ok := c.pages[path]; ok {
		return p
	}
	r := htmlGet(c.t, c.ts, path)
	var p *linkedPage
	if r.status == 200 {
		p = parseLinkedPage(c.t, r.body)
	}
	c.pages[path] = p
	return p
}

func parseLinkedPage(t *testing.T, body []byte) *linkedPage {
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	p := &linkedPage{ids: map[string]bool{}}
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		if n.Type == html.ElementNode {
			if id := attr(n, "id"); id != "" {
				p.ids[id] = true
				if inBody && len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6' {
					p.headings = append(p.headings, id)
				}
			}
			if n.Data == "a" && hasAttr(n, "href") {
				href := attr(n, "href")
				p.links = append(p.links, href)
				if inBody {
					p.article = append(p.article, href)
				}
			}
			// The body is what follows the document's meta line.
			if n.Data == "article" {
				inBody = false
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, inBody)
					if c.Type == html.ElementNode && c.Data == "p" && attr(c, "class") == "meta" {
						inBody = true
					}
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(root, false)
	return p
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

// demoEngine is an engine holding the demo content, without the semantic
// index.
func demoEngine(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Load(eng, nil); err != nil {
		t.Fatal(err)
	}
	return eng
}

// semanticDemo is an engine holding the demo content and what add puts
// in (add may be nil), and the semantic index following it, built.
func semanticDemo(t *testing.T, add func(*engine.Engine)) (*engine.Engine, *semantic.Index) {
	t.Helper()
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Load(eng, nil); err != nil {
		t.Fatal(err)
	}
	if add != nil {
		add(eng)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := idx.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return eng, idx
}
