package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sift-search/sift/record"
)

// operator drives the console over HTTP as a browser would: Basic Auth,
// the page's anti-CSRF token in every form, redirects not followed.
type operator struct {
	t     *testing.T
	ts    *testServer
	token string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func newOperator(t *testing.T, ts *testServer) *operator {
	t.Helper()
	o := &operator{t: t, ts: ts}
	page := o.get("/dashboard")
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no token on the dashboard: %.300s", page)
	}
	o.token = m[1]
	return o
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// request sends a request with the operator's credentials and header
// pairs, without following a redirect.
func (o *operator) request(method, path string, body io.Reader, header ...string) resp {
	o.t.Helper()
	req, err := http.NewRequest(method, o.ts.url+path, body)
	if err != nil {
		o.t.Fatal(err)
	}
	req.SetBasicAuth(testUser, testPass)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

// get returns a console page's HTML, failing the test on a status other
// than 200.
func (o *operator) get(path string) string {
	o.t.Helper()
	r := o.request("GET", path, nil)
	if r.status != 200 {
		o.t.Fatalf("GET %s: %d %.500s", path, r.status, r.body)
	}
	return string(r.body)
}

// form posts fields (name, value pairs) with the token, urlencoded.
func (o *operator) form(path string, fields ...string) resp {
	o.t.Helper()
	v := url.Values{"csrf": {o.token}}
	for i := 0; i+1 < len(fields); i += 2 {
		v.Add(fields[i], fields[i+1])
	}
	return o.request("POST", path, strings.NewReader(v.Encode()), "Content-Type", "application/x-www-form-urlencoded")
}

// upload posts files (name → content) as the multipart part "file" with
// the token and fields.
func (o *operator) upload(path string, files map[string]string, fields ...string) resp {
	o.t.Helper()
	body, ct := multipartBody(o.t, files, append([]string{"csrf", o.token}, fields...)...)
	return o.request("POST", path, body, "Content-Type", ct)
}

// done checks that r redirected to a page, fetches it and returns it; the
// page's flash must hold each of words.
func (o *operator) done(r resp, words ...string) string {
	o.t.Helper()
	if r.status != http.StatusSeeOther {
		o.t.Fatalf("status %d, want 303: %s", r.status, flashText(r.body))
	}
	page := o.get(r.header.Get("Location"))
	got := flashText([]byte(page))
	for _, w := range words {
		if !strings.Contains(got, w) {
			o.t.Errorf("outcome %q lacks %q", got, w)
		}
	}
	return page
}

// failed checks that r is a page with status and an error saying each of
// words.
func (o *operator) failed(r resp, status int, words ...string) {
	o.t.Helper()
	got := flashText(r.body)
	if r.status != status || !strings.Contains(string(r.body), "flash-error") {
		o.t.Fatalf("status %d, want %d with an error: %q", r.status, status, got)
	}
	for _, w := range words {
		if !strings.Contains(got, w) {
			o.t.Errorf("error %q lacks %q", got, w)
		}
	}
}

var flashBlock = regexp.MustCompile(`(?s)<div class="flash[^"]*"[^>]*>(.*?)</div>`)

// flashText is the outcome a page shows, as text.
func flashText(page []byte) string {
	m := flashBlock.FindSubmatch(page)
	if m == nil {
		return ""
	}
	text := regexp.MustCompile(`<[^>]+>`).ReplaceAll(m[1], nil)
	return strings.Join(strings.Fields(htmlUnescape(string(text))), " ")
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&quot;", `"`, "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(s)
}

// site serves a small web site for the web crawler.
func site(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "User-agent: *\nAllow: /\n") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<html><head><title>Wren handbook</title></head><body><main><p>Start with the <a href="/cron">cron guide</a>.</p></main></body></html>`)
		case "/cron":
			io.WriteString(w, `<html><head><title>Cron guide</title></head><body><main><p>Five fields: minute hour day month weekday.</p></main></body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestConsoleSources adds, edits, tests, crawls and deletes a web source
// through the console's forms.
func TestConsoleSources(t *testing.T) {
	ts := start(t)
	o := newOperator(t, ts)
	web := site(t)
	if page := o.get("/dashboard/add-source?type=web"); !strings.Contains(page, `name="cfg.urls"`) || !strings.Contains(page, `name="cfg.allowPrivate"`) {
		t.Fatalf("web form: %.500s", page)
	}
	o.done(o.form("/dashboard/sources", "type", "web", "name", "Wren <handbook>", "schedule", "", "visibility", "public", "enabled", "1",
		"cfg.urls", web.URL+"/\n\n", "cfg.allowPrivate", "1", "cfg.delayMs", "0", "cfg.maxPages", "10"), `Source "Wren <handbook>" added with id wren-handbook`)
	src, ok := ts.eng.Source("wren-handbook")
	if !ok || src.Type != "web" || src.Config["allowPrivate"] != true || src.Config["delayMs"] != 0.0 || !slices.Equal(src.Config["urls"].([]any), []any{web.URL + "/"}) {
		t.Fatalf("stored %+v", src)
	}

	// A bad form comes back with the operator's values and the API's message.
	r := o.form("/dashboard/sources", "type", "web", "name", "Second", "schedule", "every day", "cfg.urls", web.URL)
	o.failed(r, 400, "schedule must be empty")
	if !strings.Contains(string(r.body), `value="every day"`) || !strings.Contains(string(r.body), web.URL+"</textarea>") {
		t.Error("the failed form lost what was typed")
	}
	o.failed(o.form("/dashboard/sources", "type", "web", "name", "Dup", "id", "wren-handbook", "cfg.urls", web.URL), 409, "exists")

	o.done(o.form("/dashboard/sources/wren-handbook/test"), "Test passed in")
	page := o.done(o.form("/dashboard/sources/wren-handbook/crawl"), "Crawl finished: 0 channels, 0 messages, 2 documents touched; 0 deleted; 0 failed.")
	if !strings.Contains(page, "2 documents") || ts.eng.SourceStats("wren-handbook", true).Documents != 2 {
		t.Fatalf("after the crawl: %v", ts.eng.SourceStats("wren-handbook", true))
	}
	o.done(o.form("/dashboard/sources/wren-handbook/crawl", "full", "1"), "Full crawl finished")

	// Edit: an unchanged form keeps everything; changes apply; an emptied
	// setting returns to its default.
	o.done(o.form("/dashboard/sources/wren-handbook", "name", "Handbook", "schedule", "6h", "visibility", "private",
		"cfg.urls", web.URL+"/", "cfg.allowPrivate", "1", "cfg.delayMs", "", "cfg.maxPages", "10"), "Changes saved")
	src, _ = ts.eng.Source("wren-handbook")
	if src.Name != "Handbook" || src.Schedule != "6h" || src.Visibility != "private" || src.Enabled || src.Config["delayMs"] != 500.0 {
		t.Fatalf("edited %+v", src)
	}
	o.failed(o.form("/dashboard/sources/wren-handbook", "name", "Handbook", "cfg.maxPages", "many"), 400, "whole number")

	// Delete: a confirmation page, then the POST.
	if page := o.get("/dashboard/sources/wren-handbook/delete"); !strings.Contains(page, "Delete source &#34;Handbook&#34; and all its 0 messages and 2 documents?") {
		t.Fatalf("confirmation: %s", flashText([]byte(page)))
	}
	o.done(o.form("/dashboard/sources/wren-handbook/delete"), "deleted")
	if _, ok := ts.eng.Source("wren-handbook"); ok {
		t.Fatal("the source survived its deletion")
	}
	o.failed(o.form("/dashboard/sources/wren-handbook/crawl"), 404, "no source")
	if r := o.request("GET", "/dashboard/sources/wren-handbook", nil); r.status != 404 {
		t.Fatalf("deleted source's page: %d", r.status)
	}
}

// TestConsoleSecrets: a secret goes in, never comes out, stays when its
// field is left empty and goes when asked.
func TestConsoleSecrets(t *testing.T) {
	ts := start(t)
	o := newOperator(t, ts)
	const secret = "discord-token-SECRET-1234"
	discord := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message": "401: Unauthorized", "code": 0}`)
	}))
	defer discord.Close()
	o.done(o.form("/dashboard/sources", "type", "discord", "name", "Chat", "id", "chat", "visibility", "public", "enabled", "1",
		"cfg.token", secret, "cfg.guildId", "81384788765712384", "cfg.apiBase", discord.URL, "cfg.allowPrivate", "1"), "added")
	o.done(o.form("/dashboard/sources/chat/test"), "Test failed:", "401")
	bad := o.form("/dashboard/sources/chat", "name", "Chat", "schedule", "soon", "cfg.token", "another-SECRET-5678", "cfg.guildId", "81384788765712384")
	o.failed(bad, 400, "schedule")
	pages := []string{string(bad.body)}
	for _, p := range []string{"/dashboard", "/dashboard/sources/chat", "/dashboard/sources/chat/channels", "/dashboard/sources/chat/delete", "/dashboard/add-source?type=discord"} {
		pages = append(pages, o.get(p))
	}
	for i, p := range pages {
		if strings.Contains(p, "SECRET") {
			t.Errorf("page %d shows a secret", i)
		}
	}
	if !strings.Contains(pages[2], `type="password" id="cfg-token" name="cfg.token" value=""`) || !strings.Contains(pages[2], "a value is stored") {
		t.Errorf("the token field: %s", regexp.MustCompile(`<input type="password"[^>]*>`).FindString(pages[2]))
	}
	o.done(o.form("/dashboard/sources/chat", "name", "Chat 2", "cfg.token", "", "cfg.guildId", "81384788765712384", "cfg.apiBase", discord.URL, "cfg.allowPrivate", "1"), "saved")
	if src, _ := ts.eng.Source("chat"); src.Config["token"] != secret || src.Name != "Chat 2" {
		t.Fatalf("an empty secret field changed the token: %v", src.Config["token"])
	}
	o.done(o.form("/dashboard/sources/chat", "name", "Chat 2", "cfg.token", "", "cfg.token.clear", "1", "cfg.guildId", "81384788765712384", "cfg.apiBase", discord.URL), "saved")
	if src, _ := ts.eng.Source("chat"); src.Config["token"] != nil {
		t.Fatalf("the token was not removed: %v", src.Config["token"])
	}
}

// TestConsoleImportChannelsOptOuts imports an export, then manages its
// channels and an author's opt-out.
func TestConsoleImportChannelsOptOuts(t *testing.T) {
	ts := start(t)
	o := newOperator(t, ts)
	export, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	o.done(o.form("/dashboard/sources", "type", "discord", "name", "Wren Discord", "id", "wren", "enabled", "1", "cfg.guildId", "1102345678901234567"), "added")
	o.done(o.upload("/dashboard/sources/wren/import", map[string]string{"export.json": string(export)}), "Imported a discord export: 1 channel,")
	o.done(o.upload("/dashboard/sources/wren/import", map[string]string{"export.json": string(export)}), "0 new or changed")
	o.failed(o.upload("/dashboard/sources/wren/import", map[string]string{"x.json": "{}"}), 400, "not a DiscordChatExporter")
	chans, _, _ := ts.eng.SourceChannels("wren")
	if len(chans) != 1 || chans[0].Name != "help" {
		t.Fatalf("channels %+v", chans)
	}
	ch := chans[0]
	page := o.get("/dashboard/sources/wren/channels")
	if !strings.Contains(page, ">help</a>") || !strings.Contains(page, `<option value="inherit" selected>`) {
		t.Fatalf("channels page: %.2000s", page)
	}

	o.done(o.form("/dashboard/sources/wren/channels/visibility", "channel", ch.ID, "visibility", "private"), `Channel "help" is set to private: hidden from`)
	if chans, _, _ := ts.eng.SourceChannels("wren"); !chans[0].Hidden || chans[0].Visibility != "private" {
		t.Fatalf("visibility not set: %+v", chans[0])
	}
	o.failed(o.form("/dashboard/sources/wren/channels/visibility", "channel", ch.ID, "visibility", "secret"), 400, "visibility must be")
	o.failed(o.form("/dashboard/sources/wren/channels/visibility", "channel", "404", "visibility", "public"), 404, "no channel")

	// An opt-out removes the author's messages; removing it lets them back.
	var author string
	msgs, _, err := ts.eng.ChannelMessages(ch.Slug, 0, 1)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("messages of help: %v", err)
	}
	author = msgs[0].Author
	before := ts.eng.SourceStats("wren", true).Messages
	o.done(o.form("/dashboard/sources/wren/optouts", "author", author), author+" opted out:", "removed")
	if src, _ := ts.eng.Source("wren"); !slices.Contains(src.OptOuts, author) || ts.eng.SourceStats("wren", true).Messages >= before {
		t.Fatalf("opt-out of %s: %v, %d messages of %d", author, src.OptOuts, ts.eng.SourceStats("wren", true).Messages, before)
	}
	if page := o.get("/dashboard/sources/wren"); !strings.Contains(page, `name="author" value="`+author+`"`) {
		t.Fatal("the opt-out is not listed")
	}
	o.failed(o.form("/dashboard/sources/wren/optouts", "author", ""), 400, "author must be")
	o.done(o.form("/dashboard/sources/wren/optouts/delete", "author", author), "opt-out removed")
	if src, _ := ts.eng.Source("wren"); len(src.OptOuts) != 0 {
		t.Fatalf("opt-outs %v", src.OptOuts)
	}

	// Delete a channel (after a confirmation), then restore it.
	if page := o.get("/dashboard/sources/wren/channels/delete?channel=" + ch.ID); !strings.Contains(page, "Delete channel &#34;help&#34; and its") {
		t.Fatalf("confirmation: %.1500s", page)
	}
	page = o.done(o.form("/dashboard/sources/wren/channels/delete", "channel", ch.ID), "deleted")
	if !strings.Contains(page, "<code>"+ch.ID+"</code>") {
		t.Fatal("the deleted channel is not listed for restoring")
	}
	if _, excluded, _ := ts.eng.SourceChannels("wren"); !slices.Equal(excluded, []string{ch.ID}) {
		t.Fatalf("excluded %v", excluded)
	}
	o.done(o.form("/dashboard/sources/wren/channels/restore", "channel", ch.ID), "restored")
	if _, excluded, _ := ts.eng.SourceChannels("wren"); len(excluded) != 0 {
		t.Fatalf("excluded %v", excluded)
	}
	o.failed(o.form("/dashboard/sources/wren/channels/restore", "channel", ch.ID), 404, "not excluded")
}

// TestConsoleUploadAndSettings uploads documents and renames the site.
func TestConsoleUploadAndSettings(t *testing.T) {
	ts := start(t)
	o := newOperator(t, ts)
	page := o.done(o.upload("/dashboard/documents", map[string]string{
		"cron.md": "# Cron <syntax>\n\nFive fields.", "notes.txt": "Plain notes.",
	}, "sourceId", "uploads"), "Stored 2 documents:", "Cron <syntax> (uploads,")
	if !strings.Contains(page, `<a href="/d/cron-syntax">`) || len(ts.eng.SourceDocuments(record.UploadsSourceID)) != 2 {
		t.Fatalf("upload: %s", flashText([]byte(page)))
	}
	o.failed(o.upload("/dashboard/documents", map[string]string{"x.pdf": "%PDF"}), 415, "unsupported type")
	o.failed(o.upload("/dashboard/documents", map[string]string{"a.txt": "a"}, "sourceId", "nope"), 400, "unknown source")

	o.done(o.form("/dashboard/settings", "siteName", "Wren <Search>", "siteDescription", "Answers about Wren."), `The site is now called "Wren <Search>"`)
	if home := string(htmlGet(t, ts, "/").body); !strings.Contains(home, "Wren &lt;Search&gt;") {
		t.Fatal("the home page does not show the new name")
	}
	if page := o.get("/dashboard"); !strings.Contains(page, `value="Wren &lt;Search&gt;"`) || !strings.Contains(page, "Answers about Wren.</textarea>") {
		t.Fatal("the settings form does not show the stored values")
	}
	o.failed(o.form("/dashboard/settings", "siteName", strings.Repeat("n", 201)), 400, "at most 200")
	o.done(o.form("/dashboard/settings", "siteName", "", "siteDescription", ""), "Settings saved")
	if n := ts.srv.siteName(); n != strings.TrimPrefix(ts.url, "http://") {
		t.Fatalf("the default name is back: %q", n)
	}
}

// consoleActions are a valid request to each console POST endpoint, in an
// order that lets each succeed on the state left by those before; the
// discord source "wren" with the channel "1" and the web source "web"
// exist.
var consoleActions = []struct {
	path   string
	fields []string
	files  map[string]string // multipart when set
}{
	{path: "/dashboard/settings", fields: []string{"siteName", "Renamed"}},
	{path: "/dashboard/settings/logo", files: map[string]string{"logo.png": string(testPNG(4))}},
	{path: "/dashboard/settings/logo/delete"},
	{path: "/dashboard/sources", fields: []string{"type", "upload", "name", "Extra", "id", "extra"}},
	{path: "/dashboard/sources/extra", fields: []string{"name", "Extra 2"}},
	{path: "/dashboard/sources/extra/delete"},
	{path: "/dashboard/documents", files: map[string]string{"a.txt": "alpha"}},
	{path: "/dashboard/sources/wren/import", files: map[string]string{"export.json": "@demo"}},
	{path: "/dashboard/sources/web/test"},
	{path: "/dashboard/sources/web/crawl"},
	{path: "/dashboard/sources/wren/channels/visibility", fields: []string{"channel", "1", "visibility", "private"}},
	{path: "/dashboard/sources/wren/channels/delete", fields: []string{"channel", "1"}},
	{path: "/dashboard/sources/wren/channels/restore", fields: []string{"channel", "1"}},
	{path: "/dashboard/sources/wren/optouts", fields: []string{"author", "ana"}},
	{path: "/dashboard/sources/wren/optouts/delete", fields: []string{"author", "ana"}},
}

// TestConsoleRefusals: each console action is refused (403, nothing
// changed) from another site, without the token or with a wrong one, and
// with a Bearer token; the same request from the console itself works.
func TestConsoleRefusals(t *testing.T) {
	ts := start(t)
	o := newOperator(t, ts)
	export, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.eng.PutSource(record.Source{ID: "wren", Name: "Wren", Type: "discord", Enabled: true, Config: map[string]any{"guildId": "1102345678901234567"}}); err != nil {
		t.Fatal(err)
	}
	web := record.Source{ID: "web", Name: "Web", Type: "web", Enabled: true,
		Config: map[string]any{"urls": []any{site(t).URL + "/"}, "allowPrivate": true, "delayMs": 0.0}}
	if _, err := ts.eng.PutSource(web); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.eng.PutChannels([]record.Channel{{SourceID: "wren", ID: "1", Name: "general"}}); err != nil {
		t.Fatal(err)
	}
	body := func(a int, token string) (io.Reader, string) {
		act := consoleActions[a]
		if act.files != nil {
			files := map[string]string{}
			for n, c := range act.files {
				if c == "@demo" {
					c = string(export)
				}
				files[n] = c
			}
			return multipartBody(t, files, append([]string{"csrf", token}, act.fields...)...)
		}
		v := url.Values{}
		if token != "" {
			v.Set("csrf", token)
		}
		for i := 0; i+1 < len(act.fields); i += 2 {
			v.Add(act.fields[i], act.fields[i+1])
		}
		return strings.NewReader(v.Encode()), "application/x-www-form-urlencoded"
	}
	refused := []struct {
		name   string
		token  string
		header []string
		status int
	}{
		{"cross-site", o.token, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site, another origin", o.token, []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"foreign Origin", o.token, []string{"Origin", "https://evil.example"}, 403},
		{"no token", "", nil, 403},
		{"wrong token", o.token[:len(o.token)-2] + "xx", nil, 403},
	}
	for a, act := range consoleActions {
		for _, ref := range refused {
			seq := ts.eng.Seq()
			b, ct := body(a, ref.token)
			r := o.request("POST", act.path, b, append([]string{"Content-Type", ct}, ref.header...)...)
			if r.status != ref.status || ts.eng.Seq() != seq {
				t.Fatalf("%s %s: %d (want %d), changes %d", ref.name, act.path, r.status, ref.status, ts.eng.Seq()-seq)
			}
			if !strings.Contains(flashText(r.body), "Refused") {
				t.Errorf("%s %s: no reason given: %q", ref.name, act.path, flashText(r.body))
			}
		}
		b, ct := body(a, o.token)
		r := ts.do(t, "POST", act.path, b, "Content-Type", ct, "Authorization", "Bearer "+testKey)
		if r.status != 401 {
			t.Fatalf("Bearer %s: %d", act.path, r.status)
		}
		b, ct = body(a, o.token)
		r = o.request("POST", act.path, b, "Content-Type", ct, "Sec-Fetch-Site", "same-origin", "Origin", ts.url)
		if r.status != http.StatusSeeOther {
			t.Fatalf("same-origin %s: %d %q", act.path, r.status, flashText(r.body))
		}
	}
	if ts.srv.siteName() != "Renamed" || len(ts.eng.SourceDocuments(record.UploadsSourceID)) != 1 {
		t.Fatal("the accepted actions did not all apply")
	}

	// The token is the session's: other credentials get another.
	if ts.srv.console.basicToken([]byte(basic(testUser, testPass))) != o.token || ts.srv.console.basicToken([]byte(basic(testUser, "other"))) == o.token {
		t.Fatal("the token does not follow the credentials")
	}
	if r := o.request("GET", "/dashboard", nil, "Authorization", "Bearer "+testKey); r.status != 401 {
		t.Fatalf("Bearer on /dashboard: %d", r.status)
	}
}

// TestConsolePageStructure checks each console page as TestPageStructure
// checks the public ones.
func TestConsolePageStructure(t *testing.T) {
	ts := pageSite(t)
	o := newOperator(t, ts)
	for _, path := range []string{"/dashboard", "/dashboard/add-source", "/dashboard/add-source?type=web", "/dashboard/add-source?type=discord",
		"/dashboard/sources/chat", "/dashboard/sources/chat/channels", "/dashboard/sources/chat/delete", "/dashboard/sources/uploads"} {
		page := o.get(path)
		if n := strings.Count(page, "<h1"); n != 1 {
			t.Errorf("%s: %d h1", path, n)
		}
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if ids[m[1]] {
				t.Errorf("%s: id %q twice", path, m[1])
			}
			ids[m[1]] = true
		}
		for _, m := range regexp.MustCompile(`<(?:input|select|textarea)[^>]* id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if !strings.Contains(page, `for="`+m[1]+`"`) {
				t.Errorf("%s: input %s has no label", path, m[1])
			}
		}
		if strings.Contains(page, "<th>") {
			t.Errorf("%s: a th without scope", path)
		}
		if strings.Contains(page, "<script") {
			t.Errorf("%s: a script; the console works without JavaScript", path)
		}
		inert(t, path, []byte(page))
	}
	if r := o.request("GET", "/dashboard/add-source?type=fax", nil); r.status != 404 || !strings.Contains(flashText(r.body), `no source type "fax"`) {
		t.Fatalf("unknown type: %d %q", r.status, flashText(r.body))
	}
}

// TestConsoleFlashBound: the outcomes kept for the next page are bounded.
func TestConsoleFlashBound(t *testing.T) {
	c := newFlashStore()
	first := c.put(flash{Text: "first"})
	if f := c.get(first); f == nil || f.Text != "first" {
		t.Fatalf("get: %+v", f)
	}
	for range maxFlash + 10 {
		c.put(flash{Text: "more"})
	}
	if len(c.byID) > maxFlash || c.get(first) != nil || c.get("nope") != nil {
		t.Fatalf("%d flashes kept; the oldest still there: %v", len(c.byID), c.get(first) != nil)
	}
}
