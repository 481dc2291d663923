package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/record"
)

// privateMarker is a word only the private content holds.
const privateMarker = "zanzibarquartz"

// startMCP serves the demo content, semantically indexed, plus a private
// source's document and a private channel, both holding privateMarker.
func startMCP(t *testing.T, mod ...func(*Options)) *testServer {
	t.Helper()
	eng, idx := semanticDemo(t, func(eng *engine.Engine) {
		if _, err := eng.PutSource(record.Source{ID: "staff", Name: "Staff notes", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.PutDocuments([]record.Document{{SourceID: "staff", Key: "oncall.md", Title: "On-call secrets",
			Content: "The " + privateMarker + " runbook: rotate the webhook secret on the staging cluster."}}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.PutChannels([]record.Channel{{SourceID: demo.ChatSource, ID: "staff-room", Name: "staff-room", Private: true}}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.PutMessages([]record.Message{{SourceID: demo.ChatSource, ChannelID: "staff-room", ID: "9001", Author: "ops",
			Content: "the " + privateMarker + " deploy key lives in the vault", Timestamp: time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)}}); err != nil {
			t.Fatal(err)
		}
	})
	opts := Options{APISecretKey: testKey, AdminUser: testUser, AdminPassword: testPass}
	for _, m := range mod {
		m(&opts)
	}
	return serve(t, eng, idx, opts)
}

// headerTransport adds header name/value pairs to every request.
type headerTransport []string

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	return http.DefaultTransport.RoundTrip(req)
}

// connect opens an MCP session with the SDK's own client over streamable
// HTTP, sending header pairs with every request.
func connect(t *testing.T, ts *testServer, header ...string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: ts.url + "/mcp", HTTPClient: &http.Client{Transport: headerTransport(header)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool and returns its result; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// result decodes a successful call's structured content into T.
func result[T any](t *testing.T, cs *mcp.ClientSession, name string, args any) T {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %q", name, args, toolText(res))
	}
	var out T
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content: %v: %s", name, err, b)
	}
	return out
}

func TestMCPListTools(t *testing.T) {
	ts := startMCP(t)
	cs := connect(t, ts)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 || tool.OutputSchema == nil {
			t.Errorf("%s: description %q, output schema %v", tool.Name, tool.Description, tool.OutputSchema)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		json.Unmarshal(b, &s)
		schemas[tool.Name] = s["properties"].(map[string]any)
	}
	slices.Sort(names)
	if want := []string{"ask", "list_sources", "read_channel", "read_document", "search", "semantic_search"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	// The schemas state the bounds the handlers check (httpapi/bounds).
	for _, c := range []struct {
		tool, arg string
		b         bounds.Int
	}{
		{"search", "limit", bounds.SearchLimit},
		{"search", "offset", bounds.SearchOffset},
		{"semantic_search", "limit", bounds.SemanticLimit},
		{"semantic_search", "max_chars", bounds.SemanticMaxChars},
		{"read_document", "offset", bounds.ReadOffset},
		{"read_document", "length", bounds.ReadLength},
		{"read_channel", "limit", bounds.ReadLimit},
	} {
		p, _ := schemas[c.tool][c.arg].(map[string]any)
		if p == nil || p["minimum"] != float64(c.b.Min) || p["maximum"] != float64(c.b.Max) || p["default"] != float64(c.b.Default) {
			t.Errorf("%s.%s schema %v, want %d to %d, default %d", c.tool, c.arg, p, c.b.Min, c.b.Max, c.b.Default)
		}
	}
	if p := schemas["ask"]["question"].(map[string]any); p["maxLength"] != float64(bounds.QuestionChars) {
		t.Errorf("ask.question schema %v", p)
	}
}

func TestMCPToolsMatchHTTP(t *testing.T) {
	ts := startMCP(t)
	cs := connect(t, ts)

	// search: a misspelt word is corrected, and says so; typos=false takes it as written.
	tr := result[agent.SearchResult](t, cs, "search", map[string]any{"q": "backof", "limit": 5})
	if len(tr.Documents)+len(tr.Messages) == 0 || len(tr.Corrections) != 1 || tr.Corrections[0].Word != "backof" || tr.Corrections[0].Matches[0] != "backoff" {
		t.Errorf("search with a typo: %+v", tr)
	}
	if tr := result[agent.SearchResult](t, cs, "search", map[string]any{"q": "backof", "typos": false}); len(tr.Documents)+len(tr.Messages) != 0 || tr.Corrections != nil {
		t.Errorf("search with typos false: %+v", tr)
	}

	// search: the same hits in the same order as GET /api/search, as snippets with links.
	sr := result[agent.SearchResult](t, cs, "search", map[string]any{"q": "retry backoff", "limit": 5})
	var api struct {
		Messages  []struct{ ID, Content, ChannelSlug string }
		Documents []struct{ ID, Slug, Content string }
	}
	if r := ts.get(t, "/api/search?q=retry+backoff&limit=5"); r.status != 200 || json.Unmarshal(r.body, &api) != nil {
		t.Fatalf("GET /api/search: %d %s", r.status, r.body)
	}
	if len(sr.Messages) == 0 || len(sr.Documents) == 0 || len(sr.Messages) != len(api.Messages) || len(sr.Documents) != len(api.Documents) {
		t.Fatalf("search: %d messages, %d documents; HTTP %d, %d", len(sr.Messages), len(sr.Documents), len(api.Messages), len(api.Documents))
	}
	for i, m := range sr.Messages {
		want := api.Messages[i]
		if m.ID != want.ID || m.URL != ts.url+"/c/"+want.ChannelSlug+"?m="+m.ID+"#m-"+m.ID || m.Snippet == "" {
			t.Errorf("message %d: %+v, HTTP id %s", i, m, want.ID)
		}
	}
	for i, d := range sr.Documents {
		want := api.Documents[i]
		if d.ID != want.ID || d.URL != ts.url+"/d/"+want.Slug || !strings.Contains(strings.ToLower(d.Snippet), "**retr") || len(d.Snippet) >= len(want.Content) {
			t.Errorf("document %d: %+v, HTTP id %s", i, d, want.ID)
		}
	}

	// semantic_search: the same results as GET /api/semantic-search.
	q := "how do I retry a failed job"
	sem := result[agent.SemanticResult](t, cs, "semantic_search", map[string]any{"q": q, "limit": 5, "max_chars": 300, "hyde": false})
	httpSem := ts.semantic(t, "limit=5&max_chars=300&hyde=0&q="+url.QueryEscape(q))
	if len(sem.Results) != 5 || len(httpSem.Results) != 5 {
		t.Fatalf("semantic_search: %d results, HTTP %d", len(sem.Results), len(httpSem.Results))
	}
	for i, r := range sem.Results {
		if w := httpSem.Results[i]; r.URL != w["url"] || r.Content != w["content"] || r.URL == "" {
			t.Errorf("result %d: %s, HTTP %v", i, r.URL, w["url"])
		}
	}

	// ask: the answer and sources of POST /api/ask, numbered, with links.
	question := "How do I retry a failed job?"
	ans := call(t, cs, "ask", map[string]any{"question": question})
	var ar agent.AskResult
	b, _ := json.Marshal(ans.StructuredContent)
	json.Unmarshal(b, &ar)
	var httpAns struct {
		Answer  string
		Sources []struct{ SourceURL string }
	}
	if r := ts.do(t, "POST", "/api/ask", jsonBody(map[string]any{"question": question}), "Content-Type", "application/json"); r.status != 200 || json.Unmarshal(r.body, &httpAns) != nil {
		t.Fatalf("POST /api/ask: %d %s", r.status, r.body)
	}
	if ans.IsError || ar.Answer == "" || ar.Answer != httpAns.Answer || len(ar.Sources) != len(httpAns.Sources) || len(ar.Sources) == 0 {
		t.Fatalf("ask: %q with %d sources; HTTP %q with %d", ar.Answer, len(ar.Sources), httpAns.Answer, len(httpAns.Sources))
	}
	for i, s := range ar.Sources {
		if s.N != i+1 || s.URL != httpAns.Sources[i].SourceURL || !strings.Contains(toolText(ans), "["+string(rune('1'+i))+"] ") || !strings.Contains(toolText(ans), s.URL) {
			t.Errorf("source %d: %+v\n%s", i, s, toolText(ans))
		}
	}

	// read_document: pages of GET /api/documents/{slug}, by slug or id.
	doc := sr.Documents[0]
	w := result[agent.DocumentWindow](t, cs, "read_document", map[string]any{"document": doc.Slug, "length": 100})
	var httpDoc agent.DocumentWindow
	if r := ts.get(t, "/api/documents/"+doc.Slug+"?length=100"); r.status != 200 || json.Unmarshal(r.body, &httpDoc) != nil {
		t.Fatalf("GET /api/documents: %d %s", r.status, r.body)
	}
	if w.Content != httpDoc.Content || w.Length != 100 || w.NextOffset == nil || *w.NextOffset != 100 || w.URL != doc.URL {
		t.Errorf("read_document: %+v", w)
	}
	next := result[agent.DocumentWindow](t, cs, "read_document", map[string]any{"document": doc.ID, "offset": *w.NextOffset})
	if next.Offset != 100 || next.TotalLength != w.TotalLength || next.NextOffset != nil || next.Length != w.TotalLength-100 {
		t.Errorf("read_document by id, next page: offset %d length %d of %d, next %v", next.Offset, next.Length, next.TotalLength, next.NextOffset)
	}

	// read_channel: the conversation around a search hit, as GET /api/channels/{slug}/messages.
	hit := sr.Messages[0]
	cw := result[agent.ChannelWindow](t, cs, "read_channel", map[string]any{"channel": hit.ChannelSlug, "around": hit.ID, "limit": 5})
	var httpCw agent.ChannelWindow
	if r := ts.get(t, "/api/channels/"+hit.ChannelSlug+"/messages?limit=5&around="+hit.ID); r.status != 200 || json.Unmarshal(r.body, &httpCw) != nil {
		t.Fatalf("GET channel messages: %d %s", r.status, r.body)
	}
	ids := func(ms []agent.WindowMessage) (out []string) {
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	if got := ids(cw.Messages); len(got) != 5 || !slices.Contains(got, hit.ID) || !slices.Equal(got, ids(httpCw.Messages)) {
		t.Errorf("read_channel: %v, HTTP %v", got, ids(httpCw.Messages))
	}

	// list_sources: the public sources with their channels.
	ls := result[agent.SourceList](t, cs, "list_sources", map[string]any{})
	var srcIDs []string
	for _, s := range ls.Sources {
		srcIDs = append(srcIDs, s.ID)
		if st := ts.eng.SourceStats(s.ID, false); s.Messages != st.Messages || s.Documents != st.Documents || s.URL == "" {
			t.Errorf("source %+v, stats %+v", s, st)
		}
		if s.ID == demo.ChatSource && (len(s.ChannelList) != 1 || s.ChannelList[0].Slug != hit.ChannelSlug) {
			t.Errorf("channels of %s: %+v", s.ID, s.ChannelList)
		}
	}
	if !slices.Equal(srcIDs, []string{demo.ChatSource, demo.DocsSource}) {
		t.Errorf("sources %v", srcIDs)
	}
}

// TestMCPBadArguments: bad input is a tool error in the HTTP API's words,
// and the session goes on.
func TestMCPBadArguments(t *testing.T) {
	ts := startMCP(t)
	cs := connect(t, ts)
	httpErr := func(method, path string, body any) string {
		var r resp
		if body != nil {
			r = ts.do(t, method, path, jsonBody(body), "Content-Type", "application/json")
		} else {
			r = ts.get(t, path)
		}
		if r.status < 400 {
			t.Fatalf("%s %s: %d", method, path, r.status)
		}
		return r.json(t)["error"].(string)
	}
	for _, c := range []struct {
		tool string
		args any
		http string // the request whose error message the tool must give; "" = words below
		body any
		want string
	}{
		{tool: "search", args: map[string]any{}, http: "/api/search"},
		{tool: "search", args: map[string]any{"q": "x", "limit": 0}, http: "/api/search?q=x&limit=0"},
		{tool: "search", args: map[string]any{"q": "x", "limit": "many"}, http: "/api/search?q=x&limit=many"},
		{tool: "search", args: map[string]any{"q": "x", "offset": 10001}, http: "/api/search?q=x&offset=10001"},
		{tool: "search", args: map[string]any{"q": "x", "after": "yesterday"}, http: "/api/search?q=x&after=yesterday"},
		{tool: "semantic_search", args: map[string]any{"q": "x", "limit": 21}, http: "/api/semantic-search?q=x&limit=21"},
		{tool: "semantic_search", args: map[string]any{"q": "x", "max_chars": 100}, http: "/api/semantic-search?q=x&max_chars=100"},
		{tool: "semantic_search", args: map[string]any{"q": "x", "boost": "wren-docs:99"}, http: "/api/semantic-search?q=x&boost=wren-docs:99"},
		{tool: "semantic_search", args: map[string]any{"q": ""}, http: "/api/semantic-search?q="},
		{tool: "ask", args: map[string]any{"question": " "}, http: "POST /api/ask", body: map[string]any{"question": " "}},
		{tool: "ask", args: map[string]any{"question": "x", "messages": []any{map[string]any{"role": "system", "content": "y"}}},
			http: "POST /api/ask", body: map[string]any{"question": "x", "messages": []any{map[string]any{"role": "system", "content": "y"}}}},
		{tool: "ask", args: map[string]any{"question": strings.Repeat("é", bounds.QuestionChars+1)},
			http: "POST /api/ask", body: map[string]any{"question": strings.Repeat("é", bounds.QuestionChars+1)}},
		{tool: "read_document", args: map[string]any{"document": "no-such-document"}, http: "/api/documents/no-such-document"},
		{tool: "read_document", args: map[string]any{"document": "retries-and-backoff", "length": 0}, http: "/api/documents/retries-and-backoff?length=0"},
		{tool: "read_document", args: map[string]any{"document": "retries-and-backoff", "offset": -1}, http: "/api/documents/retries-and-backoff?offset=-1"},
		{tool: "read_document", args: map[string]any{"document": "retries-and-backoff", "offset": 1 << 29}, http: "/api/documents/retries-and-backoff?offset=536870912"},
		{tool: "read_document", args: map[string]any{}, want: "document is required"},
		{tool: "read_channel", args: map[string]any{"channel": "help", "around": "1", "before": "2"}, http: "/api/channels/help/messages?around=1&before=2"},
		{tool: "read_channel", args: map[string]any{"channel": "help", "limit": 500}, http: "/api/channels/help/messages?limit=500"},
		{tool: "read_channel", args: map[string]any{"channel": "help", "around": "no-such-message"}, http: "/api/channels/help/messages?around=no-such-message"},
		{tool: "read_channel", args: map[string]any{"channel": "no-such-channel"}, http: "/api/channels/no-such-channel/messages"},
		{tool: "read_channel", args: map[string]any{"channel": 7}, want: "channel: expected a string"},
		{tool: "list_sources", args: map[string]any{"source": "nope"}, want: `no source "nope"`},
		{tool: "search", args: json.RawMessage(`["q"]`), want: "arguments: not a JSON object"},
	} {
		want := c.want
		if c.http != "" {
			method, path, ok := strings.Cut(c.http, " ")
			if !ok {
				method, path = "GET", c.http
			}
			want = httpErr(method, path, c.body)
		}
		res := call(t, cs, c.tool, c.args)
		if got := toolText(res); !res.IsError || !strings.Contains(got, want) || want == "" {
			t.Errorf("%s %v: error %v %q, want %q", c.tool, c.args, res.IsError, got, want)
		}
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool was called")
	}
	// The session still works.
	if sr := result[agent.SearchResult](t, cs, "search", map[string]any{"q": "retry"}); len(sr.Documents) == 0 {
		t.Error("search after errors found nothing")
	}
}

// TestMCPRateLimit: anonymous tool calls spend the public tier's tokens,
// one each; the Bearer token is not limited; a wrong one is refused.
func TestMCPRateLimit(t *testing.T) {
	const perMinute = 3
	ts := startMCP(t, func(o *Options) { o.PublicRateLimit = perMinute })
	anon := connect(t, ts)
	for range 3 { // listing is free
		if _, err := anon.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range perMinute {
		if res := call(t, anon, "search", map[string]any{"q": "retry"}); res.IsError {
			t.Fatalf("call %d refused: %s", i+1, toolText(res))
		}
	}
	res := call(t, anon, "search", map[string]any{"q": "retry"})
	if !res.IsError || !strings.Contains(toolText(res), "rate limit of 3 requests per minute exceeded") {
		t.Fatalf("call %d: error %v %q", perMinute+1, res.IsError, toolText(res))
	}
	// The refusal's HTTP answer carries Retry-After and the RateLimit headers.
	r := ts.do(t, "POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}`),
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if r.status != 200 || r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Remaining") != "0" || !strings.Contains(string(r.body), `"isError":true`) {
		t.Errorf("refused call: %d %v %s", r.status, r.header, r.body)
	}

	keyed := connect(t, ts, bearer...)
	for i := range 2 * perMinute {
		if res := call(t, keyed, "search", map[string]any{"q": "retry"}); res.IsError {
			t.Fatalf("Bearer call %d refused: %s", i+1, toolText(res))
		}
	}
	admin := connect(t, ts, "Authorization", "Basic "+basic(testUser, testPass))
	if res := call(t, admin, "list_sources", map[string]any{}); res.IsError {
		t.Fatalf("admin call refused: %s", toolText(res))
	}
	r = ts.do(t, "POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Authorization", "Bearer wrong")
	wantError(t, r, 401, "Bearer token is not valid")
}

// TestMCPRateLimitOddBodies: a body the SDK reads differently from a plain
// JSON decoder — a key repeated in another case — pays one token per call
// that runs; junk after the message is a parse error, which runs nothing
// but pays a token too, so junk is limited like the rest.
func TestMCPRateLimitOddBodies(t *testing.T) {
	ts := startMCP(t, func(o *Options) { o.PublicRateLimit = 2 })
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"retry"}}}`
	for i, c := range []struct {
		body string
		want string
	}{
		{call + " x", "-32700"},
		{strings.Replace(call, `"params"`, `"Method":"nope","params"`, 1), `"structuredContent"`},
		{call + " x", "rate_limited"},
		{call, "rate limit of 2 requests per minute exceeded"},
	} {
		r := ts.do(t, "POST", "/mcp", strings.NewReader(c.body), "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		if !strings.Contains(string(r.body), c.want) {
			t.Errorf("call %d (%s): %d %s, want %s", i+1, c.body, r.status, r.body, c.want)
		}
	}
}

// TestMCPPrivateContent: private content is absent without credentials and
// present with the Bearer token.
func TestMCPPrivateContent(t *testing.T) {
	ts := startMCP(t)
	var docSlug string
	for _, d := range ts.eng.SourceDocuments("staff") {
		docSlug = d.Slug
	}
	ch, _ := ts.eng.ChannelByID(demo.ChatSource, "staff-room")
	for _, c := range []struct {
		name    string
		header  []string
		private bool
	}{
		{"anonymous", nil, false},
		{"bearer", bearer, true},
		{"admin", []string{"Authorization", "Basic " + basic(testUser, testPass)}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := connect(t, ts, c.header...)
			sr := result[agent.SearchResult](t, cs, "search", map[string]any{"q": privateMarker})
			if got := len(sr.Messages) + len(sr.Documents); (got == 2) != c.private || (got == 0) == c.private {
				t.Errorf("search: %d messages, %d documents", len(sr.Messages), len(sr.Documents))
			}
			sem := result[agent.SemanticResult](t, cs, "semantic_search", map[string]any{"q": privateMarker + " runbook deploy key", "hyde": false})
			leaked := false
			for _, r := range sem.Results {
				leaked = leaked || strings.Contains(r.Content, privateMarker)
			}
			if leaked != c.private {
				t.Errorf("semantic_search: private content found %v", leaked)
			}
			rd := call(t, cs, "read_document", map[string]any{"document": docSlug})
			rc := call(t, cs, "read_channel", map[string]any{"channel": ch.Slug})
			if rd.IsError == c.private || rc.IsError == c.private {
				t.Errorf("read_document error %v %q; read_channel error %v %q", rd.IsError, toolText(rd), rc.IsError, toolText(rc))
			}
			if !c.private && (!strings.Contains(toolText(rd), "no document") || !strings.Contains(toolText(rc), "no channel")) {
				t.Errorf("not-found words: %q, %q", toolText(rd), toolText(rc))
			}
			ls := result[agent.SourceList](t, cs, "list_sources", map[string]any{})
			found := false
			for _, s := range ls.Sources {
				found = found || s.ID == "staff"
				for _, cl := range s.ChannelList {
					found = found || cl.Slug == ch.Slug
				}
			}
			if found != c.private {
				t.Errorf("list_sources shows private sources or channels: %v", found)
			}
		})
	}
}

// TestMCPLimits: /mcp bounds its body like every API route, and serves
// only POST (stateless).
func TestMCPLimits(t *testing.T) {
	ts := startMCP(t)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"` + strings.Repeat("a", maxAPIBody) + `"}}}`
	r := ts.do(t, "POST", "/mcp", strings.NewReader(big), "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	wantError(t, r, 413, "limit")
	if r := ts.get(t, "/mcp", "Accept", "text/event-stream"); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET /mcp: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
	if r := ts.do(t, "DELETE", "/mcp", nil); r.status != 405 {
		t.Errorf("DELETE /mcp: %d", r.status)
	}
	r = ts.do(t, "POST", "/mcp", strings.NewReader(`{"jsonrpc":`), "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if r.status != 400 {
		t.Errorf("malformed JSON-RPC: %d %s", r.status, r.body)
	}
}

// TestMCPErrorsAreJSON: what is not a JSON-RPC exchange gets JSON-RPC's
// own errors (parse error, invalid request, method not found, with the
// request's id); what the transport refuses gets the API's JSON error;
// a client that accepts anything (curl) gets the JSON answer.
func TestMCPErrorsAreJSON(t *testing.T) {
	ts := start(t)
	headers := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	rpc := func(body string, status, code int, id string) {
		t.Helper()
		r := ts.do(t, "POST", "/mcp", strings.NewReader(body), headers...)
		var out struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct{ Code int }
		}
		if err := json.Unmarshal(r.body, &out); err != nil || r.status != status || out.JSONRPC != "2.0" ||
			out.Error.Code != code || string(out.ID) != id {
			t.Errorf("%q: %d %s, want %d with JSON-RPC error %d and id %s", body, r.status, r.body, status, code, id)
		}
	}
	rpc(`{"jsonrpc":"2.0",`, 400, -32700, "null")
	rpc(`not json`, 400, -32700, "null")
	rpc(``, 400, -32700, "null")
	rpc(`[]`, 400, -32600, "null")
	rpc(`[1]`, 400, -32600, "null")
	rpc(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, 400, -32600, "null")
	rpc(`{"id":7,"method":"tools/list"}`, 400, -32600, "7")
	rpc(`{"jsonrpc":"2.0","id":"a"}`, 400, -32600, `"a"`)
	rpc(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`, 400, -32601, "3")

	api := func(method string, header []string, status int, words ...string) {
		t.Helper()
		wantError(t, ts.do(t, method, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), header...), status, words...)
	}
	api("GET", headers, 405, "stateless", "POST")
	api("DELETE", headers, 405, "stateless", "POST")
	api("POST", []string{"Content-Type", "text/plain", "Accept", "application/json, text/event-stream"}, 415, "Content-Type")
	api("POST", []string{"Content-Type", "application/json", "Accept", "text/html"}, 400, "Accept")

	r := ts.do(t, "POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "Content-Type", "application/json", "Accept", "*/*")
	if r.status != 200 || !strings.Contains(string(r.body), `"semantic_search"`) {
		t.Errorf("tools/list accepting anything: %d %.200s", r.status, r.body)
	}
}

func FuzzCheckJSONRPC(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `[{"jsonrpc":"2.0","method":"x"}]`, `[]`, `{`, `null`, `"x"`, `{"jsonrpc":"2.0","id":1,"result":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		refusal, _ := checkJSONRPC(body)
		if refusal == nil {
			if !json.Valid(body) {
				t.Fatalf("%q passed but is not JSON", body)
			}
			return
		}
		if b, err := json.Marshal(refusal); err != nil || !json.Valid(b) {
			t.Fatalf("%q: the refusal does not encode: %v", body, err)
		}
	})
}
