package crawl

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// testSite is a small web site for crawler tests: robots.txt naming a
// sitemap index (one gzipped XML sitemap, one plain-text sitemap), pages
// with ETags that answer 304 to a matching If-None-Match, and the usual
// traps (a canonical duplicate, a noindex page, a copy under another
// address, a disallowed directory, a flaky page, links out of scope).
type testSite struct {
	*httptest.Server
	mu       sync.Mutex
	pages    map[string]string // path → HTML body
	lastmod  map[string]string // path → sitemap lastmod
	robots   string
	robotsSt int
	hits     map[string]int // path → requests
	full     map[string]int // path → 200 answers with a body
	flaky    int            // 503s still to give /flaky
	noETag   bool           // answer without validators
	// redirectHost, when set, is a host name answered with a redirect to
	// the same path on the site's own address.
	redirectHost string
	failing      map[string]int // path → status to answer instead of the page
}

func newTestSite(t *testing.T) *testSite {
	s := &testSite{
		pages:    map[string]string{},
		lastmod:  map[string]string{},
		hits:     map[string]int{},
		full:     map[string]int{},
		failing:  map[string]int{},
		robotsSt: 200,
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	page := func(title, body string) string {
		return `<!doctype html><html><head><title>` + title + `</title></head><body>
<nav><a href="/">Home</a> <a href="/a">Alpha</a></nav><main>` + body + `</main>
<footer>Copyright footer text</footer></body></html>`
	}
	s.robots = "# test robots\nUser-agent: *\nDisallow: /private/\nAllow: /private/ok.html\n\nUser-agent: OtherBot\nDisallow: /\n\nSitemap: " + s.URL + "/sitemap_index.xml\n"
	s.pages["/"] = page("Home", `<h1>Welcome</h1><p>Start here. <a href="/a">Alpha</a>, <a href="/d">Delta</a>,
<a href="/private/hidden">hidden</a>, <a href="https://elsewhere.example/x">elsewhere</a>, <a href="/logo.png">logo</a>,
<a href="mailto:x@example.com">mail</a>, <a href="/nf" rel="nofollow">nofollow</a>, <a href="/flaky">flaky</a>,
<a href="/a-copy">copy</a>, <a href="/moved">moved</a></p>`)
	s.pages["/a"] = page("Alpha", `<h1>Alpha</h1><p>The alpha page explains zymurgy fermentation.</p><ul><li>one</li><li>two</li></ul><pre><code>brew --now</code></pre>`)
	s.pages["/a-copy"] = `<html><head><title>Alpha copy</title><link rel="canonical" href="/a"></head><body><p>The alpha page, printable.</p></body></html>`
	s.pages["/b"] = page("Bravo", `<p>Bravo is only in the sitemap; it speaks of quokkas.</p>`)
	s.pages["/c"] = page("Charlie", `<p>Charlie comes from the text sitemap and mentions axolotls.</p>`)
	s.pages["/d"] = `<html><head><title>Delta</title><meta name="robots" content="noindex"></head><body><p>Not to be indexed.</p><a href="/e">Echo</a></body></html>`
	s.pages["/e"] = page("Echo", `<p>Echo is reached through a noindex page; it names pangolins.</p>`)
	s.pages["/e-dup"] = s.pages["/e"]
	s.pages["/private/hidden"] = page("Hidden", `<p>Robots say no.</p>`)
	s.pages["/private/ok.html"] = page("Allowed", `<p>An allowed page in a disallowed directory, about narwhals.</p>`)
	s.pages["/nf"] = page("Nofollow", `<p>Only linked with rel=nofollow.</p>`)
	s.pages["/flaky"] = page("Flaky", `<p>Flaky answers 503 first, then about tardigrades.</p>`)
	s.lastmod["/b"] = "2020-01-01"
	return s
}

func (s *testSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := r.URL.Path
	if s.redirectHost != "" && strings.HasPrefix(r.Host, s.redirectHost+":") {
		http.Redirect(w, r, s.URL+r.URL.RequestURI(), http.StatusMovedPermanently)
		return
	}
	s.hits[p]++
	switch p {
	case "/robots.txt":
		w.WriteHeader(s.robotsSt)
		fmt.Fprint(w, s.robots)
		return
	case "/sitemap_index.xml":
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>%[1]s/sitemap-pages.xml.gz</loc><lastmod>2024-08-15</lastmod></sitemap>
  <sitemap><loc>%[1]s/sitemap.txt</loc></sitemap>
  <sitemap><loc>https://elsewhere.example/sitemap.xml</loc></sitemap>
</sitemapindex>`, s.URL)
		return
	case "/sitemap-pages.xml.gz":
		var xml strings.Builder
		xml.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range []string{"/a", "/b", "/private/hidden", "/private/ok.html"} {
			fmt.Fprintf(&xml, "<url><loc>%s%s</loc>", s.URL, p)
			if lm := s.lastmod[p]; lm != "" {
				fmt.Fprintf(&xml, "<lastmod>%s</lastmod>", lm)
			}
			xml.WriteString("</url>")
		}
		xml.WriteString(`<url><loc>https://elsewhere.example/y</loc></url></urlset>`)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(xml.String()))
		zw.Close()
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(gz.Bytes())
		return
	case "/sitemap.txt":
		fmt.Fprintf(w, "%s/c\n%s/e-dup\n", s.URL, s.URL)
		return
	case "/moved":
		http.Redirect(w, r, "/e", http.StatusMovedPermanently)
		return
	case "/flaky":
		if s.flaky > 0 {
			s.flaky--
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	if st := s.failing[p]; st != 0 {
		w.WriteHeader(st)
		return
	}
	body, ok := s.pages[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	etag := fmt.Sprintf(`"%x"`, len(body)*31+int(body[len(body)/2]))
	if !s.noETag {
		w.Header().Set("ETag", etag)
	}
	if r.Header.Get("If-None-Match") == etag && !s.noETag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.full[p]++
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, body)
}

func (s *testSite) set(path, html string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if html == "" {
		delete(s.pages, path)
	} else {
		s.pages[path] = html
	}
}

// counts returns and resets the request counters.
func (s *testSite) counts() (hits, full map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hits, full = s.hits, s.full
	s.hits, s.full = map[string]int{}, map[string]int{}
	return hits, full
}

// quickDelay (delayMs) keeps crawls of the test site fast while still
// exercising the per-host spacing.
const quickDelay = 2.0
