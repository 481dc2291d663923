package crawl

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// webSource stores a web source crawling site and returns a runner.
func webSource(t *testing.T, eng *engine.Engine, cfg map[string]any, env Env) *Runner {
	t.Helper()
	cfg, err := CheckConfig("web", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSource(record.Source{ID: "site", Name: "Test site", Type: "web", Enabled: true, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(eng, RunnerOptions{Env: env})
	t.Cleanup(r.Close)
	return r
}

func webEngine(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := engine.Open(engine.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// docKeys lists the keys of the source's documents, as paths of site.
func docKeys(eng *engine.Engine, site string) []string {
	var out []string
	for _, d := range eng.SourceDocuments("site") {
		out = append(out, strings.TrimPrefix(d.Key, site))
	}
	slices.Sort(out)
	return out
}

func TestWebCrawl(t *testing.T) {
	site := newTestSite(t)
	site.flaky = 1
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})

	// First crawl: the start page, what it links to, what the sitemaps
	// (robots.txt → index → gzip XML and text) list.
	res, err := r.Crawl("site", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/", "/a", "/b", "/c", "/e", "/flaky", "/private/ok.html"}
	// /e and /e-dup are the same page: whichever came first is kept.
	if got := docKeys(eng, site.URL); slices.Contains(got, "/e-dup") {
		want[4] = "/e-dup"
	}
	if got := docKeys(eng, site.URL); !slices.Equal(got, want) {
		t.Fatalf("documents %v, want %v", got, want)
	}
	if res.Status != "ok" || res.Documents != len(want) || res.JobID == "" {
		t.Fatalf("result %+v", res)
	}
	hits, _ := site.counts()
	for _, p := range []string{"/private/hidden", "/nf", "/logo.png"} {
		if hits[p] != 0 {
			t.Errorf("%s was requested", p)
		}
	}
	if hits["/flaky"] != 2 {
		t.Errorf("/flaky requested %d times, want 2 (503 with Retry-After, then 200)", hits["/flaky"])
	}
	a, ok := eng.Document(record.DocumentID("site", site.URL+"/a"))
	if !ok || a.Title != "Alpha" || a.URL != site.URL+"/a" || !strings.Contains(a.Content, "zymurgy") ||
		!strings.Contains(a.Content, "- one") || !strings.Contains(a.Content, "brew --now") ||
		strings.Contains(a.Content, "Copyright footer") || strings.Contains(a.Content, "Home") {
		t.Fatalf("page /a as a document: %+v", a)
	}
	src, _ := eng.Source("site")
	if src.LastCrawl == nil || src.LastCrawl.Status != "ok" || src.LastCrawl.Documents != len(want) || src.Cursor == "" {
		t.Fatalf("source after the crawl: %+v", src)
	}
	found, err := eng.Search(query.SearchRequest{Query: "quokkas", Limit: 5})
	if err != nil || len(found.Documents) != 1 {
		t.Fatalf("search for a crawled page: %+v %v", found, err)
	}

	// Incremental: nothing changed, so no page answers with a body — each
	// gets a conditional request (304), or none when the sitemap's lastmod
	// predates the last fetch (/b).
	res, err = r.Crawl("site", false)
	if err != nil {
		t.Fatal(err)
	}
	hits, full := site.counts()
	for p, n := range full {
		if p != "/robots.txt" && !strings.HasPrefix(p, "/sitemap") {
			t.Errorf("unchanged %s fetched whole %d times", p, n)
		}
	}
	if hits["/b"] != 0 || hits["/a"] != 1 {
		t.Errorf("requests: /b %d (want 0, lastmod), /a %d (want 1, conditional)", hits["/b"], hits["/a"])
	}
	if res.Documents != 0 || res.Deleted != 0 || !slices.Equal(docKeys(eng, site.URL), want) {
		t.Fatalf("incremental crawl changed things: %+v, %v", res, docKeys(eng, site.URL))
	}

	// The site changes: /a is edited, /c removed. A full crawl fetches
	// everything, replaces /a and drops /c.
	site.set("/a", `<html><head><title>Alpha v2</title></head><body><p>Alpha now covers sourdough.</p></body></html>`)
	site.set("/c", "")
	res, err = r.Crawl("site", true)
	if err != nil {
		t.Fatal(err)
	}
	_, full = site.counts()
	if full["/b"] != 1 || full["/c"] != 0 || full["/a"] != 1 {
		t.Errorf("a full crawl fetched /a %d, /b %d, /c %d times, want 1, 1, 0", full["/a"], full["/b"], full["/c"])
	}
	want = slices.DeleteFunc(want, func(p string) bool { return p == "/c" })
	if got := docKeys(eng, site.URL); !slices.Equal(got, want) {
		t.Fatalf("after the full crawl: %v, want %v", got, want)
	}
	a, _ = eng.Document(record.DocumentID("site", site.URL+"/a"))
	if a.Title != "Alpha v2" || !strings.Contains(a.Content, "sourdough") || res.Deleted != 1 {
		t.Fatalf("edited page %+v, result %+v", a, res)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "axolotls"}); len(found.Documents) != 0 {
		t.Fatal("the removed page is still found")
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "zymurgy"}); len(found.Documents) != 0 {
		t.Fatal("the old text of the edited page is still found")
	}

	// Incremental again after an edit: the edited page's new ETag differs,
	// so only it comes back whole.
	site.set("/b", `<html><head><title>Bravo v2</title></head><body><p>Bravo now names okapis.</p></body></html>`)
	site.lastmod["/b"] = "2999-01-01"
	if _, err := r.Crawl("site", false); err != nil {
		t.Fatal(err)
	}
	_, full = site.counts()
	delete(full, "/robots.txt")
	for p := range full {
		if strings.HasPrefix(p, "/sitemap") {
			delete(full, p)
		}
	}
	if len(full) != 1 || full["/b"] != 1 {
		t.Fatalf("pages fetched whole: %v, want only /b", full)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "okapis"}); len(found.Documents) != 1 {
		t.Fatal("the edit was not picked up")
	}
}

func TestWebCrawlMaxPagesAndScope(t *testing.T) {
	site := newTestSite(t)
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{
		"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay,
		"maxPages": 3.0, "exclude": []any{"/b"},
	}, Env{})
	if _, err := r.Crawl("site", false); err != nil {
		t.Fatal(err)
	}
	got := docKeys(eng, site.URL)
	if len(got) > 3 || slices.Contains(got, "/b") {
		t.Fatalf("documents %v: more than maxPages, or an excluded page", got)
	}
}

func TestWebCrawlRobotsUnavailable(t *testing.T) {
	site := newTestSite(t)
	site.robotsSt = 503 // RFC 9309: an unreachable robots.txt disallows everything
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})
	if _, err := r.Crawl("site", false); !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("crawl with robots.txt failing: %v", err)
	}
	hits, _ := site.counts()
	if len(eng.SourceDocuments("site")) != 0 || hits["/"] != 0 {
		t.Fatalf("pages fetched although robots.txt failed: %v", hits)
	}
	site.robotsSt = 404 // a missing robots.txt allows everything
	r2 := NewRunner(eng, RunnerOptions{})
	defer r2.Close()
	if _, err := r2.Crawl("site", false); err != nil {
		t.Fatal(err)
	}
	if got := docKeys(eng, site.URL); !slices.Contains(got, "/private/hidden") {
		t.Fatalf("with no robots.txt: %v", got)
	}
}

// TestWebCrawlRefusesPrivateAddresses: without allowPrivate the crawler
// refuses a loopback site, and a redirect hop to a refused address.
func TestWebCrawlRefusesPrivateAddresses(t *testing.T) {
	site := newTestSite(t)
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "delayMs": quickDelay}, Env{})
	_, err := r.Crawl("site", false)
	if !errors.Is(err, ErrUpstream) || !strings.Contains(err.Error(), "private") {
		t.Fatalf("crawl of a loopback site: %v", err)
	}
	hits, _ := site.counts()
	if len(hits) != 0 || len(eng.SourceDocuments("site")) != 0 {
		t.Fatalf("a loopback site was contacted: %v", hits)
	}
	tr, err := r.Test(context.Background(), "site")
	if err != nil || tr.OK || !strings.Contains(tr.Error, "private") {
		t.Fatalf("test of a loopback site: %+v %v", tr, err)
	}

	// The blocked range is 127.0.0.2 only: the site on 127.0.0.1 is
	// reached, its redirect to 127.0.0.2 is not.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/robots.txt" {
			http.NotFound(w, req)
			return
		}
		_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
		http.Redirect(w, req, "http://127.0.0.2:"+port+"/a", http.StatusFound)
	}))
	defer redirector.Close()
	eng2 := webEngine(t)
	var logs bytes.Buffer
	cfg, _ := CheckConfig("web", map[string]any{"urls": []any{redirector.URL + "/start"}, "delayMs": quickDelay})
	eng2.PutSource(record.Source{ID: "site", Name: "R", Type: "web", Enabled: true, Config: cfg})
	r2 := NewRunner(eng2, RunnerOptions{Env: Env{blocked: func(ip net.IP) bool { return ip.Equal(net.ParseIP("127.0.0.2")) }},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer r2.Close()
	res, err := r2.Crawl("site", false)
	if err != nil || res.Failed != 1 || len(eng2.SourceDocuments("site")) != 0 {
		t.Fatalf("redirect to a refused address: %+v %v", res, err)
	}
	if !strings.Contains(logs.String(), "refused") {
		t.Fatalf("the log does not say why: %s", logs.String())
	}
}

func TestPrivateAddress(t *testing.T) {
	for _, c := range []struct {
		ip      string
		private bool
	}{
		{"127.0.0.1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"100.64.0.1", true}, {"0.0.0.0", true}, {"::1", true},
		{"fe80::1", true}, {"fd00::1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true},
		{"64:ff9b::a00:1", true}, {"224.0.0.1", true}, {"255.255.255.255", true},
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"2606:4700:4700::1111", false}, {"93.184.216.34", false},
	} {
		if got := privateAddress(net.ParseIP(c.ip)); got != c.private {
			t.Errorf("%s: private %v, want %v", c.ip, got, c.private)
		}
	}
}

// TestWebCrawlKeepsPagesOnFailures: neither a robots.txt that fails for a
// while nor a page that fails (so its links are not seen) costs documents,
// incrementally or in a full crawl.
func TestWebCrawlKeepsPagesOnFailures(t *testing.T) {
	site := newTestSite(t)
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})
	if _, err := r.Crawl("site", false); err != nil {
		t.Fatal(err)
	}
	before := docKeys(eng, site.URL)
	site.robotsSt = 503
	for _, full := range []bool{false, true} {
		res, err := r.Crawl("site", full)
		if err == nil || res.Deleted != 0 || !slices.Equal(docKeys(eng, site.URL), before) {
			t.Fatalf("robots.txt 503, full %v: %+v %v; documents %v", full, res, err, docKeys(eng, site.URL))
		}
	}
	site.robotsSt = 200
	site.failing["/"] = 500 // the page that links to /a, /d → /e…
	site.failing["/a"] = 502
	for _, full := range []bool{false, true} {
		res, err := r.Crawl("site", full)
		if err != nil || res.Deleted != 0 || res.Failed < 2 || !slices.Equal(docKeys(eng, site.URL), before) {
			t.Fatalf("failing pages, full %v: %+v %v; documents %v", full, res, err, docKeys(eng, site.URL))
		}
	}
}

// TestWebCrawlOddPages: a Latin-1 page with control characters in its
// title and an over-long link is stored cleanly and stops nothing.
func TestWebCrawlOddPages(t *testing.T) {
	long := "/" + strings.Repeat("x", 5000)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/robots.txt":
			// Over the 500 KiB the RFC asks to read, its first rule counts.
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("User-agent: *\nDisallow: /secret\n# " + strings.Repeat("padding ", 100_000) + "\n"))
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			w.Write([]byte("<html><head><title>Caf\xe9\x01 \x1b[31mmenu</title></head><body><p>Cr\xe8me br\xfbl\xe9e \x00here.</p>" +
				`<a href="` + long + `">long</a><a href="/secret">s</a><a href="/ok">ok</a></body></html>`))
		case "/ok":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<title>OK</title><p>fine page</p>"))
		default:
			t.Errorf("requested %.60s", req.URL.Path)
			http.NotFound(w, req)
		}
	}))
	defer site.Close()
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})
	res, err := r.Crawl("site", false)
	if err != nil || res.Documents != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	d, _ := eng.Document(record.DocumentID("site", site.URL+"/"))
	if d.Title != "Café [31mmenu" || !strings.Contains(d.Content, "Crème brûlée") {
		t.Fatalf("title %q, content %q", d.Title, d.Content)
	}
}

// TestWebCrawlStartRedirect: a start page that redirects to another host
// (example.com → www.example.com) takes that host into the scope. Here
// the site answers to "localhost" with a redirect to 127.0.0.1.
func TestWebCrawlStartRedirect(t *testing.T) {
	site := newTestSite(t)
	site.mu.Lock()
	site.redirectHost = "localhost"
	site.mu.Unlock()
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{"http://localhost:" + port + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})
	res, err := r.Crawl("site", false)
	if err != nil || !slices.Contains(docKeys(eng, site.URL), "/a") {
		t.Fatalf("%+v %v: %v", res, err, docKeys(eng, site.URL))
	}
}

// TestWebCrawlDuplicatesStayPut: the same page under two addresses keeps
// one document, under the same key, crawl after crawl.
func TestWebCrawlDuplicatesStayPut(t *testing.T) {
	site := newTestSite(t)
	site.noETag = true
	eng := webEngine(t)
	r := webSource(t, eng, map[string]any{"urls": []any{site.URL + "/"}, "allowPrivate": true, "delayMs": quickDelay}, Env{})
	if _, err := r.Crawl("site", false); err != nil {
		t.Fatal(err)
	}
	first := docKeys(eng, site.URL)
	for i := range 4 {
		res, err := r.Crawl("site", i%2 == 1)
		if err != nil || res.Deleted != 0 || !slices.Equal(docKeys(eng, site.URL), first) {
			t.Fatalf("crawl %d: %+v %v: %v, was %v", i, res, err, docKeys(eng, site.URL), first)
		}
	}
}
