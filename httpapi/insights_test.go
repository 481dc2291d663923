package httpapi

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/insights"
)

// startInsights serves the demo content with the extractive answerer and
// a recorder of insights kept in the engine; off serves it without one
// (INSIGHTS=off).
func startInsights(t *testing.T, off bool, mod ...func(*Options)) *testServer {
	t.Helper()
	eng, idx := semanticDemo(t, nil)
	opts := Options{APISecretKey: testKey, AdminUser: testUser, AdminPassword: testPass}
	var rec *insights.Recorder
	if !off {
		var err error
		if rec, err = insights.Open(insights.Options{Store: eng}); err != nil {
			t.Fatal(err)
		}
		opts.Insights = rec
	}
	for _, m := range mod {
		m(&opts)
	}
	ts := serveAsking(t, eng, idx, opts, ask.Options{})
	if rec != nil {
		t.Cleanup(func() { rec.Close() }) // before the server and the engine close
	}
	return ts
}

var adminBasic = []string{"Authorization", "Basic " + basic(testUser, testPass)}

type insightsAnswer struct {
	Days                int `json:"days"`
	Searches            int `json:"searches"`
	Asks                int `json:"asks"`
	TopQueries          []insightEntry
	ZeroResultQueries   []insightEntry
	UnansweredQuestions []insightEntry
	TopQuestions        []insightEntry
	Daily               []struct {
		Date     string
		Searches int
		Asks     int
	}
	Recording bool
}

type insightEntry struct {
	Query, Question string
	Count           int
	LastSeen        string
	FirstSeen       string
	Authenticated   int
	Endpoints       map[string]int
}

func (e insightEntry) text() string { return e.Query + e.Question }

func getInsights(t *testing.T, ts *testServer, query string) insightsAnswer {
	t.Helper()
	r := ts.get(t, "/api/admin/insights"+query, adminBasic...)
	if r.status != 200 {
		t.Fatalf("insights: %d %s", r.status, r.body)
	}
	var a insightsAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func find(es []insightEntry, text string) *insightEntry {
	for i := range es {
		if es[i].text() == text {
			return &es[i]
		}
	}
	return nil
}

// TestInsightsRecorded: searches of the page, the API and semantic
// search, questions of the API (JSON and streamed), the page's ask box,
// and the MCP tools show up with their endpoint, their flags, and
// authenticated callers counted apart.
func TestInsightsRecorded(t *testing.T) {
	ts := startInsights(t, false)
	mustOK := func(r resp) {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	mustOK(ts.get(t, "/?q=Webhook+Signature"))
	mustOK(ts.get(t, "/api/search?q=webhook%20%20signature"))
	mustOK(ts.get(t, "/api/search?q=webhook+signature", bearer...))
	mustOK(ts.get(t, "/api/search?q=webhook+signature&offset=20")) // the same search, paged: not counted
	mustOK(ts.get(t, "/api/search?q=zqxj+vbnm"))
	mustOK(ts.get(t, "/api/semantic-search?q=jobs+run+twice+when+the+clocks+change"))
	mustOK(ts.get(t, "/api/semantic-search?q=jobs+run+twice+when+the+clocks+change", adminBasic...))
	const unknown = "What is the boiling point of mercury in kelvin?"
	const known = "Why did my job run twice after the DST change?"
	mustOK(ts.do(t, "POST", "/api/ask", askBody(unknown), jsonCT...))
	stream := ts.do(t, "POST", "/api/ask", askBody(unknown), "Content-Type", "application/json", "Accept", "text/event-stream")
	if stream.status != 200 || !strings.Contains(string(stream.body), `"done"`) {
		t.Fatalf("stream: %d %s", stream.status, stream.body)
	}
	mustOK(ts.do(t, "POST", "/api/ask", askBody(known), "Content-Type", "application/json", "Accept", "text/event-stream"))
	mustOK(ts.do(t, "POST", "/api/v1/ask", askBody(known), append(jsonCT, bearer...)...))
	mustOK(ts.do(t, "POST", "/", strings.NewReader("ask="+url.QueryEscape(unknown)), "Content-Type", "application/x-www-form-urlencoded"))

	cs := connect(t, ts)
	result[agent.SearchResult](t, cs, "search", agent.SearchArgs{Q: "retry backoff"})
	result[agent.SemanticResult](t, cs, "semantic_search", agent.SemanticArgs{Q: "retry backoff"})
	result[agent.AskResult](t, cs, "ask", agent.AskArgs{Question: unknown})
	csAuth := connect(t, ts, bearer...)
	result[agent.SearchResult](t, csAuth, "search", agent.SearchArgs{Q: "Retry  Backoff"})

	a := getInsights(t, ts, "")
	if a.Days != 30 || a.Searches != 9 || a.Asks != 6 || !a.Recording || len(a.Daily) != 30 {
		t.Fatalf("days %d, %d searches, %d asks, recording %v, %d days", a.Days, a.Searches, a.Asks, a.Recording, len(a.Daily))
	}
	if d := a.Daily[29]; d.Searches != 9 || d.Asks != 6 {
		t.Errorf("today %+v", d)
	}
	ws := find(a.TopQueries, "webhook signature")
	if ws == nil || ws.Count != 3 || ws.Authenticated != 1 || ws.Endpoints["page"] != 1 || ws.Endpoints["api"] != 2 || ws.LastSeen != a.Daily[29].Date {
		t.Errorf("webhook signature: %+v", ws)
	}
	if rb := find(a.TopQueries, "retry backoff"); rb == nil || rb.Count != 3 || rb.Endpoints["mcp"] != 3 || rb.Authenticated != 1 {
		t.Errorf("retry backoff: %+v", rb)
	}
	if sem := find(a.TopQueries, "jobs run twice when the clocks change"); sem == nil || sem.Count != 2 || sem.Endpoints["semantic"] != 2 || sem.Authenticated != 1 {
		t.Errorf("semantic: %+v", sem)
	}
	if got := a.ZeroResultQueries; len(got) != 1 || got[0].Query != "zqxj vbnm" || got[0].Count != 1 {
		t.Errorf("zero-result queries %+v", got)
	}
	u := find(a.UnansweredQuestions, strings.ToLower(unknown))
	if len(a.UnansweredQuestions) != 1 || u == nil || u.Count != 4 || u.Endpoints["ask"] != 3 || u.Endpoints["mcp"] != 1 {
		t.Errorf("unanswered %+v", a.UnansweredQuestions)
	}
	if k := find(a.TopQuestions, strings.ToLower(known)); k == nil || k.Count != 2 || k.Authenticated != 1 {
		t.Errorf("asked %+v", a.TopQuestions)
	}

	// Public callers alone, and authenticated ones alone.
	pub := getInsights(t, ts, "?callers=public&days=7")
	if pub.Searches != 6 || pub.Asks != 5 || find(pub.TopQueries, "webhook signature").Count != 2 {
		t.Errorf("public: %d searches, %d asks, %+v", pub.Searches, pub.Asks, pub.TopQueries)
	}
	auth := getInsights(t, ts, "?callers=authenticated")
	if auth.Searches != 3 || auth.Asks != 1 || len(auth.UnansweredQuestions) != 0 {
		t.Errorf("authenticated: %d searches, %d asks, %+v", auth.Searches, auth.Asks, auth.UnansweredQuestions)
	}
}

// TestInsightsAccess: the endpoint is an admin endpoint like the others —
// the same status for the same credentials — and the dashboard page takes
// Basic Auth only.
func TestInsightsAccess(t *testing.T) {
	ts := startInsights(t, false)
	for _, creds := range [][]string{
		nil,
		{"Authorization", "Basic " + basic(testUser, "wrong")},
		{"Authorization", "Bearer wrong"},
		{"Authorization", "Digest x"},
	} {
		want := ts.get(t, "/api/settings", creds...)
		got := ts.get(t, "/api/admin/insights", creds...)
		if got.status != want.status || got.status != 401 || got.header.Get("WWW-Authenticate") != want.header.Get("WWW-Authenticate") {
			t.Errorf("%v: %d %q, /api/settings %d", creds, got.status, got.header.Get("WWW-Authenticate"), want.status)
		}
		wantError(t, got, 401)
	}
	if r := ts.get(t, "/api/admin/insights", bearer...); r.status != 200 {
		t.Errorf("bearer: %d", r.status)
	}
	if r := ts.get(t, "/dashboard/insights"); r.status != 401 {
		t.Errorf("dashboard without credentials: %d", r.status)
	}
	if r := ts.get(t, "/dashboard/insights", bearer...); r.status != 401 {
		t.Errorf("dashboard with a bearer token: %d", r.status)
	}
	closed := startInsights(t, false, func(o *Options) { o.APISecretKey, o.AdminUser, o.AdminPassword = "", "", "" })
	want := closed.get(t, "/api/settings")
	if got := closed.get(t, "/api/admin/insights"); got.status != want.status || got.status != 403 {
		t.Errorf("admin disabled: %d, /api/settings %d", got.status, want.status)
	}
}

// TestInsightsBadParams: days and callers out of bounds are a 400 JSON
// error naming the parameter; on the dashboard page, a 400 page.
func TestInsightsBadParams(t *testing.T) {
	ts := startInsights(t, false)
	for _, q := range []string{"days=abc", "days=0", "days=91", "days=-1", "days=1.5", "days=", "callers=everyone"} {
		r := ts.get(t, "/api/admin/insights?"+q, adminBasic...)
		word := strings.SplitN(q, "=", 2)[0]
		wantError(t, r, 400, word)
		if p := ts.get(t, "/dashboard/insights?"+q, adminBasic...); p.status != 400 || !strings.Contains(string(p.body), word) {
			t.Errorf("dashboard ?%s: %d", q, p.status)
		}
	}
	for _, q := range []string{"", "?days=1", "?days=90", "?callers=public"} {
		if r := ts.get(t, "/api/admin/insights"+q, adminBasic...); r.status != 200 {
			t.Errorf("%s: %d %s", q, r.status, r.body)
		}
	}
}

// TestInsightsOff: without a recorder nothing is counted, and the report
// is empty, not an error.
func TestInsightsOff(t *testing.T) {
	ts := startInsights(t, true)
	ts.get(t, "/api/search?q=webhook+signature")
	ts.get(t, "/?q=zqxj")
	ts.do(t, "POST", "/api/ask", askBody("What is the boiling point of mercury in kelvin?"), jsonCT...)
	a := getInsights(t, ts, "?days=7")
	if a.Recording || a.Searches != 0 || a.Asks != 0 || len(a.TopQueries) != 0 || len(a.UnansweredQuestions) != 0 || len(a.Daily) != 7 {
		t.Errorf("off: %+v", a)
	}
	r := ts.get(t, "/api/admin/insights", adminBasic...)
	for _, list := range []string{`"topQueries":[]`, `"zeroResultQueries":[]`, `"unansweredQuestions":[]`} {
		if !strings.Contains(string(r.body), list) {
			t.Errorf("no %s in %s", list, r.body)
		}
	}
	if p := ts.get(t, "/dashboard/insights", adminBasic...); p.status != 200 || !strings.Contains(string(p.body), "INSIGHTS=off") {
		t.Errorf("dashboard: %d", p.status)
	}
}

// TestInsightsPage: the dashboard page lists what was searched, escapes
// it, links each unanswered question to the search page, draws the chart
// and offers the windows as links.
func TestInsightsPage(t *testing.T) {
	ts := startInsights(t, false)
	evil := `<script>alert(1)</script> & "quotes"`
	ts.get(t, "/api/search?q="+url.QueryEscape(evil))
	ts.do(t, "POST", "/api/ask", askBody("What is the boiling point of mercury in kelvin?"), jsonCT...)
	r := ts.get(t, "/dashboard/insights?days=7", adminBasic...)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	page := string(r.body)
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the query is not escaped")
	}
	for _, want := range []string{
		`<svg class="chart"`, `role="img"`, `<title id="chart-title">Searches and questions per day, the last 7 days</title>`,
		`<rect class="searches"`, `<rect class="asks"`,
		`href="/?q=what&#43;is&#43;the&#43;boiling&#43;point&#43;of&#43;mercury&#43;in&#43;kelvin%3F"`,
		`href="/dashboard/insights?days=30"`, `href="/dashboard/insights?days=90"`, `aria-current="page">7 days</a>`,
		`href="/dashboard/insights?callers=public&amp;days=7"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if d := ts.get(t, "/dashboard", adminBasic...); !strings.Contains(string(d.body), `href="/dashboard/insights"`) {
		t.Error("the dashboard does not link to the insights")
	}
}

// TestNoAnswerWatch: a streamed answer is ask.NoAnswer only when its
// pieces spell exactly that.
func TestNoAnswerWatch(t *testing.T) {
	words := strings.SplitAfter(ask.NoAnswer, " ")
	for _, c := range []struct {
		pieces []string
		want   bool
	}{
		{words, true},
		{[]string{ask.NoAnswer}, true},
		{nil, false},
		{words[:len(words)-1], false},
		{append(slices.Clone(words), " More."), false},
		{[]string{"Something else."}, false},
	} {
		var w noAnswerWatch
		for _, p := range c.pieces {
			w.piece(p)
		}
		if w.noAnswer() != c.want {
			t.Errorf("%q: %v", c.pieces, !c.want)
		}
	}
}
