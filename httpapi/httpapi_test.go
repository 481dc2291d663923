package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

type testServer struct {
	url string
	eng *engine.Engine
	idx *semantic.Index // the semantic index following eng
	srv *Server
}

const (
	testKey  = "s3cret-key"
	testUser = "admin"
	testPass = "pa55word"
)

// start serves a fresh in-memory engine, with its semantic index, on a
// real loopback listener.
func start(t testing.TB, mod ...func(*Options)) *testServer {
	t.Helper()
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{APISecretKey: testKey, AdminUser: testUser, AdminPassword: testPass}
	for _, m := range mod {
		m(&opts)
	}
	return serve(t, eng, idx, opts)
}

// serve runs a server for eng and idx, the semantic index following it,
// on a loopback port.
func serve(t testing.TB, eng *engine.Engine, idx *semantic.Index, opts Options) *testServer {
	t.Helper()
	return serveAsking(t, eng, idx, opts, ask.Options{})
}

// serveAsking runs a server for eng and idx, the semantic index following
// it, on a loopback port, with an asker of aopts and a crawl runner wired
// as cmd/sift wires them. A nil idx is an engine without a semantic index:
// the server gets an empty index that follows nothing, so searching by
// meaning fails.
func serveAsking(t testing.TB, eng *engine.Engine, idx *semantic.Index, opts Options, aopts ask.Options) *testServer {
	t.Helper()
	if idx == nil {
		idx = semantic.New(semantic.Options{})
	}
	if opts.MaxUploadBytes == 0 {
		opts.MaxUploadBytes = 1 << 20
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.BaseURL = "http://" + ln.Addr().String()
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics()
	}
	aopts.Link, aopts.Logger = HitLinks(opts.BaseURL), opts.Logger
	opts.Semantic = idx
	opts.Asker = ask.New(idx, aopts)
	runner := crawl.NewRunner(eng, crawl.RunnerOptions{Logger: opts.Logger, Env: crawl.Env{UserAgent: UserAgent(opts.Version, opts.BaseURL)},
		OnResult: opts.Metrics.ObserveCrawl, OnImport: opts.Metrics.ObserveImport})
	opts.Crawler = runner
	srv := New(eng, opts)
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Shutdown(t.Context())
		runner.Close()
		eng.Close()
	})
	return &testServer{url: opts.BaseURL, eng: eng, idx: idx, srv: srv}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body not JSON: %v: %.200s", r.status, err, r.body)
	}
	return m
}

// send makes a request with header name/value pairs; the caller closes
// the response's body.
func (ts *testServer) send(t testing.TB, method, path string, body io.Reader, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (ts *testServer) do(t testing.TB, method, path string, body io.Reader, header ...string) resp {
	t.Helper()
	res := ts.send(t, method, path, body, header...)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

// raw writes request as is and reads the answer. It is for requests the
// server refuses before reading them whole: the server hangs up with
// bytes unread, so writing may fail while the answer is already on its way,
// which net/http reports as a broken connection.
func (ts *testServer) raw(t testing.TB, request string) resp {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, request) // may fail once the server has answered
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

func (ts *testServer) get(t testing.TB, path string, header ...string) resp {
	return ts.do(t, "GET", path, nil, header...)
}

var bearer = []string{"Authorization", "Bearer " + testKey}

// wantError checks a JSON error of the given status whose message mentions each of words.
func wantError(t testing.TB, r resp, status int, words ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	m := r.json(t)
	msg, _ := m["error"].(string)
	if msg == "" || m["code"] == "" {
		t.Fatalf("error body without error/code: %s", r.body)
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
}

func seedChat(t testing.TB, e *engine.Engine) {
	t.Helper()
	if _, err := e.PutSource(record.Source{ID: "wren-discord", Name: "Wren Discord", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{{SourceID: "wren-discord", ID: "1", Name: "help"}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 4, 1, 9, 30, 0, 0, time.UTC)
	if _, err := e.PutMessages([]record.Message{
		{SourceID: "wren-discord", ChannelID: "1", ID: "11", Author: "ana.k", AuthorName: "Ana", Content: "webhook signature mismatch behind nginx", Timestamp: t0},
		{SourceID: "wren-discord", ChannelID: "1", ID: "12", Author: "marta", Content: "verify the raw body before JSON parsing", Timestamp: t0.Add(time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestSearchResponseShape(t *testing.T) {
	ts := start(t)
	seedChat(t, ts.eng)
	ts.eng.PutDocuments([]record.Document{{Title: "Webhook signatures", Content: "HMAC-SHA256 over the raw body."}})
	r := ts.get(t, "/api/search?q=webhook+signature")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	m := r.json(t)
	if got := keys(m); !slices.Equal(got, []string{"documents", "messages", "totalDocuments", "totalExact", "totalMessages"}) {
		t.Fatalf("top-level keys %v", got)
	}
	// The memory store counts every match: its totals are exact.
	if m["totalMessages"] != 1.0 || m["totalDocuments"] != 1.0 || m["totalExact"] != true {
		t.Errorf("totals: %v %v %v", m["totalMessages"], m["totalDocuments"], m["totalExact"])
	}
	msgs := m["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("messages %v", msgs)
	}
	msg := msgs[0].(map[string]any)
	want := []string{"channelName", "channelSlug", "content", "highlight", "id", "platformName", "platformType", "score", "timestamp", "username"}
	if got := keys(msg); !slices.Equal(got, want) {
		t.Fatalf("message keys %v", got)
	}
	if msg["id"] != "11" || msg["username"] != "ana.k" || msg["channelName"] != "help" || msg["channelSlug"] != "help" ||
		msg["platformName"] != "Wren Discord" || msg["platformType"] != "discord" || msg["timestamp"] != "2026-04-01T09:30:00.000Z" {
		t.Errorf("message %v", msg)
	}
	docs := m["documents"].([]any)
	doc := docs[0].(map[string]any)
	if got := keys(doc); !slices.Equal(got, []string{"content", "highlight", "id", "score", "slug", "title"}) {
		t.Fatalf("document keys %v", got)
	}
	if doc["title"] != "Webhook signatures" || doc["slug"] != "webhook-signatures" || doc["content"] != "HMAC-SHA256 over the raw body." {
		t.Errorf("document %v", doc)
	}
	// Empty lists are [] not null.
	r = ts.get(t, "/api/search?q=zzzzqqq")
	if !bytes.Contains(r.body, []byte(`"messages":[]`)) || !bytes.Contains(r.body, []byte(`"documents":[]`)) {
		t.Errorf("empty result: %s", r.body)
	}
	// Filters as parameters.
	r = ts.get(t, "/api/search?q=body&from=marta&channel=help&source=wren-discord&after=2026-04-01&before=2026-04-02")
	if got := len(r.json(t)["messages"].([]any)); got != 1 {
		t.Errorf("filtered: %s", r.body)
	}
}

func TestSearchValidation(t *testing.T) {
	ts := start(t)
	seedChat(t, ts.eng)
	cases := []struct {
		query  string
		status int
		words  []string
	}{
		{"", 400, []string{"q", "required"}},
		{"?q=", 400, []string{"q"}},
		{"?q=a&limit=0", 400, []string{"limit", "1", "100"}},
		{"?q=a&limit=101", 400, []string{"limit", "1", "100"}},
		{"?q=a&limit=ten", 400, []string{"limit"}},
		{"?q=a&offset=-1", 400, []string{"offset", "0", "10000"}},
		{"?q=a&offset=10001", 400, []string{"offset"}},
		{"?q=%ff%fe", 400, []string{"q", "UTF-8"}},
		{"?q=" + strings.Repeat("a", 3000), 400, []string{"q", "2048"}},
		{"?q=a&after=yesterday", 400, []string{"after"}},
		{"?q=a+before:someday", 400, []string{"before"}},
		{"?q=a&source=%ff", 400, []string{"source"}},
	}
	for _, c := range cases {
		wantError(t, ts.get(t, "/api/search"+c.query), c.status, c.words...)
	}
	// A 100 KB query never reaches a handler: the server answers in JSON.
	wantError(t, ts.raw(t, "GET /api/search?q="+strings.Repeat("x", 100<<10)+" HTTP/1.1\r\nHost: x\r\n\r\n"), 431)
	if r := ts.get(t, "/healthz"); r.status != 200 {
		t.Fatal("server unhealthy after bad input")
	}
}

func TestSearchAccessBearer(t *testing.T) {
	ts := start(t, func(o *Options) { o.SearchAccess = "bearer" })
	r := ts.get(t, "/api/search?q=a")
	wantError(t, r, 401)
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	wantError(t, ts.get(t, "/api/search?q=a", "Authorization", "Bearer wrong"), 401)
	if r := ts.get(t, "/api/search?q=a", bearer...); r.status != 200 {
		t.Fatalf("with bearer: %d %s", r.status, r.body)
	}
}

func jsonBody(v any) io.Reader {
	b, _ := json.Marshal(v)
	return bytes.NewReader(b)
}

func TestAdminAuth(t *testing.T) {
	ts := start(t)
	doc := map[string]any{"title": "T", "content": "c"}
	ct := []string{"Content-Type", "application/json"}
	r := ts.do(t, "POST", "/api/documents", jsonBody(doc), ct...)
	wantError(t, r, 401)
	if got := r.header.Values("WWW-Authenticate"); len(got) != 2 {
		t.Errorf("WWW-Authenticate %v", got)
	}
	wantError(t, ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "Bearer nope"), 401)
	wantError(t, ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "Basic "+basic(testUser, "wrong")), 401)
	wantError(t, ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "Basic !!!"), 401)
	if r := ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "Basic "+basic(testUser, testPass)); r.status != 201 {
		t.Fatalf("basic: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", bearer[0], bearer[1]); r.status != 201 {
		t.Fatalf("bearer: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "bearer  "+testKey); r.status != 201 {
		t.Fatalf("scheme in lower case: %d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "Bearer"+testKey), 401)
	if strings.Contains(string(r.body), testKey) {
		t.Error("a response echoes the secret")
	}

	closed := start(t, func(o *Options) { o.APISecretKey, o.AdminUser, o.AdminPassword = "", "", "" })
	wantError(t, closed.do(t, "POST", "/api/documents", jsonBody(doc), ct...), 403, "disabled")
	wantError(t, closed.do(t, "POST", "/api/documents", jsonBody(doc), "Content-Type", "application/json", "Authorization", "Bearer "), 403)
}

func basic(u, p string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(u, p)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

// multipartBody builds a multipart upload of name=content files plus fields.
func multipartBody(t testing.TB, files map[string]string, fields ...string) (io.Reader, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fw, _ := w.CreateFormFile("file", n)
		fw.Write([]byte(files[n]))
	}
	w.Close()
	return &b, w.FormDataContentType()
}

func TestUploadMultipart(t *testing.T) {
	ts := start(t)
	body, ct := multipartBody(t, map[string]string{
		"getting-started.md": "# Getting started\n\nRun `wren server` and open port 7070.",
		"notes.txt":          "\xef\xbb\xbfPlain notes about cron schedules.",
		"page.html":          "<html><head><title>Webhooks</title><script>evil()</script></head><body><nav>menu</nav><p>Signed with HMAC.</p></body></html>",
	})
	r := ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1])
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var out struct {
		Documents []struct {
			ID, Title, Slug, URL string
			ContentLength        int
		}
	}
	json.Unmarshal(r.body, &out)
	titles := []string{}
	for _, d := range out.Documents {
		titles = append(titles, d.Title)
		if d.ID == "" || d.Slug == "" || !strings.HasPrefix(d.URL, ts.url+"/d/") || d.ContentLength == 0 {
			t.Errorf("uploaded %+v", d)
		}
	}
	if !slices.Equal(titles, []string{"Getting started", "Notes", "Webhooks"}) {
		t.Errorf("titles %v", titles)
	}
	res := ts.get(t, "/api/search?q=hmac").json(t)
	docs := res["documents"].([]any)
	if len(docs) != 1 || strings.Contains(docs[0].(map[string]any)["content"].(string), "evil") {
		t.Errorf("html upload: %v", docs)
	}

	// The same file again replaces the document (same id, new content).
	body, ct = multipartBody(t, map[string]string{"notes.txt": "Rewritten notes."}, "title", "My notes")
	r = ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1])
	var again struct{ Documents []struct{ ID, Title string } }
	json.Unmarshal(r.body, &again)
	if r.status != 201 || again.Documents[0].ID != out.Documents[1].ID || again.Documents[0].Title != "My notes" {
		t.Fatalf("re-upload: %d %s", r.status, r.body)
	}
	if got := ts.get(t, "/api/search?q=cron").json(t)["documents"].([]any); len(got) != 0 {
		t.Error("stale content after re-upload")
	}

	body, ct = multipartBody(t, map[string]string{"report.pdf": "%PDF-1.4"})
	wantError(t, ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1]), 415, "report.pdf")
	body, ct = multipartBody(t, map[string]string{"bad.txt": "\xff\xfe\xfd"})
	wantError(t, ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1]), 400, "UTF-8")
	body, ct = multipartBody(t, nil, "title", "x")
	wantError(t, ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1]), 400, "file")
	body, ct = multipartBody(t, map[string]string{"a.txt": "a"}, "sourceId", "nope")
	wantError(t, ts.do(t, "POST", "/api/documents", body, "Content-Type", ct, bearer[0], bearer[1]), 400, "nope")
	wantError(t, ts.do(t, "POST", "/api/documents", strings.NewReader("--x\r\ngarbage"), "Content-Type", "multipart/form-data; boundary=x", bearer[0], bearer[1]), 400, "multipart")
	wantError(t, ts.do(t, "POST", "/api/documents", strings.NewReader("hi"), "Content-Type", "text/plain", bearer[0], bearer[1]), 415)
}

func TestUploadJSON(t *testing.T) {
	ts := start(t)
	post := func(body string) resp {
		return ts.do(t, "POST", "/api/documents", strings.NewReader(body), "Content-Type", "application/json", bearer[0], bearer[1])
	}
	r := post(`{"title":"Cron syntax","content":"Six fields with seconds.","url":"https://docs.example/cron","format":"markdown"}`)
	if r.status != 201 || !strings.Contains(string(r.body), `"url":"https://docs.example/cron"`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
	wantError(t, post(`{"title":`), 400, "malformed JSON")
	wantError(t, post(`[1,2]`), 400, "malformed JSON")
	wantError(t, post(`{"content":"x"}`), 400, "title")
	wantError(t, post(`{"title":"x"}`), 400, "content")
	wantError(t, post(`{"title":"x","content":"y","format":"pdf"}`), 400, "format")
	wantError(t, post("{\"title\":\"x\",\"content\":\"\xff\"}"), 400, "UTF-8")
	wantError(t, post(`{"title":"x","content":"y"} {"title":"z"}`), 400, "one object")
	wantError(t, post(`{"title":"x","content":"y","sourceId":"ghost"}`), 400, "ghost")
	// Clients send Expect: 100-continue before a large body (curl does above
	// 1 MB), so they read the 413 instead of a reset while still sending.
	big := `{"title":"big","content":"` + strings.Repeat("a", 2<<20) + `"}`
	wantError(t, ts.do(t, "POST", "/api/documents", strings.NewReader(big), "Content-Type", "application/json",
		"Expect", "100-continue", bearer[0], bearer[1]), 413, "limit")
	if r := ts.get(t, "/healthz"); r.status != 200 {
		t.Fatal("unhealthy after oversized body")
	}
}

func TestListAndDeleteDocuments(t *testing.T) {
	ts := start(t)
	for i := 0; i < 5; i++ {
		ts.eng.PutDocuments([]record.Document{{Title: fmt.Sprintf("Doc %d", i), Content: "alpha"}})
		time.Sleep(2 * time.Millisecond) // distinct update times: newest first
	}
	r := ts.get(t, "/api/documents?limit=2&offset=1")
	var out struct {
		Documents []map[string]any
		Total     int
	}
	json.Unmarshal(r.body, &out)
	if r.status != 200 || out.Total != 5 || len(out.Documents) != 2 || out.Documents[0]["title"] != "Doc 3" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got := keys(out.Documents[0]); !slices.Equal(got, []string{"contentLength", "id", "slug", "sourceId", "title", "updatedAt", "url"}) {
		t.Errorf("keys %v", got)
	}
	wantError(t, ts.get(t, "/api/documents?limit=1001"), 400, "limit", "1000")
	id := out.Documents[0]["id"].(string)
	wantError(t, ts.do(t, "DELETE", "/api/documents/"+id, nil), 401)
	if r := ts.do(t, "DELETE", "/api/documents/"+id, nil, bearer...); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	wantError(t, ts.do(t, "DELETE", "/api/documents/"+id, nil, bearer...), 404, id)
	if got := ts.get(t, "/api/search?q=alpha&limit=10").json(t)["documents"].([]any); len(got) != 4 {
		t.Errorf("after delete %d documents found", len(got))
	}
}

func TestDocumentPageAndNotFound(t *testing.T) {
	ts := start(t)
	docs, _ := ts.eng.PutDocuments([]record.Document{{Title: "XSS <b>test</b>", Content: `<script>alert(1)</script><img src=x onerror="alert(2)"> & more`}})
	r := ts.get(t, "/d/"+docs[0].Slug)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	page := string(r.body)
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("document content not escaped:\n%s", page)
	}
	if r.header.Get("Content-Security-Policy") == "" || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("missing security headers")
	}
	for _, p := range []string{"/d/nope", "/d/..%2F..%2Fetc%2Fpasswd", "/d/%2e%2e", "/d/" + strings.Repeat("a", 500), "/d/A%00B", "/api/nothing", "/x/../../etc/passwd"} {
		r := ts.get(t, p)
		if r.status != 404 && r.status != 400 {
			t.Errorf("%s: status %d", p, r.status)
		}
		wantError(t, r, r.status)
	}
	if r := ts.get(t, "/d/nope", "Accept", "text/html"); r.status != 404 || !strings.Contains(string(r.body), "<h1>Not found</h1>") {
		t.Errorf("browser 404: %d", r.status)
	}
	wantError(t, ts.do(t, "PUT", "/api/search", nil), 405, "PUT")
}

func TestHomePage(t *testing.T) {
	ts := start(t)
	seedChat(t, ts.eng)
	ts.eng.PutMessages([]record.Message{{SourceID: "wren-discord", ChannelID: "1", ID: "13", Author: "eve", Content: `<script>alert("x")</script> webhook`, Timestamp: time.Now()}})
	r := ts.get(t, "/?q=webhook")
	page := string(r.body)
	if r.status != 200 || !strings.Contains(page, "<mark>webhook</mark>") || strings.Contains(page, `<script>alert("x")`) {
		t.Fatalf("%d\n%s", r.status, page)
	}
	if r := ts.get(t, "/?q=a+after:never"); r.status != 200 || !strings.Contains(string(r.body), "after") {
		t.Errorf("bad query on home page: %d", r.status)
	}
}

func TestHealthAndBackup(t *testing.T) {
	ts := start(t)
	seedChat(t, ts.eng)
	h := ts.get(t, "/healthz").json(t)
	if h["status"] != "ok" || h["messages"] != 2.0 {
		t.Errorf("health %v", h)
	}
	wantError(t, ts.do(t, "POST", "/api/admin/backup", nil), 401)
	r := ts.do(t, "POST", "/api/admin/backup", nil, bearer...)
	if r.status != 200 {
		t.Fatalf("backup %d", r.status)
	}
	if _, msgs, _, err := engine.VerifySnapshot(bytes.NewReader(r.body)); err != nil || msgs != 2 {
		t.Fatalf("backup does not verify: %v (%d messages)", err, msgs)
	}
}

// TestHealthHidesModelServers: the public health check names a model
// server by its model only and does not repeat its errors, which may name
// internal hosts; the log and the snapshot never hold its credentials.
func TestHealthHidesModelServers(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Fail(400, 400, 400, 400, 400, 400, 400, 400)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("ops", "hunter2")
	emb := embed.NewOpenAI(u.String(), "sk-secret", "fake-embed")
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{})
	if _, err := eng.PutDocuments([]record.Document{{Title: "a", Content: "alpha beta"}}); err != nil {
		t.Fatal(err)
	}
	var sem map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		sem = ts.get(t, "/healthz").json(t)["semantic"].(map[string]any)
		if sem["error"] != "" {
			break
		}
	}
	body := string(ts.get(t, "/healthz").body)
	if sem["embedder"] != "openai:fake-embed" || sem["error"] == "" || strings.Contains(body, "127.0.0.1") ||
		strings.Contains(body, "hunter2") || strings.Contains(body, "scripted failure") {
		t.Fatalf("health: %s", body)
	}
	if strings.Contains(emb.Name(), "hunter2") || strings.Contains(emb.Name(), "ops@") {
		t.Fatalf("embedder name %q holds credentials", emb.Name())
	}
}

// FuzzSearchParams feeds arbitrary query strings to both search APIs and
// the home page: never a 5xx, and a refusal is a JSON error.
func FuzzSearchParams(f *testing.F) {
	ts := start(f)
	seedChat(f, ts.eng)
	h := ts.srv.Handler()
	for _, s := range []string{"q=a", "q=%22x&limit=5", "q=-a+-%22b+c%22&offset=3", "q=from:%22a&after=2024-01-01", "q=%ff",
		"q=a&boost=chat:2,,x&max_chars=300&hyde=0", "q=b&boost=chat:1e400&source=chat,", "q=helo+wrld&typos=false",
		"q=rekord%C3%B3w+%EC%9E%AC%EC%8B%9C&typos=1", "q=how+to+co&limit=3", "q=x&typos=perhaps"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, path := range []string{"/api/search?", "/api/semantic-search?", "/api/suggest?"} {
			var ctx fasthttp.RequestCtx
			ctx.Request.SetRequestURI(path + raw)
			h(&ctx)
			if st := ctx.Response.StatusCode(); st >= 500 || st != 200 && !bytes.Contains(ctx.Response.Body(), []byte(`"error"`)) {
				t.Fatalf("%s%q: status %d: %s", path, raw, st, ctx.Response.Body())
			}
		}
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI("/?" + raw)
		h(&ctx)
		if st := ctx.Response.StatusCode(); st >= 500 {
			t.Fatalf("home %q: status %d", raw, st)
		}
	})
}

// FuzzUploadJSON feeds arbitrary bodies to the JSON upload: never a 5xx.
func FuzzUploadJSON(f *testing.F) {
	ts := start(f)
	h := ts.srv.Handler()
	f.Add(`{"title":"a","content":"b"}`)
	f.Add(`{"title":"a","content":"<p>b</p>","format":"html"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/api/documents")
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.Header.Set("Authorization", "Bearer "+testKey)
		ctx.Request.SetBodyString(body)
		h(&ctx)
		if st := ctx.Response.StatusCode(); st >= 500 {
			t.Fatalf("%q: status %d: %s", body, st, ctx.Response.Body())
		}
	})
}

// FuzzUploadMultipart feeds arbitrary multipart bodies to the upload: never
// a 5xx, and a 201 only with well-formed documents.
func FuzzUploadMultipart(f *testing.F) {
	ts := start(f)
	h := ts.srv.Handler()
	body, ct := multipartBody(f, map[string]string{"a.md": "# T\n\nx", "b.html": "<title>t</title><p>y</p>"}, "sourceId", "")
	b, _ := io.ReadAll(body)
	boundary := strings.TrimPrefix(ct, "multipart/form-data; boundary=")
	f.Add(string(b), boundary)
	f.Add("--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../e.txt\"\r\n\r\nhi\r\n--x--\r\n", "x")
	f.Fuzz(func(t *testing.T, body, boundary string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/api/documents")
		ctx.Request.Header.SetContentType("multipart/form-data; boundary=" + boundary)
		ctx.Request.Header.Set("Authorization", "Bearer "+testKey)
		ctx.Request.SetBodyString(body)
		h(&ctx)
		if st := ctx.Response.StatusCode(); st >= 500 {
			t.Fatalf("status %d: %s", st, ctx.Response.Body())
		}
	})
}

func TestHead(t *testing.T) {
	ts := start(t)
	docs, _ := ts.eng.PutDocuments([]record.Document{{Title: "Headed", Content: "x"}})
	for _, p := range []string{"/healthz", "/", "/d/" + docs[0].Slug} {
		if r := ts.do(t, "HEAD", p, nil); r.status != 200 || len(r.body) != 0 {
			t.Errorf("HEAD %s: %d, %d bytes", p, r.status, len(r.body))
		}
	}
}
