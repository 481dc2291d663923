package crawl

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
)

func TestRobots(t *testing.T) {
	cases := []struct {
		name, txt string
		allowed   map[string]bool
	}{
		{"google vector: allow longer wins", "user-agent: *\nallow: /x/page.html\ndisallow: /x/\n",
			map[string]bool{"/x/page.html": true, "/x/": false, "/x/other": false, "/y": true}},
		{"google vector: rule order does not matter", "user-agent: *\ndisallow: /x/\nallow: /x/page.html\n",
			map[string]bool{"/x/page.html": true, "/x/": false}},
		{"a longer disallow beats a shorter allow", "user-agent: *\nallow: /x/\ndisallow: /x/page.html\n",
			map[string]bool{"/x/page.html": false, "/x/a": true}},
		{"case-sensitive paths", "user-agent: *\ndisallow: /X/\n", map[string]bool{"/x/y": true, "/X/y": false}},
		{"allow wins a tie", "user-agent: *\ndisallow: /page\nallow: /page\n", map[string]bool{"/page": true}},
		{"wildcard and end anchor", "user-agent: *\ndisallow: /*.pdf$\ndisallow: /tmp*/cache\n",
			map[string]bool{"/a/b.pdf": false, "/a/b.pdf?x=1": true, "/a.pdfx": true, "/tmp1/cache/x": false, "/tmp/cach": true}},
		{"percent-encoding compares decoded unreserved", "user-agent: *\ndisallow: /%62ar\ndisallow: /caf%C3%A9\n",
			map[string]bool{"/bar": false, "/b%61r": false, "/café": false, "/caf%c3%a9": false, "/baz": true}},
		{"literal star", "user-agent: *\ndisallow: /a%2Ab\n", map[string]bool{"/a*b": false, "/axb": true}},
		{"query is part of the path", "user-agent: *\ndisallow: /search?q=\n", map[string]bool{"/search?q=x": false, "/search": true}},
		{"our group wins over *, product token case-insensitive", "user-agent: *\ndisallow: /\n\nuser-agent: SIFTBOT/2.0\ndisallow: /private\n",
			map[string]bool{"/": true, "/private/x": false}},
		{"groups for us merge", "user-agent: siftbot\ndisallow: /a\n\nuser-agent: otherbot\nuser-agent: siftbot\ndisallow: /b\n",
			map[string]bool{"/a": false, "/b": false, "/c": true}},
		{"no group for us or *", "user-agent: otherbot\ndisallow: /\n", map[string]bool{"/": true}},
		{"empty disallow disallows nothing", "user-agent: *\ndisallow:\n", map[string]bool{"/x": true}},
		{"robots.txt is always allowed", "user-agent: *\ndisallow: /\n", map[string]bool{"/robots.txt": true, "/x": false}},
		{"comments, CRLF, BOM, unknown lines", "\xef\xbb\xbfUser-Agent: * # all\r\nCrawl-delay: 5\r\nDisallow: /a # no\r\n",
			map[string]bool{"/a": false, "/b": true}},
	}
	for _, c := range cases {
		r := parseRobots([]byte(c.txt), robotsToken)
		for p, want := range c.allowed {
			if got := r.allowed(p); got != want {
				t.Errorf("%s: %s allowed %v, want %v", c.name, p, got, want)
			}
		}
	}
	r := parseRobots([]byte("Sitemap: https://a.example/s.xml\nuser-agent: *\nsitemap: https://a.example/t.xml\n"), robotsToken)
	if len(r.sitemaps) != 2 {
		t.Errorf("sitemaps %v", r.sitemaps)
	}
	if (&robots{disallowAll: true}).allowed("/robots.txt") {
		t.Error("an unreadable robots.txt allows nothing")
	}
}

func TestSitemap(t *testing.T) {
	xml := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
 <url><loc> https://a.example/x?a=1&amp;b=2 </loc><lastmod>2024-08-15T10:00:00+02:00</lastmod><priority>0.5</priority></url>
 <url><loc>https://a.example/y</loc><lastmod>2024-08-15</lastmod></url>
 <url><loc>javascript:alert(1)</loc></url>
 <url><lastmod>2024-08-15</lastmod></url>
</urlset>`
	sm, err := parseSitemap([]byte(xml))
	if err != nil || len(sm.pages) != 2 || sm.pages[0].loc != "https://a.example/x?a=1&b=2" ||
		!sm.pages[0].lastmod.Equal(time.Date(2024, 8, 15, 8, 0, 0, 0, time.UTC)) || sm.pages[1].lastmod.IsZero() {
		t.Fatalf("urlset: %+v %v", sm, err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`<sitemapindex><sitemap><loc>https://a.example/s1.xml</loc></sitemap></sitemapindex>`))
	zw.Close()
	sm, err = parseSitemap(gz.Bytes())
	if err != nil || len(sm.children) != 1 || len(sm.pages) != 0 {
		t.Fatalf("gzipped index: %+v %v", sm, err)
	}
	sm, err = parseSitemap([]byte("https://a.example/1\n\nhttps://a.example/2\r\n"))
	if err != nil || len(sm.pages) != 2 {
		t.Fatalf("text: %+v %v", sm, err)
	}
	for _, bad := range []string{"<html><body>no</body></html>", "not a url\n", "<urlset><url><loc>x", "\x1f\x8bnot gzip"} {
		if _, err := parseSitemap([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	// A gzip bomb stops at the limit.
	gz.Reset()
	zw = gzip.NewWriter(&gz)
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 51 {
		zw.Write(chunk)
	}
	zw.Close()
	if _, err := parseSitemap(gz.Bytes()); err == nil || !strings.Contains(err.Error(), "50 MB") {
		t.Fatalf("gzip bomb: %v", err)
	}
}

func TestCheckConfig(t *testing.T) {
	ok := []struct {
		typ string
		cfg string
	}{
		{"web", `{"urls":["https://docs.example/"],"maxPages":10}`},
		{"web", `{"sitemap":"https://docs.example/sitemap.xml","include":["/docs"]}`},
		{"discord", `{"token":"t","guildId":"81384788765712384","channelIds":["1","2"]}`},
		{"slack", `{"token":"xoxb-1"}`},
		{"discourse", `{"baseUrl":"https://forum.example"}`},
		{"github", `{"repo":"owner/name"}`},
		{"upload", `{}`},
		{"telegram", `{}`},
	}
	for _, c := range ok {
		var cfg map[string]any
		json.Unmarshal([]byte(c.cfg), &cfg)
		if _, err := CheckConfig(c.typ, cfg); err != nil {
			t.Errorf("%s %s: %v", c.typ, c.cfg, err)
		}
	}
	bad := []struct {
		typ, cfg, word string
	}{
		{"nope", `{}`, "type"},
		{"web", `{}`, "config.urls"},
		{"web", `{"urls":["ftp://x"]}`, "config.urls[0]"},
		{"web", `{"urls":["https://x"],"maxPages":0}`, "config.maxPages"},
		{"web", `{"urls":["https://x"],"maxPages":1.5}`, "config.maxPages"},
		{"web", `{"urls":["https://x"],"include":["docs"]}`, "config.include[0]"},
		{"web", `{"urls":["https://x"],"allowPrivate":"yes"}`, "config.allowPrivate"},
		{"web", `{"urls":["https://x"],"depth":3}`, "config.depth"},
		{"discord", `{"token":"t"}`, "config.guildId"},
		{"discord", `{"guildId":"abc"}`, "config.guildId"},
		{"discord", `{"guildId":"1","token":"***"}`, "config.token"},
		{"github", `{"repo":"just-a-name"}`, "config.repo"},
		{"discourse", `{"baseUrl":"forum.example"}`, "config.baseUrl"},
	}
	for _, c := range bad {
		var cfg map[string]any
		json.Unmarshal([]byte(c.cfg), &cfg)
		if _, err := CheckConfig(c.typ, cfg); err == nil || !strings.Contains(err.Error(), c.word) {
			t.Errorf("%s %s: %v, want an error naming %s", c.typ, c.cfg, err, c.word)
		}
	}
	masked := MaskConfig(map[string]any{"token": "secret", "guildId": "1", "apiKey": ""})
	if masked["token"] != Masked || masked["guildId"] != "1" || masked["apiKey"] != "" {
		t.Fatalf("masked %v", masked)
	}
	merged := MergeConfig(map[string]any{"token": "secret", "guildId": "1", "apiBase": "https://x", "channelIds": []any{"1"}},
		map[string]any{"token": Masked, "guildId": "2", "channelIds": nil})
	if merged["token"] != "secret" || merged["guildId"] != "2" || merged["channelIds"] != nil {
		t.Fatalf("merged %v", merged)
	}
	for _, s := range []string{"", "1m", "6h", "720h"} {
		if err := CheckSchedule(s); err != nil {
			t.Errorf("schedule %q: %v", s, err)
		}
	}
	for _, s := range []string{"30s", "1d", "721h", "soon"} {
		if err := CheckSchedule(s); err == nil {
			t.Errorf("schedule %q accepted", s)
		}
	}
}

func TestParsePage(t *testing.T) {
	base, _ := url.Parse("https://a.example/docs/page")
	res := &response{contentType: "text/html; charset=utf-8", body: []byte(`<html><head><base href="/root/">
<link rel="canonical" href="https://a.example/docs/page#top"><meta name="robots" content="NOFOLLOW"></head>
<body><a href="sub">x</a><a href="#frag">y</a><a href="javascript:alert(1)">z</a></body></html>`)}
	p, err := parsePage(res, base)
	if err != nil || p.canonical.String() != "https://a.example/docs/page" || !p.nofollow || p.noindex ||
		len(p.links) != 1 || p.links[0].String() != "https://a.example/root/sub" {
		t.Fatalf("%+v %v", p, err)
	}
	if p.lang != "" {
		t.Fatalf("no lang attribute, lang %q", p.lang)
	}
	for attr, want := range map[string]string{`lang="de-DE"`: "de", `lang="a page"`: ""} {
		p, err = parsePage(&response{contentType: "text/html", body: []byte(`<html ` + attr + `><p>Text`)}, base)
		if err != nil || p.lang != want {
			t.Fatalf("%s: lang %q, want %q (%v)", attr, p.lang, want, err)
		}
	}
	if _, err := parsePage(&response{contentType: "application/pdf"}, base); err == nil {
		t.Fatal("a PDF parsed as a page")
	}
	p, err = parsePage(&response{contentType: "text/markdown", body: []byte("# Title\n\nBody"), robotsTag: "noindex"}, base)
	if err != nil || p.title != "Title" || !p.noindex || p.format != record.FormatMarkdown {
		t.Fatalf("markdown %+v %v", p, err)
	}
	p, err = parsePage(&response{contentType: "text/plain", body: []byte("# not a heading")}, base)
	if err != nil || p.format != record.FormatText || p.text != "# not a heading" {
		t.Fatalf("plain text %+v %v", p, err)
	}
}

// TestParsePageMarkdown: an HTML page becomes Markdown with its structure,
// links made short (root-relative on the page's host) or dropped to their
// text, and no first heading repeating the title.
func TestParsePageMarkdown(t *testing.T) {
	base, _ := url.Parse("https://a.example/docs/page")
	res := &response{contentType: "text/html", body: []byte(`<html><head><title>Setup</title></head><body>
<nav><a href="/">Home</a></nav><h1>Setup</h1><h2>Steps</h2>
<ol><li>Get <a href="../dl">the binary</a><ul><li>or <a href="https://b.example/` + strings.Repeat("x", 200) + `">build</a></li></ul></li></ol>
<pre><code class="language-sh">make run</code></pre></body></html>`)}
	p, err := parsePage(res, base)
	if err != nil {
		t.Fatal(err)
	}
	want := "## Steps\n\n1. Get [the binary](/dl)\n   \n   - or build\n\n```sh\nmake run\n```"
	if p.format != record.FormatMarkdown || p.title != "Setup" || p.text != want {
		t.Fatalf("format %q, title %q, text:\n%s\n--- want ---\n%s", p.format, p.title, p.text, want)
	}
	if len(p.links) != 3 { // the nav link is still followed
		t.Errorf("links %v", p.links)
	}
}

func FuzzRobots(f *testing.F) {
	f.Add([]byte("user-agent: *\nallow: /x/page.html\ndisallow: /x/\n"), "/x/page.html")
	f.Add([]byte("user-agent: siftbot\ndisallow: /*.pdf$\n"), "/a.pdf")
	f.Add([]byte("user-agent: *\ndisallow: /%62\n"), "/b%2A$")
	f.Fuzz(func(t *testing.T, txt []byte, path string) {
		r := parseRobots(txt, robotsToken)
		r.allowed(path)
		if !r.allowed("/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
	})
}

func FuzzSitemap(f *testing.F) {
	f.Add([]byte(`<urlset><url><loc>https://a.example/</loc><lastmod>2024-01-01</lastmod></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>https://a.example/s.xml</loc></sitemap></sitemapindex>`))
	f.Add([]byte("https://a.example/1\nhttps://a.example/2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sm, err := parseSitemap(b)
		if err != nil {
			return
		}
		for _, e := range append(sm.pages, sm.children...) {
			if !absoluteHTTP(e.loc) {
				t.Fatalf("entry %q is not an absolute http(s) URL", e.loc)
			}
		}
	})
}

func FuzzParsePage(f *testing.F) {
	f.Add("text/html", []byte(`<html><head><link rel=canonical href="/x"><base href="//evil/"></head><a href="y">y</a></html>`))
	f.Add("text/plain", []byte("hello"))
	f.Add("text/html; charset=latin1", []byte("<h1>\xe9</h1><ul><li>a<ol><li><code>b</code></ol></ul><pre><code class=language-go>x</code></pre>"))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		base, _ := url.Parse("https://a.example/p")
		p, err := parsePage(&response{contentType: ct, body: body}, base)
		if err != nil {
			return
		}
		for _, l := range p.links {
			if l.Scheme != "http" && l.Scheme != "https" {
				t.Fatalf("link %s", l)
			}
		}
		if !utf8.ValidString(p.text) || !utf8.ValidString(p.title) || (p.format != record.FormatText && p.format != record.FormatMarkdown) {
			t.Fatalf("format %q, title %q, text %q", p.format, p.title, p.text)
		}
	})
}

func FuzzCheckConfig(f *testing.F) {
	f.Add("web", `{"urls":["https://x/"],"maxPages":5,"include":["/a"]}`)
	f.Add("discord", `{"guildId":"1","token":"x","channelIds":["2"]}`)
	f.Fuzz(func(t *testing.T, typ, cfgJSON string) {
		var cfg map[string]any
		if json.Unmarshal([]byte(cfgJSON), &cfg) != nil {
			return
		}
		out, err := CheckConfig(typ, cfg)
		if err != nil {
			return
		}
		if again, err := CheckConfig(typ, out); err != nil || len(again) != len(out) {
			t.Fatalf("a checked config does not check again: %v", err)
		}
		if typ == "web" {
			if _, err := parseWebConfig(out); err != nil {
				t.Fatalf("a checked web config does not parse: %v", err)
			}
		}
	})
}
