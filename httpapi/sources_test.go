package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

const secretToken = "xoxb-very-secret-token-1234"

var adminJSON = []string{"Content-Type", "application/json", "Authorization", "Bearer " + testKey}

// lockedBuffer collects log lines from the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestSourcesCRUD(t *testing.T) {
	var logs lockedBuffer
	ts := start(t, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	// Created with an id derived from the name; defaults filled in.
	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"name":"Acme Discord","type":"discord","config":{"token":"`+secretToken+`","guildId":"81384788765712384"},"schedule":"1h"}`), adminJSON...)
	if r.status != 201 || r.header.Get("Location") != "/api/sources/acme-discord" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	rec := r.json(t)
	if got := keys(rec); strings.Join(got, ",") != "config,createdAt,enabled,id,lastCrawl,lastImport,name,schedule,stats,type,updatedAt,visibility" {
		t.Fatalf("record keys %v", got)
	}
	cfg := rec["config"].(map[string]any)
	if rec["id"] != "acme-discord" || rec["enabled"] != true || rec["visibility"] != "public" || cfg["token"] != "***" || cfg["guildId"] != "81384788765712384" ||
		rec["lastCrawl"] != nil || rec["stats"].(map[string]any)["messages"] != 0.0 {
		t.Fatalf("record %v", rec)
	}
	// The same name again gets another id; an explicit id that exists is a conflict.
	r = ts.do(t, "POST", "/api/sources", strings.NewReader(`{"name":"Acme Discord","type":"discord","config":{"guildId":"1"}}`), adminJSON...)
	if r.status != 201 || r.json(t)["id"] != "acme-discord-2" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"acme-discord","name":"x","type":"upload"}`), adminJSON...), 409, "exists")

	// Reads.
	r = ts.get(t, "/api/sources", bearer...)
	list := r.json(t)["sources"].([]any)
	if r.status != 200 || len(list) != 3 { // with the built-in uploads source
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	r = ts.get(t, "/api/sources/acme-discord", bearer...)
	if r.status != 200 || r.json(t)["name"] != "Acme Discord" {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	wantError(t, ts.get(t, "/api/sources/nope", bearer...), 404)

	// PATCH merges; a secret sent back masked stays; null removes a key.
	r = ts.do(t, "PATCH", "/api/sources/acme-discord", strings.NewReader(`{"name":"Acme","enabled":false,"config":{"token":"***","channelIds":["42"],"apiBase":null},"stats":{"x":1}}`), adminJSON...)
	rec = r.json(t)
	cfg = rec["config"].(map[string]any)
	if r.status != 200 || rec["name"] != "Acme" || rec["enabled"] != false || rec["schedule"] != "1h" || cfg["token"] != "***" || cfg["guildId"] == nil {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	if src, _ := ts.eng.Source("acme-discord"); src.Config["token"] != secretToken {
		t.Fatalf("the stored token changed: %v", src.Config["token"])
	}
	for _, c := range []struct {
		body   string
		status int
		word   string
	}{
		{`{"type":"slack"}`, 400, "type cannot change"},
		{`{"config":{"guildId":"abc"}}`, 400, "config.guildId"},
		{`{"config":{"color":"red"}}`, 400, "config.color"},
		{`{"schedule":"5s"}`, 400, "schedule"},
		{`{"name":""}`, 400, "name"},
		{`{"bogus":1}`, 400, "bogus"},
		{`{"name":1}`, 400, "name"},
		{`[1]`, 400, "object"},
	} {
		wantError(t, ts.do(t, "PATCH", "/api/sources/acme-discord", strings.NewReader(c.body), adminJSON...), c.status, c.word)
	}
	wantError(t, ts.do(t, "PATCH", "/api/sources/nope", strings.NewReader(`{"name":"x"}`), adminJSON...), 404)

	// Creation errors name the field.
	for _, c := range []struct {
		body string
		word string
	}{
		{`{"name":"x"}`, "type"},
		{`{"type":"web"}`, "name"},
		{`{"name":"x","type":"ftp"}`, "type"},
		{`{"name":"x","type":"web","config":{}}`, "config.urls"},
		{`{"name":"x","type":"web","config":{"urls":["https://a.example/"],"maxPages":-1}}`, "config.maxPages"},
		{`{"name":"x","type":"discord","config":{"token":"t"}}`, "config.guildId"},
		{`{"id":"Bad Id","name":"x","type":"upload"}`, "id"},
		{`{"name":"x","type":"upload","enabled":"yes"}`, "enabled"},
	} {
		wantError(t, ts.do(t, "POST", "/api/sources", strings.NewReader(c.body), adminJSON...), 400, c.word)
	}
	wantError(t, ts.do(t, "POST", "/api/sources", strings.NewReader(`{"name":"x","type":"upload"}`), "Authorization", "Bearer "+testKey), 415)

	// Admin only.
	for _, m := range []string{"GET /api/sources", "POST /api/sources", "GET /api/sources/acme-discord", "PATCH /api/sources/acme-discord",
		"DELETE /api/sources/acme-discord", "POST /api/sources/acme-discord/crawl", "POST /api/sources/acme-discord/test", "POST /api/sources/acme-discord/import"} {
		method, path, _ := strings.Cut(m, " ")
		wantError(t, ts.do(t, method, path, nil), 401)
	}

	// Crawling a discord source without a bot token, a type without a
	// crawler; deleting the built-in source.
	wantError(t, ts.do(t, "POST", "/api/sources/acme-discord-2/crawl", nil, bearer...), 400, "config.token")
	ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"tg","name":"Chat","type":"telegram"}`), adminJSON...)
	wantError(t, ts.do(t, "POST", "/api/sources/tg/crawl", nil, bearer...), 400, "nothing to crawl")
	r = ts.do(t, "POST", "/api/sources/acme-discord-2/test", nil, bearer...)
	if m := r.json(t); r.status != 200 || m["ok"] != false || m["error"] == "" {
		t.Fatalf("test: %d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "DELETE", "/api/sources/uploads", nil, bearer...), 400, "built-in")

	// DELETE, then it is gone.
	if r = ts.do(t, "DELETE", "/api/sources/acme-discord-2", nil, bearer...); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	wantError(t, ts.get(t, "/api/sources/acme-discord-2", bearer...), 404)
	wantError(t, ts.do(t, "DELETE", "/api/sources/acme-discord-2", nil, bearer...), 404)

	// The token never left the server, in answers or in its log.
	all := ts.get(t, "/api/sources", bearer...)
	if strings.Contains(string(all.body), secretToken) || strings.Contains(logs.String(), secretToken) {
		t.Fatal("the secret token appears in a response or the log")
	}
	if !strings.Contains(logs.String(), "source created") {
		t.Fatal("the log is not being captured")
	}
}

// TestSourceCreateIDs: POST /api/sources derives ids with the store's one
// slug function ("Café" → cafe, as channel slugs), a given id that exists
// is 409 and leaves the stored source alone, and creations at the same
// time of one name all get ids of their own.
func TestSourceCreateIDs(t *testing.T) {
	ts := start(t)
	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"name":"Café","type":"upload"}`), adminJSON...)
	if r.status != 201 || r.json(t)["id"] != "cafe" || r.header.Get("Location") != "/api/sources/cafe" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got := record.Slugify("Café"); got != "cafe" {
		t.Fatalf("Slugify(Café) = %q", got)
	}
	r = ts.do(t, "POST", "/api/sources", strings.NewReader(`{"name":"café","type":"upload"}`), adminJSON...)
	if r.status != 201 || r.json(t)["id"] != "cafe-2" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"cafe","name":"Other","type":"web","config":{"urls":["https://a.example/"]}}`), adminJSON...), 409, "cafe", "exists")
	if r = ts.get(t, "/api/sources/cafe", bearer...); r.status != 200 || r.json(t)["name"] != "Café" || r.json(t)["type"] != "upload" {
		t.Fatalf("after the conflict: %d %s", r.status, r.body)
	}

	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequest("POST", ts.url+"/api/sources", strings.NewReader(`{"name":"Wren site","type":"upload"}`))
			if err != nil {
				errs[i] = err
				return
			}
			for k := 0; k+1 < len(adminJSON); k += 2 {
				req.Header.Set(adminJSON[k], adminJSON[k+1])
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer res.Body.Close()
			var rec struct{ ID string }
			if err := json.NewDecoder(res.Body).Decode(&rec); err != nil || res.StatusCode != 201 {
				errs[i] = fmt.Errorf("status %d: %v", res.StatusCode, err)
			}
			ids[i] = rec.ID
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"wren-site", "wren-site-2", "wren-site-3", "wren-site-4", "wren-site-5", "wren-site-6", "wren-site-7", "wren-site-8"}
	if slices.Sort(ids); !slices.Equal(ids, want) {
		t.Fatalf("ids of concurrent creations: %v", ids)
	}
}

// siteServer is a two-page site with a robots.txt and a sitemap; hold
// makes its pages wait until released.
type siteServer struct {
	*httptest.Server
	mu    sync.Mutex
	pages map[string]string
	hold  chan struct{}
}

func newSiteServer(t *testing.T) *siteServer {
	s := &siteServer{pages: map[string]string{
		"/":      `<html><head><title>Gadget docs</title></head><body><p>Gadgets need flux capacitors.</p><a href="/setup">Setup</a></body></html>`,
		"/setup": `<html><head><title>Setup</title></head><body><h1>Setup</h1><p>Install the quasiperiodic widget first.</p></body></html>`,
	}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		hold := s.hold
		body, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprintf(w, "User-agent: *\nDisallow: /admin\nSitemap: %s/sitemap.xml\n", s.URL)
			return
		}
		if r.URL.Path == "/sitemap.xml" {
			fmt.Fprintf(w, `<urlset><url><loc>%s/setup</loc></url></urlset>`, s.URL)
			return
		}
		if hold != nil {
			<-hold
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestSourceCrawlAndDelete(t *testing.T) {
	dir := t.TempDir()
	site := newSiteServer(t)
	eng, idx, err := semantic.Open(engine.Options{DataDir: dir}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey})

	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"docs","name":"Gadget docs","type":"web","config":{"urls":["`+site.URL+`/"],"allowPrivate":true,"delayMs":1}}`), adminJSON...)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = ts.do(t, "POST", "/api/sources/docs/test", nil, bearer...)
	if m := r.json(t); m["ok"] != true || m["detail"] == "" || m["latencyMs"] == nil {
		t.Fatalf("test: %s", r.body)
	}
	r = ts.do(t, "POST", "/api/sources/docs/crawl", nil, bearer...)
	res := r.json(t)
	if r.status != 200 || res["jobId"] == "" || res["documents"] != 2.0 || res["channels"] != 0.0 || res["messages"] != 0.0 || res["status"] != "ok" {
		t.Fatalf("crawl: %d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "POST", "/api/sources/docs/crawl?full=maybe", nil, bearer...), 400, "full")
	rec := ts.get(t, "/api/sources/docs", bearer...).json(t)
	lc := rec["lastCrawl"].(map[string]any)
	if lc["jobId"] != res["jobId"] || lc["status"] != "ok" || lc["documents"] != 2.0 || rec["stats"].(map[string]any)["documents"] != 2.0 {
		t.Fatalf("record after the crawl: %v", rec)
	}

	// A crawl that is still running: a second one is refused.
	site.mu.Lock()
	site.hold = make(chan struct{})
	site.mu.Unlock()
	done := make(chan resp)
	go func() { done <- ts.do(t, "POST", "/api/sources/docs/crawl?full=true", nil, bearer...) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if rec := ts.get(t, "/api/sources/docs", bearer...).json(t); rec["lastCrawl"].(map[string]any)["status"] == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crawl did not start")
		}
	}
	wantError(t, ts.do(t, "POST", "/api/sources/docs/crawl", nil, bearer...), 409, "running")
	close(site.hold)
	if r := <-done; r.status != 200 {
		t.Fatalf("held crawl: %d %s", r.status, r.body)
	}

	// Imports go to chat sources: the demo's Discord export.
	export, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"chat","name":"Chat","type":"discord","config":{"guildId":"1102345678901234567"}}`), adminJSON...)
	body, ct := multipartBody(t, map[string]string{"export.json": string(export)})
	r = ts.do(t, "POST", "/api/sources/chat/import", body, "Content-Type", ct, "Authorization", "Bearer "+testKey)
	imp := r.json(t)
	if r.status != 200 || imp["format"] != "discord" || imp["messages"].(float64) < 100 || imp["changed"] != imp["stored"] {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	r = ts.do(t, "POST", "/api/sources/chat/import", bytes.NewReader(export), bearer...) // the file as the body, again
	if m := r.json(t); r.status != 200 || m["changed"] != 0.0 {
		t.Fatalf("re-import: %d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "POST", "/api/sources/chat/import", strings.NewReader(`{"guild":{"id":"1"},"channel":{"id":"2","name":"x"},"messages":[{"id":"3","type":"Default","timestamp":"yesterday","content":"hi"}]}`), bearer...), 400, "timestamp")
	wantError(t, ts.do(t, "POST", "/api/sources/chat/import", strings.NewReader(`just text`), bearer...), 400, "export")
	wantError(t, ts.do(t, "POST", "/api/sources/docs/import", bytes.NewReader(export), bearer...), 400, "imports")
	if st := eng.SourceStats("chat", true); st.Messages != int(imp["stored"].(float64)) {
		t.Fatalf("a malformed import changed the source: %+v", st)
	}

	// Everything both sources hold is findable now…
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := idx.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	findable := func(ts *testServer) (lexical, meaning int, pages []string) {
		for _, q := range []string{"quasiperiodic widget", "flux capacitors"} {
			m := ts.get(t, "/api/search?q="+strings.ReplaceAll(q, " ", "+")).json(t)
			lexical += len(m["documents"].([]any))
			sem := ts.get(t, "/api/semantic-search?q="+strings.ReplaceAll(q, " ", "+")+"&source=docs", bearer...).json(t)
			meaning += len(sem["results"].([]any))
		}
		for _, d := range ts.get(t, "/api/documents?limit=1000").json(t)["documents"].([]any) {
			if d.(map[string]any)["sourceId"] == "docs" {
				pages = append(pages, d.(map[string]any)["slug"].(string))
			}
		}
		return
	}
	lexical, meaning, slugs := findable(ts)
	if lexical == 0 || meaning == 0 || len(slugs) != 2 {
		t.Fatalf("before the delete: %d lexical, %d semantic, pages %v", lexical, meaning, slugs)
	}
	if r := ts.get(t, "/d/"+slugs[0]); r.status != 200 {
		t.Fatalf("page: %d", r.status)
	}

	// …and nothing of the web source after DELETE, nor after a restart.
	if r := ts.do(t, "DELETE", "/api/sources/docs", nil, bearer...); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	check := func(ts *testServer, when string) {
		lexical, meaning, left := findable(ts)
		if lexical != 0 || meaning != 0 || len(left) != 0 {
			t.Fatalf("%s: %d lexical, %d semantic hits, documents %v", when, lexical, meaning, left)
		}
		for _, slug := range slugs {
			if r := ts.get(t, "/d/"+slug); r.status != 404 {
				t.Fatalf("%s: page /d/%s answers %d", when, slug, r.status)
			}
		}
		if r := ts.get(t, "/api/sources/docs", bearer...); r.status != 404 {
			t.Fatalf("%s: the source answers %d", when, r.status)
		}
		if st := ts.eng.SourceStats("chat", true); st.Messages == 0 {
			t.Fatalf("%s: the other source lost its messages", when)
		}
	}
	check(ts, "after DELETE")
	ts.srv.Shutdown(context.Background())
	eng.Close()
	eng2, idx2, err := semantic.Open(engine.Options{DataDir: dir}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(serve(t, eng2, idx2, Options{APISecretKey: testKey}), "after a restart")
}

// TestSourceCrawlRefusesLoopback: without allowPrivate, a web source on a
// loopback address is refused and says why.
func TestSourceCrawlRefusesLoopback(t *testing.T) {
	site := newSiteServer(t)
	ts := start(t)
	ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"inner","name":"Inner","type":"web","config":{"urls":["`+site.URL+`/"]}}`), adminJSON...)
	r := ts.do(t, "POST", "/api/sources/inner/crawl", nil, bearer...)
	if m := r.json(t); r.status != 502 || !strings.Contains(m["error"].(string), "private") || m["jobId"] == "" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = ts.do(t, "POST", "/api/sources/inner/test", nil, bearer...)
	if m := r.json(t); m["ok"] != false || !strings.Contains(m["error"].(string), "private") {
		t.Fatalf("%s", r.body)
	}
}

// FuzzSourceBody sends arbitrary bodies to POST and PATCH: never a 5xx,
// and a stored source always reads back with its secrets masked.
func FuzzSourceBody(f *testing.F) {
	ts := start(f)
	h := ts.srv.Handler()
	f.Add(`{"name":"Acme","type":"discord","config":{"token":"t","guildId":"1"}}`)
	f.Add(`{"name":"Site","type":"web","config":{"urls":["https://a.example/"],"maxPages":3},"schedule":"1h","enabled":false}`)
	f.Add(`{"name":"x","type":"web","config":{"urls":null,"sitemap":"https://a.example/s.xml"},"stats":{}}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, target := range []string{"POST /api/sources", "PATCH /api/sources/uploads"} {
			method, path, _ := strings.Cut(target, " ")
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod(method)
			ctx.Request.SetRequestURI(path)
			ctx.Request.Header.SetContentType("application/json")
			ctx.Request.Header.Set("Authorization", "Bearer "+testKey)
			ctx.Request.SetBodyString(body)
			h(&ctx)
			st := ctx.Response.StatusCode()
			if st >= 500 {
				t.Fatalf("%s %q: status %d: %s", target, body, st, ctx.Response.Body())
			}
			if st < 300 && strings.Contains(body, `"token":"`) && bytes.Contains(ctx.Response.Body(), []byte(`"token":"`)) &&
				!bytes.Contains(ctx.Response.Body(), []byte(`"token":"***"`)) && !bytes.Contains(ctx.Response.Body(), []byte(`"token":""`)) {
				t.Fatalf("a secret came back: %s", ctx.Response.Body())
			}
		}
	})
}

func TestSourceBodyBound(t *testing.T) {
	ts := start(t)
	big := `{"name":"x","type":"web","config":{"urls":["https://a.example/` + strings.Repeat("a", 1<<20) + `"]}}`
	wantError(t, ts.do(t, "POST", "/api/sources", strings.NewReader(big), adminJSON...), 413)
}

// authLog is a fake GitHub REST API that answers the repository lookup and
// keeps the Authorization header of every request.
type authLog struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newAuthLog(t *testing.T) *authLog {
	a := &authLog{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"full_name":"acme/gadget","private":false,"has_issues":true,"has_discussions":false}`)
	}))
	t.Cleanup(a.Close)
	return a
}

// seen returns and forgets the Authorization headers received.
func (a *authLog) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.auth
	a.auth = nil
	return out
}

// TestSourcePatchMovesSecrets: a PATCH that points a source at another
// server drops its stored secrets unless it sends new ones, so a test call
// after it carries no credentials there.
func TestSourcePatchMovesSecrets(t *testing.T) {
	ts := start(t)
	home, elsewhere := newAuthLog(t), newAuthLog(t)
	patch := func(id, body string) map[string]any {
		t.Helper()
		r := ts.do(t, "PATCH", "/api/sources/"+id, strings.NewReader(body), adminJSON...)
		if r.status != 200 {
			t.Fatalf("patch %s: %d %s", body, r.status, r.body)
		}
		return r.json(t)["config"].(map[string]any)
	}
	test := func(id string) map[string]any {
		t.Helper()
		r := ts.do(t, "POST", "/api/sources/"+id+"/test", nil, bearer...)
		if r.status != 200 {
			t.Fatalf("test: %d %s", r.status, r.body)
		}
		return r.json(t)
	}
	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"gh","name":"Gadget","type":"github","config":{"repo":"acme/gadget","token":"`+secretToken+`","apiBase":"`+home.URL+`","allowPrivate":true}}`), adminJSON...)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if m := test("gh"); m["ok"] != true || !slices.Equal(home.seen(), []string{"Bearer " + secretToken}) {
		t.Fatalf("test at home: %v", m)
	}

	// Other fields change: the token stays.
	if cfg := patch("gh", `{"name":"Gadget 2","config":{"token":"***","repo":"acme/gizmo"}}`); cfg["token"] != "***" {
		t.Fatalf("a rename lost the token: %v", cfg)
	}
	patch("gh", `{"config":{"repo":"acme/gadget","apiBase":"`+home.URL+`/"}}`) // same origin
	if src, _ := ts.eng.Source("gh"); src.Config["token"] != secretToken {
		t.Fatalf("the stored token changed: %v", src.Config["token"])
	}

	// Moved elsewhere, the token sent back masked: it is dropped.
	if cfg := patch("gh", `{"config":{"apiBase":"`+elsewhere.URL+`","token":"***"}}`); cfg["token"] != nil {
		t.Fatalf("the token survived a move: %v", cfg)
	}
	if cfg := ts.get(t, "/api/sources/gh", bearer...).json(t)["config"].(map[string]any); cfg["token"] != nil {
		t.Fatalf("GET after the move shows a token: %v", cfg)
	}
	if src, _ := ts.eng.Source("gh"); src.Config["token"] != nil {
		t.Fatalf("the stored token survived a move: %v", src.Config["token"])
	}
	if m := test("gh"); m["ok"] != true || !slices.Equal(elsewhere.seen(), []string{""}) { // GitHub answers anonymous calls
		t.Fatalf("test elsewhere: %v", m)
	}

	// Moved with a new token: the new one is kept and used.
	if cfg := patch("gh", `{"config":{"apiBase":"`+home.URL+`","token":"fresh-token"}}`); cfg["token"] != "***" {
		t.Fatalf("the new token was dropped: %v", cfg)
	}
	if m := test("gh"); m["ok"] != true || !slices.Equal(home.seen(), []string{"Bearer fresh-token"}) {
		t.Fatalf("test with the new token: %v", m)
	}

	// A Discord source moved elsewhere has no token left to send.
	r = ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"dc","name":"Chat","type":"discord","config":{"token":"`+secretToken+`","guildId":"1","apiBase":"`+home.URL+`","allowPrivate":true}}`), adminJSON...)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	patch("dc", `{"config":{"apiBase":"`+elsewhere.URL+`/api/v10"}}`)
	if m := test("dc"); m["ok"] != false || !strings.Contains(m["error"].(string), "config.token") || len(elsewhere.seen()) != 0 {
		t.Fatalf("test of a moved discord source: %v", m)
	}
}
