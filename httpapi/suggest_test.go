package httpapi

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// seedSuggest stores a public source with channel "help", a message and a
// document, and a private source with channel "payroll-room", a message
// and a document whose words ("zeppelinx", "quuxotic") appear nowhere
// public; and a private channel of the public source.
func seedSuggest(t testing.TB, e *engine.Engine) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.PutSource(record.Source{ID: "pub", Name: "Wren Discord", Type: "discord", Enabled: true})
	must(err)
	_, err = e.PutSource(record.Source{ID: "priv", Name: "Staff", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate})
	must(err)
	_, err = e.PutChannels([]record.Channel{
		{SourceID: "pub", ID: "1", Name: "help"},
		{SourceID: "pub", ID: "2", Name: "hiring-secrets", Private: true},
		{SourceID: "priv", ID: "3", Name: "payroll-room"},
	})
	must(err)
	t0 := time.Date(2026, 4, 1, 9, 30, 0, 0, time.UTC)
	_, err = e.PutMessages([]record.Message{
		{SourceID: "pub", ChannelID: "1", ID: "11", Author: "ana", Content: "webhook signature mismatch: configure the secret", Timestamp: t0},
		{SourceID: "pub", ChannelID: "1", ID: "12", Author: "bo", Content: "webhooks retry with backoff", Timestamp: t0.Add(time.Minute)},
		{SourceID: "pub", ChannelID: "2", ID: "21", Author: "cy", Content: "the quuxotic candidate", Timestamp: t0},
		{SourceID: "priv", ChannelID: "3", ID: "31", Author: "eve", Content: "zeppelinx budget webhook", Timestamp: t0},
	})
	must(err)
	_, err = e.PutDocuments([]record.Document{
		{SourceID: "pub", Key: "webhooks.md", Title: "Webhooks guide", Content: "How to configure webhooks."},
		{SourceID: "priv", Key: "pay.md", Title: "Payroll handbook", Content: "zeppelinx salaries"},
	})
	must(err)
}

type suggestItem struct {
	Text, Kind, Slug, Source, URL string
	Count                         int
}

// suggestions calls GET /api/suggest?q= and returns its suggestions,
// checking the answer's shape.
func (ts *testServer) suggestions(t testing.TB, q string, header ...string) []suggestItem {
	t.Helper()
	r := ts.get(t, "/api/suggest?q="+url.QueryEscape(q), header...)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("suggest %q: %d %s: %s", q, r.status, r.header.Get("Content-Type"), r.body)
	}
	var out struct {
		Suggestions []map[string]any `json:"suggestions"`
	}
	if err := json.Unmarshal(r.body, &out); err != nil || out.Suggestions == nil {
		t.Fatalf("suggest %q: %v: %s", q, err, r.body)
	}
	var items []suggestItem
	for _, m := range out.Suggestions {
		var it suggestItem
		b, _ := json.Marshal(m)
		json.Unmarshal(b, &it)
		want := []string{"count", "kind", "text"}
		if it.Kind != query.SuggestWord {
			want = []string{"kind", "slug", "source", "text", "url"}
		}
		if got := keys(m); !slices.Equal(got, want) {
			t.Errorf("suggest %q: %s has fields %v, want %v", q, it.Kind, got, want)
		}
		items = append(items, it)
	}
	if len(items) > query.MaxSuggestions {
		t.Errorf("suggest %q: %d suggestions", q, len(items))
	}
	return items
}

func texts(items []suggestItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Kind+":"+it.Text)
	}
	return out
}

// TestSuggest: words complete the query's last word, most frequent
// first; channels and documents come with their pages; nothing private
// reaches an anonymous caller — no private channel's name, no private
// document's title, no word only private records hold — while the API key
// and the admin's Basic Auth see it all.
func TestSuggest(t *testing.T) {
	ts := start(t)
	seedSuggest(t, ts.eng)

	got := ts.suggestions(t, "How to webh")
	if len(got) < 3 || got[0] != (suggestItem{Text: "How to webhook", Kind: "word", Count: 2}) {
		t.Fatalf("How to webh: %+v", got)
	}
	if !slices.Contains(texts(got), "word:How to webhooks") || !slices.Contains(texts(got), "document:Webhooks guide") {
		t.Errorf("How to webh: %v", texts(got))
	}
	for _, it := range got {
		if it.Kind == "document" {
			d, ok := ts.eng.DocumentBySlug(it.Slug)
			if !ok || d.Title != "Webhooks guide" || it.URL != ts.url+"/d/"+it.Slug || it.Source != "Wren Discord" {
				t.Errorf("document suggestion %+v", it)
			}
		}
	}
	if got := ts.suggestions(t, "he"); !slices.Equal(texts(got), []string{"channel:help"}) || got[0].URL != ts.url+"/c/help" {
		t.Errorf("he: %+v", got)
	}
	if got := ts.suggestions(t, "webhooks "); len(got) != 1 || got[0].Text != "Webhooks guide" {
		t.Errorf("a finished word completes no word: %+v", got)
	}

	private := map[string]string{"zepp": "word:zeppelinx", "quux": "word:quuxotic", "payr": "document:Payroll handbook",
		"room": "channel:payroll-room", "hiri": "channel:hiring-secrets", "sal": "word:salaries"}
	for q, want := range private {
		if got := ts.suggestions(t, q); len(got) != 0 {
			t.Errorf("anonymous %q: %v", q, texts(got))
		}
		for _, auth := range [][]string{bearer, {"Authorization", "Basic " + basic(testUser, testPass)}} {
			if got := ts.suggestions(t, q, auth...); !slices.Contains(texts(got), want) {
				t.Errorf("%s %q: %v, want %s", strings.Fields(auth[1])[0], q, texts(got), want)
			}
		}
	}
	// The private message's "webhook" counts for the admin only.
	if got := ts.suggestions(t, "webhoo", bearer...); got[0].Count != 3 {
		t.Errorf("admin's webhook count: %+v", got[0])
	}
	if got := ts.suggestions(t, "we"); got[0].Count != 2 {
		t.Errorf("anonymous webhook count: %+v", got[0])
	}
}

// TestSuggestValidation: bad input is a JSON 400 naming the parameter; a
// wrong key is a 401; with SEARCH_ACCESS=bearer suggestions need the key.
func TestSuggestValidation(t *testing.T) {
	ts := start(t)
	wantError(t, ts.get(t, "/api/suggest"), 400, "q is required")
	wantError(t, ts.get(t, "/api/suggest?q="), 400, "q is required")
	wantError(t, ts.get(t, "/api/suggest?q="+strings.Repeat("a", query.MaxSuggestQueryBytes+1)), 400, "q is too long", "256")
	wantError(t, ts.get(t, "/api/suggest?q=%ff"), 400, "UTF-8")
	wantError(t, ts.get(t, "/api/suggest?q=a&limit=9"), 400, "limit", "1 to 8")
	wantError(t, ts.get(t, "/api/suggest?q=a&limit=x"), 400, "limit")
	wantError(t, ts.get(t, "/api/suggest?q=a", "Authorization", "Bearer wrong"), 401)
	if r := ts.get(t, "/api/suggest?q="+strings.Repeat("a", query.MaxSuggestQueryBytes)); r.status != 200 {
		t.Errorf("q of %d bytes: %d %s", query.MaxSuggestQueryBytes, r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/suggest?q=a", nil); r.status != 405 {
		t.Errorf("POST: %d", r.status)
	}

	closed := start(t, func(o *Options) { o.SearchAccess = "bearer" })
	wantError(t, closed.get(t, "/api/suggest?q=a"), 401)
	if r := closed.get(t, "/api/suggest?q=a", bearer...); r.status != 200 {
		t.Errorf("with the key: %d %s", r.status, r.body)
	}
}

// TestSuggestOwnBucket: suggestions spend a bucket of their own: a burst
// of them leaves the public tier's bucket whole, and past their own burst
// they get a JSON 429 with Retry-After; the key lifts the limit.
func TestSuggestOwnBucket(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 2; o.SuggestRateLimit = 1 }) // burst 2
	for i := range 2 {
		r := ts.get(t, "/api/suggest?q=a")
		if r.status != 200 || r.header.Get("RateLimit-Limit") != "2" || r.header.Get("RateLimit-Remaining") != strconv.Itoa(1-i) {
			t.Fatalf("suggestion %d: %d limit %s remaining %s", i, r.status, r.header.Get("RateLimit-Limit"), r.header.Get("RateLimit-Remaining"))
		}
	}
	r := ts.get(t, "/api/suggest?q=a")
	wantError(t, r, 429, "per second")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if r := ts.get(t, "/api/suggest?q=a", bearer...); r.status != 200 {
		t.Errorf("with the key: %d", r.status)
	}
	for i := range 2 {
		r := ts.get(t, "/api/search?q=a")
		if r.status != 200 || r.header.Get("RateLimit-Remaining") != strconv.Itoa(1-i) {
			t.Fatalf("search %d after the suggestions: %d remaining %s", i, r.status, r.header.Get("RateLimit-Remaining"))
		}
	}
	wantError(t, ts.get(t, "/api/search?q=a"), 429)

	// The default is generous: a fast typist's 40 keystrokes at once.
	ts = start(t, func(o *Options) { o.PublicRateLimit = 2 })
	for i := range 40 {
		if r := ts.get(t, "/api/suggest?q=a"); r.status != 200 {
			t.Fatalf("suggestion %d: %d", i, r.status)
		}
	}
}
