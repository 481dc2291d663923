package crawl

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// fakeSlack speaks the Web API methods the connector uses (CONNECTORS.md
// §2): Bearer auth with errors as HTTP 200 {"ok":false}, cursor pagination
// (response_metadata.next_cursor), history newest first with an exclusive
// oldest, replies with the parent first, conversations.list filtered by
// types (default public_channel), and one 429 with Retry-After.
type fakeSlack struct {
	*httptest.Server
	mu       sync.Mutex
	token    string
	users    []map[string]any
	channels []map[string]any
	history  map[string][]map[string]any // channel → top-level messages and parents
	replies  map[string][]map[string]any // channel/ts → replies
	limited  bool
	calls    []string
	next     float64
}

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{token: "xoxb-test", history: map[string][]map[string]any{}, replies: map[string][]map[string]any{}, next: 1700000000, limited: true}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	for i, n := range []string{"ana", "bob", "cy"} {
		f.users = append(f.users, map[string]any{"id": fmt.Sprintf("U%d", i+1), "name": n, "real_name": strings.ToUpper(n[:1]) + n[1:],
			"profile": map[string]any{"display_name": strings.ToUpper(n[:1]) + n[1:]}})
	}
	f.channels = []map[string]any{
		{"id": "C1", "name": "general", "is_private": false, "topic": map[string]any{"value": "General chat"}},
		{"id": "C2", "name": "ops", "is_private": true},
		{"id": "C3", "name": "locked"},
		{"id": "D1", "is_im": true, "user": "U2"},
	}
	for i := range 45 {
		f.post("C1", "U1", fmt.Sprintf("general note %d about sprockets", i))
	}
	parent := f.post("C1", "U2", "who knows the <#C2|ops> runbook? <@U1>")
	f.reply("C1", parent, "U1", "it is in the wiki &amp; pinned")
	f.reply("C1", parent, "U3", "thanks <https://wiki.example/run|the runbook>")
	join := f.post("C1", "U3", "<@U3> has joined the channel")
	join["subtype"] = "channel_join"
	f.post("C2", "U3", "deploy at noon")
	f.post("D1", "U2", "a direct word")
	return f
}

func (f *fakeSlack) ts() string {
	f.next += 60
	return strconv.FormatFloat(f.next, 'f', 6, 64)
}

func (f *fakeSlack) post(ch, user, text string) map[string]any {
	m := map[string]any{"type": "message", "user": user, "text": text, "ts": f.ts()}
	f.history[ch] = append(f.history[ch], m)
	return m
}

func (f *fakeSlack) reply(ch string, parent map[string]any, user, text string) {
	ts := parent["ts"].(string)
	parent["thread_ts"] = ts
	parent["reply_count"] = len(f.replies[ch+"/"+ts]) + 1
	f.replies[ch+"/"+ts] = append(f.replies[ch+"/"+ts], map[string]any{"type": "message", "user": user, "text": text, "ts": f.ts(), "thread_ts": ts, "parent_user_id": parent["user"]})
}

func (f *fakeSlack) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	f.calls = append(f.calls, method+"?"+r.URL.RawQuery)
	w.Header().Set("Content-Type", "application/json")
	send := func(v map[string]any) {
		v["ok"] = true
		json.NewEncoder(w).Encode(v)
	}
	fail := func(e string) { fmt.Fprintf(w, `{"ok":false,"error":%q}`, e) }
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		fail("invalid_auth")
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit < 1 {
		limit = 100
	}
	// page cuts list by the cursor (an offset here) and sets next_cursor.
	page := func(list []map[string]any) ([]map[string]any, map[string]any) {
		off, _ := strconv.Atoi(q.Get("cursor"))
		end := min(off+limit, len(list))
		meta := map[string]any{"next_cursor": ""}
		if end < len(list) {
			meta["next_cursor"] = strconv.Itoa(end)
		}
		return list[min(off, len(list)):end], meta
	}
	switch method {
	case "auth.test":
		send(map[string]any{"url": "https://gadgets.slack.com/", "team": "Gadgets", "user": "siftbot", "team_id": "T1", "user_id": "U9"})
	case "users.list":
		members, meta := page(f.users)
		send(map[string]any{"members": members, "response_metadata": meta})
	case "conversations.list":
		types := cmp.Or(q.Get("types"), "public_channel")
		var listed []map[string]any
		for _, c := range f.channels {
			if slices.Contains(strings.Split(types, ","), slackType(c)) {
				listed = append(listed, c)
			}
		}
		chans, meta := page(listed)
		send(map[string]any{"channels": chans, "response_metadata": meta})
	case "conversations.history":
		ch := q.Get("channel")
		if ch == "C3" {
			fail("not_in_channel")
			return
		}
		if f.limited {
			f.limited = false
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fail("ratelimited")
			return
		}
		var list []map[string]any
		oldest, _ := strconv.ParseFloat(q.Get("oldest"), 64)
		for _, m := range f.history[ch] {
			if ts, _ := strconv.ParseFloat(m["ts"].(string), 64); ts > oldest {
				list = append(list, m)
			}
		}
		slices.Reverse(list) // newest first
		msgs, meta := page(list)
		send(map[string]any{"messages": msgs, "has_more": meta["next_cursor"] != "", "response_metadata": meta})
	case "conversations.replies":
		ch, ts := q.Get("channel"), q.Get("ts")
		var parent map[string]any
		for _, m := range f.history[ch] {
			if m["ts"] == ts {
				parent = m
			}
		}
		if parent == nil {
			fail("thread_not_found")
			return
		}
		msgs, meta := page(append([]map[string]any{parent}, f.replies[ch+"/"+ts]...))
		send(map[string]any{"messages": msgs, "has_more": meta["next_cursor"] != "", "response_metadata": meta})
	default:
		fail("unknown_method")
	}
}

// slackType is the conversations.list type of a conversation.
func slackType(c map[string]any) string {
	switch {
	case c["is_im"] == true:
		return "im"
	case c["is_mpim"] == true:
		return "mpim"
	case c["is_private"] == true:
		return "private_channel"
	}
	return "public_channel"
}

func (f *fakeSlack) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

func TestSlackCrawl(t *testing.T) {
	f := newFakeSlack(t)
	eng := webEngine(t)
	cfg, err := CheckConfig("slack", map[string]any{"token": f.token, "apiBase": f.URL + "/api", "pageSize": 20.0, "allowPrivate": true})
	if err != nil {
		t.Fatal(err)
	}
	eng.PutSource(record.Source{ID: "sl", Name: "Gadgets Slack", Type: "slack", Enabled: true, Config: cfg})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	if tr, err := r.Test(t.Context(), "sl"); err != nil || !tr.OK || !strings.Contains(tr.Detail, "Gadgets") {
		t.Fatalf("test: %+v %v", tr, err)
	}
	start := time.Now()
	res, err := r.Crawl("sl", false)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < time.Second {
		t.Error("the 429's Retry-After was not waited out")
	}
	// #general (45 + the thread's parent), its thread (2 replies), #ops
	// (1); the join is skipped, #locked reported.
	if st := eng.SourceStats("sl", true); st.Messages != 49 || st.Channels != 2 || st.Threads != 1 || res.Failed != 1 {
		t.Fatalf("stats %+v, result %+v", st, res)
	}
	var thread record.Channel
	for _, c := range eng.Channels("sl", true) {
		if c.Kind == "thread" {
			thread = c
		}
	}
	replies, _, _ := eng.ChannelMessages(thread.Slug, 0, 10)
	if thread.ParentID != "C1" || !strings.HasPrefix(thread.Name, "who knows the #private-channel runbook? @ana") || len(replies) != 2 ||
		replies[0].Content != "it is in the wiki & pinned" || replies[1].Content != "thanks the runbook (https://wiki.example/run)" ||
		replies[0].Author != "ana" || replies[0].AuthorName != "Ana" || replies[0].ReplyTo == "" {
		t.Fatalf("thread %+v: %+v", thread, replies)
	}
	for _, c := range f.called() {
		if strings.HasPrefix(c, "conversations.history") && !strings.Contains(c, "limit=20") {
			t.Fatalf("page size not used: %s", c)
		}
	}

	// Incremental: history from a week before the newest message seen; a
	// new message and a new reply are picked up, nothing else changes.
	f.mu.Lock()
	f.post("C1", "U1", "a fresh sprocket question")
	for _, m := range f.history["C1"] {
		if m["reply_count"] != nil {
			f.reply("C1", m, "U2", "one more reply")
		}
	}
	f.mu.Unlock()
	res, err = r.Crawl("sl", false)
	if err != nil || res.Messages != 2 { // the new message and the new reply
		t.Fatalf("incremental: %+v %v", res, err)
	}
	for _, c := range f.called() {
		if strings.HasPrefix(c, "conversations.history") && strings.Contains(c, "channel=C1") && !strings.Contains(c, "oldest=") {
			t.Fatalf("an incremental crawl read all history: %s", c)
		}
	}

	// Full: a message deleted upstream goes.
	f.mu.Lock()
	f.history["C2"] = nil
	f.mu.Unlock()
	res, err = r.Crawl("sl", true)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("full: %+v %v", res, err)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "deploy noon"}); len(found.Messages) != 0 {
		t.Fatal("the message deleted upstream is still found")
	}

	// A wrong token: the test and the crawl say so.
	eng.UpdateSource("sl", func(s *record.Source) error { s.Config["token"] = "xoxb-wrong"; return nil })
	if tr, _ := r.Test(t.Context(), "sl"); tr.OK || !strings.Contains(tr.Error, "invalid_auth") {
		t.Fatalf("wrong token: %+v", tr)
	}
}

// TestSlackStuckCursor: a server that hands back the same cursor is an
// error, not an endless crawl nor a short list that deletes the rest.
func TestSlackStuckCursor(t *testing.T) {
	f := newFakeSlack(t)
	f.limited = false
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "conversations.history") {
			fmt.Fprint(w, `{"ok":true,"messages":[{"type":"message","user":"U1","text":"again","ts":"1700000000.000100"}],"response_metadata":{"next_cursor":"same"}}`)
			return
		}
		f.serve(w, req)
	}))
	defer stuck.Close()
	eng := webEngine(t)
	cfg, _ := CheckConfig("slack", map[string]any{"token": f.token, "apiBase": stuck.URL + "/api", "allowPrivate": true})
	eng.PutSource(record.Source{ID: "sl", Name: "S", Type: "slack", Enabled: true, Config: cfg})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	if _, err := r.Crawl("sl", true); err == nil || !strings.Contains(err.Error(), "did not move on") {
		t.Fatalf("a stuck cursor: %v", err)
	}
}

// TestSlackPrivateChannels: a private channel and its threads are stored
// private, public ones public; DMs, which the connector does not ask for,
// are not crawled.
func TestSlackPrivateChannels(t *testing.T) {
	f := newFakeSlack(t)
	f.limited = false
	for _, m := range f.history["C2"] {
		f.reply("C2", m, "U1", "noon works")
	}
	eng := webEngine(t)
	cfg, _ := CheckConfig("slack", map[string]any{"token": f.token, "apiBase": f.URL + "/api", "allowPrivate": true})
	eng.PutSource(record.Source{ID: "sl", Name: "S", Type: "slack", Enabled: true, Config: cfg})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	if _, err := r.Crawl("sl", false); err != nil {
		t.Fatal(err)
	}
	for _, c := range f.called() {
		if strings.HasPrefix(c, "conversations.list") && !strings.Contains(c, "types=public_channel%2Cprivate_channel") {
			t.Fatalf("conversations.list asked %s", c)
		}
	}
	var got []string
	for _, c := range eng.Channels("sl", true) {
		got = append(got, fmt.Sprintf("%s:%s:%v", c.ID, c.Kind, c.Hidden)) // a thread follows its channel
	}
	slices.Sort(got)
	thread := func(ch string) string { // the id of ch's thread
		for _, m := range f.history[ch] {
			if m["reply_count"] != nil {
				return ch + "-" + m["ts"].(string)
			}
		}
		return ""
	}
	want := []string{"C1:channel:false", thread("C1") + ":thread:false", "C2:channel:true", thread("C2") + ":thread:true"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("channels %v, want %v", got, want)
	}
	if pub := eng.Channels("sl", false); len(pub) != 2 || pub[0].Private || pub[1].Private {
		t.Fatalf("public channels %+v", pub)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "noon works"}); len(found.Messages) != 0 {
		t.Fatal("a private channel's thread is found without credentials")
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "noon works", Private: true}); len(found.Messages) == 0 {
		t.Fatal("the private thread is not found with credentials")
	}
}
