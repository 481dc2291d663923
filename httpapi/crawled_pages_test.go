package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sift-search/sift/record"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// heronSite is a small documentation site: an index linking two pages,
// the install page holding every structure a crawled page must keep.
var heronSite = map[string]string{
	"/": `<!doctype html><html><head><title>Heron docs</title></head><body>
<nav><a href="/">Home</a></nav>
<main><h1>Heron docs</h1><p>Start with <a href="/docs/install">installing Heron</a>.</p></main></body></html>`,
	"/docs/install": `<!doctype html><html><head><title>Installing Heron</title></head><body>
<nav><a href="/">Home</a> <a href="/docs/config">Config</a></nav>
<main>
<h1>Installing Heron</h1>
<p>Heron runs <em>anywhere</em> Go runs; it needs <strong>no database</strong>. Run <code>heron init</code> first.</p>
<h2>Raspberry Pi</h2>
<ul>
  <li>Boards
    <ul><li>Pi 4</li><li>Pi 5</li></ul>
  </li>
  <li>Power supply</li>
</ul>
<ol><li>Flash the card</li><li>Boot</li></ol>
<h3>Memory</h3>
<table><thead><tr><th>Board</th><th>RAM</th></tr></thead>
<tbody><tr><td>Pi 4</td><td>4 GB</td></tr><tr><td>Pi 5</td><td>8 GB</td></tr></tbody></table>
<pre><code class="language-go">package main

func main() { println("# not a heading") }
</code></pre>
<p>Then read the <a href="config">configuration</a> page.</p>
</main>
<footer>© Heron</footer></body></html>`,
	"/docs/config": `<!doctype html><html><head><title>Configuring Heron</title></head><body>
<main><h1>Configuring Heron</h1><p>Back to <a href="/docs/install">installing</a>.</p>
<h2>Options</h2><p>Set <code>HERON_PORT</code>.</p></main></body></html>`,
}

// TestCrawledPageKeepsStructure: a crawled HTML page is stored as
// Markdown and its /d/ page shows headings, lists, tables, code and
// emphasis as HTML, not as Markdown markers (issue 12).
func TestCrawledPageKeepsStructure(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := heronSite[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(site.Close)
	ts := start(t)

	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"heron","name":"Heron docs","type":"web","config":{"urls":["`+site.URL+`/"],"allowPrivate":true,"delayMs":1}}`), adminJSON...)
	if r.status != 201 {
		t.Fatalf("create source: %d %s", r.status, r.body)
	}
	r = ts.do(t, "POST", "/api/sources/heron/crawl", nil, bearer...)
	if res := r.json(t); r.status != 200 || res["status"] != "ok" || res["documents"] != 3.0 {
		t.Fatalf("crawl: %d %s", r.status, r.body)
	}
	install, ok := ts.eng.Document(record.DocumentID("heron", site.URL+"/docs/install"))
	if !ok {
		t.Fatal("the install page was not stored")
	}
	config, _ := ts.eng.Document(record.DocumentID("heron", site.URL+"/docs/config"))
	if install.Format != record.FormatMarkdown || install.Title != "Installing Heron" {
		t.Errorf("stored as %q titled %q", install.Format, install.Title)
	}
	if strings.Contains(install.Content, "Home") || strings.Contains(install.Content, "©") {
		t.Errorf("page furniture kept: %q", install.Content)
	}

	r = ts.get(t, "/d/"+install.Slug)
	if r.status != 200 {
		t.Fatalf("GET /d/%s: %d %s", install.Slug, r.status, r.body)
	}
	doc, err := html.Parse(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<h2 id="raspberry-pi">Raspberry Pi</h2>`, `<h3 id="memory">Memory</h3>`,
		`<pre><code class="language-go">`, `<code>heron init</code>`, "<table>", "<th>Board</th>", "<td>8 GB</td>",
		"<em>anywhere</em>", "<strong>no database</strong>", "<ol>"} {
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := bytes.Count(r.body, []byte(">Installing Heron</h")); n != 1 {
		t.Errorf("the title shows as a heading %d times", n)
	}
	if !nestedListItem(doc) {
		t.Error("no <li> inside a list inside an <li>")
	}
	if config.Slug == "" || !bytes.Contains(r.body, []byte(`<a href="/d/`+config.Slug+`">configuration</a>`)) {
		t.Errorf("the link to the config page (slug %q) does not lead to its /d/ page", config.Slug)
	}
	visibleLines(doc, func(line string) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			t.Errorf("visible text starts with '#': %q", line)
		}
	})
}

// nestedListItem reports whether doc holds an <li> in a <ul> or <ol> that
// is itself in an <li>.
func nestedListItem(n *html.Node) bool {
	if n.Type == html.ElementNode && n.DataAtom == atom.Li {
		if p := n.Parent; p != nil && (p.DataAtom == atom.Ul || p.DataAtom == atom.Ol) && p.Parent != nil && p.Parent.DataAtom == atom.Li {
			return true
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if nestedListItem(c) {
			return true
		}
	}
	return false
}

// visibleLines calls f with each line of each text node a browser shows.
func visibleLines(n *html.Node, f func(string)) {
	if n.Type == html.ElementNode && (n.DataAtom == atom.Head || n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Template) {
		return
	}
	if n.Type == html.TextNode {
		for _, l := range strings.Split(n.Data, "\n") {
			f(l)
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		visibleLines(c, f)
	}
}
