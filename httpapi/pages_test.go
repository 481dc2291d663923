package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
	"golang.org/x/net/html"
)

// hostile is what a message or a document may hold to attack a reader.
const hostile = "<script>alert('xss')</script> <img src=x onerror=alert(1)> [click](javascript:alert(2)) javascript:alert(3) " +
	"<a href=\"javascript:alert(4)\">a</a> \"><svg onload=alert(5)>"

// pageSite fills an engine with a channel of 250 messages (three pages), a
// thread, hostile messages and documents, and serves it.
func pageSite(t testing.TB, mod ...func(*Options)) *testServer {
	t.Helper()
	ts := start(t, mod...)
	e := ts.eng
	if _, err := e.PutSource(record.Source{ID: "chat", Name: "Team <Chat>", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	chs, err := e.PutChannels([]record.Channel{
		{SourceID: "chat", ID: "c1", Name: "general", Topic: "All things <b>general</b>"},
		{SourceID: "chat", ID: "m5", Name: "Thread about cron", ParentID: "c1", Kind: "thread"},
	})
	if err != nil || chs[0].Slug != "general" {
		t.Fatalf("%v %v", chs, err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var msgs []record.Message
	for i := range 250 {
		content := fmt.Sprintf("message number %d about topic%d", i, i%7)
		switch i {
		case 3:
			content = hostile
		case 4:
			content = "see https://example.com/a?b=1&c=2, and ```go\nfunc main() { fmt.Println(\"<hi>\") }\n``` then `inline <code>`\nsecond line"
		case 200:
			content = "the zebrafish answer is here"
		}
		msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: "c1", ID: fmt.Sprintf("m%d", i), Author: "user" + fmt.Sprint(i%3),
			AuthorName: "User <" + fmt.Sprint(i%3) + ">", Content: content, Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	msgs[6].ReplyTo = "m5"
	msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: "m5", ID: "t1", Author: "ana", Content: "a reply in the thread", Timestamp: t0.Add(time.Hour)})
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	docs := []record.Document{
		{Title: "Guide", Key: "guide.md", Format: record.FormatMarkdown, URL: "https://docs.example/guide",
			Content: "# Guide\n\nIntro paragraph about **zebrafish**.\n\n## Install\n\n```sh\nmake install\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" + hostile + "\n\n[bad](javascript:alert(6)) [good](https://example.com)"},
		{Title: "Plain <notes>", Key: "notes.txt", Format: record.FormatText, Content: "first line\nsecond line\n\n" + hostile},
	}
	if _, err := e.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	// Answers read the semantic index, which chunks writes in the
	// background: under make test's load it was once still behind when a
	// test asked its question.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ts.idx.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return ts
}

// inert parses a page and checks that nothing in it runs: no script but
// JSON-LD and Sift's own file, no event-handler attribute, no javascript:
// URL, no image or SVG a message smuggled in.
func inert(t testing.TB, page string, body []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script":
				typ, src := "", ""
				for _, a := range n.Attr {
					if a.Key == "type" {
						typ = a.Val
					}
					if a.Key == "src" {
						src = a.Val
					}
				}
				if typ != "application/ld+json" && src != "/static/app.js" {
					t.Errorf("%s: a live <script>", page)
				}
			case "svg", "iframe", "object", "embed", "base":
				t.Errorf("%s: a <%s> element", page, n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("%s: attribute %s=%q on <%s>", page, a.Key, a.Val, n.Data)
				}
				if v := strings.ToLower(strings.Join(strings.Fields(a.Val), "")); (a.Key == "href" || a.Key == "src" || a.Key == "action" || a.Key == "formaction") &&
					(strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:") || strings.HasPrefix(v, "data:text/html")) {
					t.Errorf("%s: %s=%q on <%s>", page, a.Key, a.Val, n.Data)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func htmlGet(t testing.TB, ts *testServer, path string, header ...string) resp {
	t.Helper()
	return ts.get(t, path, append([]string{"Accept", "text/html"}, header...)...)
}

func TestChannelPage(t *testing.T) {
	ts := pageSite(t)
	r := htmlGet(t, ts, "/c/general")
	page := string(r.body)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", r.status, r.header)
	}
	// Page 1: the 100 oldest messages, in order, each anchored.
	ids := regexp.MustCompile(`<li class="msg" id="m-([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(ids) != 100 || ids[0][1] != "m0" || ids[99][1] != "m99" {
		t.Fatalf("page 1 holds %d messages, first %v", len(ids), ids[:min(1, len(ids))])
	}
	for _, want := range []string{
		`<time datetime="2026-03-01T09:00:00Z">`, `<a rel="next" href="/c/general?page=2">`, `href="/c/general?page=3">Latest`,
		`<link rel="canonical" href="` + ts.url + `/c/general">`, `<meta property="og:title"`, `<meta name="description"`,
		`href="/t/thread-about-cron">Thread →`, `<a href="#m-m5">in reply</a>`, `All things &lt;b&gt;general&lt;/b&gt;`, `User &lt;1&gt;`,
		`<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow ugc noopener">`, `<pre><code>func main() { fmt.Println(&#34;&lt;hi&gt;&#34;) }</code></pre>`,
		`<code>inline &lt;code&gt;</code>`, "second line",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page 1 lacks %s", want)
		}
	}
	inert(t, "/c/general", r.body)
	ld := jsonLD(t, page)
	if ld["@type"] != "DiscussionForumPosting" || ld["headline"] != "#general" || ld["url"] != ts.url+"/c/general" || ld["comment"] == nil {
		t.Fatalf("JSON-LD %v", ld)
	}

	// Later pages, stable addresses; a message's page from ?m=.
	r = htmlGet(t, ts, "/c/general?page=3")
	ids = regexp.MustCompile(`<li class="msg" id="m-([^"]+)"`).FindAllStringSubmatch(string(r.body), -1)
	if len(ids) != 50 || ids[0][1] != "m200" || !strings.Contains(string(r.body), `<a rel="prev" href="/c/general?page=2">`) {
		t.Fatalf("page 3: %d messages", len(ids))
	}
	if !strings.Contains(string(r.body), `href="`+ts.url+`/c/general?page=3"`) {
		t.Error("page 3's canonical URL")
	}
	// The thread its message m5 links on page 1 is listed on the others.
	if strings.Contains(page, `<a href="/c/thread-about-cron">Thread about cron</a>`) || !strings.Contains(string(r.body), `<a href="/c/thread-about-cron">Thread about cron</a>`) {
		t.Error("the list of threads started on other pages")
	}
	r = htmlGet(t, ts, "/c/general?m=m200")
	if !strings.Contains(string(r.body), `id="m-m200"`) || !strings.Contains(string(r.body), "Page 3 of 3") {
		t.Fatal("?m= does not find the message's page")
	}
	for _, bad := range []string{"/c/general?page=4", "/c/general?page=0", "/c/general?page=x", "/c/nope", "/c/..%2F", "/d/nope"} {
		if r := htmlGet(t, ts, bad); r.status != 404 || !strings.Contains(string(r.body), "Not found") {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
	// The thread's page links back to its channel.
	if r := htmlGet(t, ts, "/c/thread-about-cron"); !strings.Contains(string(r.body), `a thread in <a href="/c/general">#general</a>`) {
		t.Error("the thread page does not link to its channel")
	}
}

func jsonLD(t testing.TB, page string) map[string]any {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/ld\+json">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no JSON-LD")
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
		t.Fatalf("JSON-LD does not parse: %v: %s", err, m[1])
	}
	return v
}

func TestDocumentPage(t *testing.T) {
	ts := pageSite(t)
	var guide, notes string
	for _, d := range ts.eng.SourceDocuments(record.UploadsSourceID) {
		if d.Key == "guide.md" {
			guide = d.Slug
		} else {
			notes = d.Slug
		}
	}
	r := htmlGet(t, ts, "/d/"+guide)
	page := string(r.body)
	for _, want := range []string{
		`<h1 id="doc-h">Guide</h1>`, `<h2 id="install">Install</h2>`, `<pre><code class="language-sh">make install`, `<table>`,
		`<strong>zebrafish</strong>`, `<a href="https://docs.example/guide" rel="nofollow noopener">original</a>`,
		`<time datetime="`, `<a href="https://example.com" rel="nofollow">good</a>`, `<link rel="canonical" href="` + ts.url + `/d/` + guide + `">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("guide lacks %s", want)
		}
	}
	inert(t, "/d/"+guide, r.body)
	if ld := jsonLD(t, page); ld["@type"] != "Article" || ld["headline"] != "Guide" || ld["dateModified"] == "" {
		t.Fatalf("JSON-LD %v", ld)
	}
	r = htmlGet(t, ts, "/d/"+notes)
	if !strings.Contains(string(r.body), "<p>first line<br>\nsecond line</p>") || !strings.Contains(string(r.body), "Plain &lt;notes&gt;") {
		t.Fatalf("text document: %s", r.body)
	}
	inert(t, "/d/"+notes, r.body)
}

func TestHomeAndSourcesPages(t *testing.T) {
	ts := pageSite(t)
	r := htmlGet(t, ts, "/?q=zebrafish")
	page := string(r.body)
	if !strings.Contains(page, `<a class="result" href="/t/general.m200#m-m200">`) || !strings.Contains(page, `<mark>zebrafish</mark>`) {
		t.Fatalf("search results: %s", page)
	}
	if !strings.Contains(page, `<form class="bar" id="ask-form" action="/" method="post">`) || !strings.Contains(page, `<script src="/static/app.js" defer></script>`) {
		t.Fatal("no ask box")
	}
	r = htmlGet(t, ts, "/?q="+strings.ReplaceAll(hostile, " ", "+"))
	inert(t, "/?q=hostile", r.body)
	// Without JavaScript, the ask box posts its form and is answered here;
	// not when the form was posted from another site.
	form := "application/x-www-form-urlencoded"
	r = ts.do(t, "POST", "/", strings.NewReader("ask=where+is+the+zebrafish+answer"), "Content-Type", form, "Sec-Fetch-Site", "same-origin")
	if r.status != 200 || !strings.Contains(string(r.body), `<div class="answer" id="answer">`) || !strings.Contains(string(r.body), `href="`+ts.url+`/t/general.`) {
		body := string(r.body)
		if i := strings.Index(body, `id="ask-out"`); i >= 0 {
			body = body[i:]
		}
		t.Fatalf("server-side answer: %d %s", r.status, body)
	}
	if r.header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("an answer page is cacheable: %q", r.header.Get("Cache-Control"))
	}
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		r = ts.do(t, "POST", "/", strings.NewReader("ask=zebrafish"), "Content-Type", form, h[0], h[1])
		if r.status != 403 || strings.Contains(string(r.body), `id="answer"`) {
			t.Errorf("a question posted with %s: %d", h, r.status)
		}
	}
	if r := ts.do(t, "POST", "/", strings.NewReader("ask=%ff"), "Content-Type", form); r.status != 400 {
		t.Errorf("a question in bad UTF-8: %d", r.status)
	}
	if r := htmlGet(t, ts, "/?ask=zebrafish"); strings.Contains(string(r.body), `id="answer"`) {
		t.Error("a GET answered a question")
	}
	r = htmlGet(t, ts, "/sources")
	for _, want := range []string{`<h2 id="s-chat">Team &lt;Chat&gt; <span class="meta">(discord)</span></h2>`, `<a href="/c/general">#general</a>`,
		"251 messages", `<a href="/d/`, "1 channel · "} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("/sources lacks %s", want)
		}
	}
	if strings.Contains(string(r.body), `href="/c/thread-about-cron"`) {
		t.Error("/sources lists a thread as a channel")
	}
	inert(t, "/sources", r.body)
	// Static files.
	if r := ts.get(t, "/static/app.js"); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("app.js: %d", r.status)
	}
	if r := htmlGet(t, ts, "/static/nope.js"); r.status != 404 {
		t.Fatalf("missing static file: %d", r.status)
	}
}

// TestPageCaching: ETag and Last-Modified give 304s; gzip when asked; HEAD.
func TestPageCaching(t *testing.T) {
	ts := pageSite(t)
	for _, path := range []string{"/c/general", "/sources", "/sitemap.xml", "/llms.txt", "/robots.txt"} {
		r := ts.get(t, path)
		etag := r.header.Get("ETag")
		if r.status != 200 || etag == "" {
			t.Fatalf("%s: %d, ETag %q", path, r.status, etag)
		}
		if again := ts.get(t, path, "If-None-Match", etag); again.status != 304 || len(again.body) != 0 {
			t.Fatalf("%s with If-None-Match: %d", path, again.status)
		}
		if lm := r.header.Get("Last-Modified"); lm != "" {
			if again := ts.get(t, path, "If-Modified-Since", lm); again.status != 304 {
				t.Fatalf("%s with If-Modified-Since: %d", path, again.status)
			}
		}
	}
	// Pages showing counts are dated by the engine's last change, and only
	// once it is a second old; a write moves the date.
	ts.get(t, "/c/general")
	time.Sleep(1100 * time.Millisecond)
	lm1 := ts.get(t, "/c/general").header.Get("Last-Modified")
	ts.eng.PutMessages([]record.Message{{SourceID: "chat", ChannelID: "c1", ID: "late", Author: "z", Content: "late news", Timestamp: time.Now()}})
	if r := ts.get(t, "/c/general", "If-Modified-Since", lm1); lm1 == "" || r.status != 200 || r.header.Get("Last-Modified") != "" {
		t.Fatalf("after a write: Last-Modified was %q; now %d with %q", lm1, r.status, r.header.Get("Last-Modified"))
	}
	doc := ts.eng.SourceDocuments(record.UploadsSourceID)[0]
	r := ts.get(t, "/d/"+doc.Slug)
	if lm := r.header.Get("Last-Modified"); lm != doc.UpdatedAt.UTC().Format(http.TimeFormat) {
		t.Fatalf("Last-Modified of a document: %q", lm)
	}
	if again := ts.get(t, "/d/"+doc.Slug, "If-Modified-Since", r.header.Get("Last-Modified")); again.status != 304 {
		t.Fatalf("If-Modified-Since: %d", again.status)
	}
	// net/http would decompress on its own; ask for gzip explicitly.
	req, _ := http.NewRequest("GET", ts.url+"/c/general", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	zr, err := gzip.NewReader(res.Body)
	if err != nil || res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("not gzipped: %v %v", res.Header, err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Contains(plain, []byte(`id="m-m0"`)) {
		t.Fatal("the gzipped page differs")
	}
	// Each encoding has its own ETag; either validates the page.
	gzTag, plainTag := res.Header.Get("ETag"), ts.get(t, "/c/general", "Accept-Encoding", "identity").header.Get("ETag")
	if gzTag == plainTag || !strings.HasSuffix(gzTag, `-gz"`) {
		t.Fatalf("ETags %s and %s", gzTag, plainTag)
	}
	if r := ts.get(t, "/c/general", "If-None-Match", gzTag); r.status != 304 {
		t.Fatalf("the gzip ETag does not validate: %d", r.status)
	}
	req, _ = http.NewRequest("HEAD", ts.url+"/d/nope", nil)
	req.Header.Set("Accept", "text/html")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 404 {
		t.Fatalf("HEAD of a missing page: %v %v", res, err)
	}
}

type xmlIndex struct {
	XMLName  xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
	Sitemaps []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"sitemap"`
}

type xmlURLSet struct {
	XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"url"`
}

func TestSitemap(t *testing.T) {
	ts := pageSite(t, func(o *Options) { o.sitemapMaxURLs = 3 })
	r := ts.get(t, "/sitemap.xml")
	var idx xmlIndex
	if err := xml.Unmarshal(r.body, &idx); err != nil || !strings.HasPrefix(r.header.Get("Content-Type"), "application/xml") {
		t.Fatalf("index: %v %s", err, r.body)
	}
	// home, /sources, 3 pages of #general, 1 of the thread, the thread as
	// a conversation and two of #general's, 2 documents: 11 URLs in files
	// of at most 3.
	if len(idx.Sitemaps) != 4 {
		t.Fatalf("%d child sitemaps", len(idx.Sitemaps))
	}
	var all []string
	for _, sm := range idx.Sitemaps {
		if _, err := time.Parse(time.RFC3339, sm.LastMod); err != nil {
			t.Errorf("lastmod %q", sm.LastMod)
		}
		r := ts.get(t, strings.TrimPrefix(sm.Loc, ts.url))
		var set xmlURLSet
		if err := xml.Unmarshal(r.body, &set); err != nil || r.status != 200 {
			t.Fatalf("%s: %v", sm.Loc, err)
		}
		if len(set.URLs) > 3 {
			t.Fatalf("%s holds %d URLs", sm.Loc, len(set.URLs))
		}
		for _, u := range set.URLs {
			if !strings.HasPrefix(u.Loc, ts.url+"/") {
				t.Errorf("loc %q", u.Loc)
			}
			if _, err := time.Parse(time.RFC3339, u.LastMod); err != nil {
				t.Errorf("lastmod %q of %s", u.LastMod, u.Loc)
			}
			all = append(all, strings.TrimPrefix(u.Loc, ts.url))
		}
	}
	slices.Sort(all)
	if len(all) != 11 || !slices.Contains(all, "/c/general?page=3") || !slices.Contains(all, "/c/thread-about-cron") || slices.Contains(all, "/c/general?page=4") ||
		!slices.Contains(all, "/t/thread-about-cron") {
		t.Fatalf("URLs %v", all)
	}
	for _, p := range all {
		if r := ts.get(t, p); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	for _, bad := range []string{"/sitemap-0.xml", "/sitemap-5.xml", "/sitemap-01.xml", "/sitemap-x.xml"} {
		if r := ts.get(t, bad); r.status != 404 {
			t.Errorf("%s: %d", bad, r.status)
		}
	}
	if r := ts.get(t, "/robots.txt"); !strings.Contains(string(r.body), "Sitemap: "+ts.url+"/sitemap.xml") || !strings.Contains(string(r.body), "Disallow: /api/") {
		t.Fatalf("robots.txt: %s", r.body)
	}
}

// TestSitemapSplit checks the 50,000-URL limit at its real size.
func TestSitemapSplit(t *testing.T) {
	urls := make([]sitemapURL, 120_001)
	for i := range urls {
		urls[i] = sitemapURL{Loc: fmt.Sprintf("https://s.example/d/doc-%d?a=1&b=<2>", i), LastMod: time.Unix(int64(i), 0)}
	}
	parts := splitSitemap(urls, sitemapMaxURLs)
	if len(parts) != 3 || len(parts[0]) != 50_000 || len(parts[1]) != 50_000 || len(parts[2]) != 20_001 {
		t.Fatalf("parts of %d, %d, %d", len(parts[0]), len(parts[1]), len(parts[2]))
	}
	var b bytes.Buffer
	writeURLSet(&b, parts[0])
	var set xmlURLSet
	if err := xml.Unmarshal(b.Bytes(), &set); err != nil || len(set.URLs) != 50_000 || set.URLs[0].Loc != urls[0].Loc {
		t.Fatalf("%v, %d URLs", err, len(set.URLs))
	}
	if b.Len() > 50<<20 {
		t.Fatalf("a sitemap of %d bytes", b.Len())
	}
	b.Reset()
	writeSitemapIndex(&b, "https://s.example", parts)
	var idx xmlIndex
	if err := xml.Unmarshal(b.Bytes(), &idx); err != nil || len(idx.Sitemaps) != 3 || idx.Sitemaps[2].Loc != "https://s.example/sitemap-3.xml" {
		t.Fatalf("index: %v %+v", err, idx)
	}
}

func TestLLMsTxt(t *testing.T) {
	ts := pageSite(t)
	r := ts.get(t, "/llms.txt")
	text := string(r.body)
	if r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("content type %q", r.header.Get("Content-Type"))
	}
	lines := strings.Split(text, "\n")
	if !strings.HasPrefix(lines[0], "# ") || !strings.HasPrefix(lines[2], "> ") {
		t.Fatalf("H1 then blockquote: %q %q", lines[0], lines[2])
	}
	// H2 sections come last and hold only link lists (llmstxt.org).
	item := regexp.MustCompile(`^\s*-\s*\[([^\]]+)\]\(([^)]+)\)(?::\s*(.*))?$`)
	var h2 []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "## "):
			h2 = append(h2, l)
		case len(h2) > 0 && l != "" && !item.MatchString(l):
			t.Errorf("under %s, not a link item: %q", h2[len(h2)-1], l)
		}
	}
	if !slices.Equal(h2, []string{"## API", "## Sources", "## Documents", "## Optional"}) {
		t.Fatalf("sections %v", h2)
	}
	for _, want := range []string{"curl '" + ts.url + "/api/semantic-search?q=", "/api/ask", "1–20", "Bearer", "429", "Team <Chat>", "[#general](" + ts.url + "/c/general)",
		"(" + ts.url + "/llms-full.txt)"} {
		if !strings.Contains(text, want) {
			t.Errorf("llms.txt lacks %q", want)
		}
	}
	full := ts.get(t, "/llms-full.txt")
	if !strings.Contains(string(full.body), "Intro paragraph about **zebrafish**.") || !strings.Contains(string(full.body), "## Plain <notes>") {
		t.Fatalf("llms-full.txt: %.300s", full.body)
	}
}

func TestDashboardAccess(t *testing.T) {
	ts := pageSite(t)
	ts.get(t, "/api/search?q=zebrafish") // something for the latency table
	r := htmlGet(t, ts, "/dashboard")
	if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("no credentials: %d %v", r.status, r.header)
	}
	// Each refusal says what is wrong.
	wantError(t, r, 401, "needs the operator's user name and password")
	wantError(t, htmlGet(t, ts, "/dashboard", "Authorization", "Bearer "+testKey), 401, "a Bearer token does not open the dashboard")
	wantError(t, htmlGet(t, ts, "/dashboard", "Authorization", "Basic "+basic(testUser, "wrong")), 401, "user name or password is wrong")
	wantError(t, htmlGet(t, ts, "/dashboard", "Authorization", "Digest x"), 401, "not this Authorization scheme")
	r = htmlGet(t, ts, "/dashboard", "Authorization", "Basic "+basic(testUser, testPass))
	page := string(r.body)
	for _, want := range []string{"<h1>Dashboard</h1>", "Team &lt;Chat&gt;", "GET /api/search", "zebrafish", "Write-ahead log", "In memory only", "Memory: heap",
		`<meta name="robots" content="noindex">`} {
		if want == "Write-ahead log" {
			continue // in memory here
		}
		if !strings.Contains(page, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	if r.header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("dashboard caching: %q", r.header.Get("Cache-Control"))
	}
	closed := start(t, func(o *Options) { o.AdminUser, o.AdminPassword = "", "" })
	if r := htmlGet(t, closed, "/dashboard", "Authorization", "Bearer "+testKey); r.status != 403 {
		t.Fatalf("no Basic Auth configured: %d", r.status)
	}
}

// TestPageStructure checks every page for what assistive technology and
// validators look for: the language, one main landmark, a header and a
// footer, one h1, a label for each input, unique ids.
func TestPageStructure(t *testing.T) {
	ts := pageSite(t)
	doc := ts.eng.SourceDocuments(record.UploadsSourceID)[0].Slug
	for _, path := range []string{"/", "/?q=zebrafish", "/sources", "/c/general", "/c/general?page=2", "/d/" + doc, "/nope"} {
		r := htmlGet(t, ts, path)
		page := string(r.body)
		if !strings.HasPrefix(page, "<!doctype html>\n<html lang=\"en\">") {
			t.Errorf("%s: no doctype or language", path)
		}
		for _, once := range []string{`<main id="main"`, "<header", "<footer", "<h1", `<meta name="viewport"`, "<title>"} {
			if n := strings.Count(page, once); n != 1 {
				t.Errorf("%s: %d × %s", path, n, once)
			}
		}
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if ids[m[1]] {
				t.Errorf("%s: id %q twice", path, m[1])
			}
			ids[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`<input[^>]* id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if !strings.Contains(page, `<label for="`+m[1]+`"`) {
				t.Errorf("%s: input %s has no label", path, m[1])
			}
		}
		inert(t, path, r.body)
	}
}

// FuzzRenderInert: whatever a message or a document holds, its rendering
// has no live markup.
func FuzzRenderInert(f *testing.F) {
	f.Add(hostile)
	f.Add("```js\n<script>x</script>\n``` `a<b` https://x.example/?a=<b>&c\n[x](javascript:y)")
	f.Add("<a href='java\tscript:x'>y</a> ![i](javascript:z) <IMG SRC=x ONERROR=y>")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{string(renderMessage(s)), string(renderMarkdown(s, "T", nil)), string(renderText(s))} {
			inert(t, "render", []byte("<!doctype html><html><body>"+out+"</body></html>"))
		}
	})
}

// TestHomeSearchBearerOnly: with SEARCH_ACCESS=bearer the home page does
// not open full-text search to the public.
func TestHomeSearchBearerOnly(t *testing.T) {
	ts := pageSite(t, func(o *Options) { o.SearchAccess = "bearer" })
	r := htmlGet(t, ts, "/?q=zebrafish")
	if r.status != 401 || strings.Contains(string(r.body), "<mark>") {
		t.Fatalf("%d: results shown without the key", r.status)
	}
	if r := htmlGet(t, ts, "/?q=zebrafish", "Authorization", "Bearer "+testKey); !strings.Contains(string(r.body), "<mark>zebrafish</mark>") {
		t.Fatal("no results with the key")
	}
}

// TestHomeResultPages: more results are a link away, within the source
// chosen.
func TestHomeResultPages(t *testing.T) {
	ts := pageSite(t)
	r := htmlGet(t, ts, "/?q=message&source=chat")
	page := string(r.body)
	if !strings.Contains(page, `<a rel="next" href="/?offset=20&amp;q=message&amp;source=chat">More results →</a>`) ||
		!strings.Contains(page, "Results 1–20") || !strings.Contains(page, `<option value="chat" selected>`) {
		t.Fatalf("first results: %s", page)
	}
	r = htmlGet(t, ts, "/?offset=20&q=message&source=chat")
	if page := string(r.body); !strings.Contains(page, "Results 21–40") || !strings.Contains(page, `<a rel="prev" href="/?q=message&amp;source=chat">← Previous</a>`) {
		t.Fatalf("next results: %s", page)
	}
	if r := htmlGet(t, ts, "/?q=message&source=uploads"); strings.Contains(string(r.body), `class="result"`) {
		t.Fatal("the source filter let messages of another source through")
	}
}

// TestDeepMarkdownPage: a Markdown document nested past mdtext.MaxDepth is
// shown as plain text, escaped, and its page answers.
func TestDeepMarkdownPage(t *testing.T) {
	ts := start(t)
	content := strings.Repeat("> ", 50_000) + "<b>deep</b> end"
	docs, err := ts.eng.PutDocuments([]record.Document{{Title: "Deep", Content: content, Format: record.FormatMarkdown}})
	if err != nil {
		t.Fatal(err)
	}
	r := htmlGet(t, ts, "/d/"+docs[0].Slug)
	if r.status != 200 || !strings.Contains(string(r.body), "&lt;b&gt;deep&lt;/b&gt; end") || strings.Contains(string(r.body), "<blockquote>") {
		t.Fatalf("status %d, %d bytes", r.status, len(r.body))
	}
}
