package crawl

import (
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

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// fakeDiscord speaks the parts of Discord's REST API v10 the connector
// uses (CONNECTORS.md §1): Bot auth (401 without it), snowflake string ids,
// message pages newest first with before/after/limit, active and archived
// threads, channels' permission_overwrites and the guild's roles (the
// @everyone role has the guild's id), one 429 with a fractional
// retry_after, and a mode without the Message Content intent.
type fakeDiscord struct {
	*httptest.Server
	mu       sync.Mutex
	token    string
	channels []map[string]any
	everyone string // the @everyone role's permissions; "" = roles answer 403
	active   []map[string]any
	archived map[string][]map[string]any // parent → archived threads
	messages map[string][]map[string]any // channel → messages
	next     uint64                      // next snowflake
	noIntent bool
	limited  bool     // a 429 is still to come
	requests []string // "path?query" of every request
}

func newFakeDiscord(t *testing.T) *fakeDiscord {
	f := &fakeDiscord{token: "secret-bot-token", archived: map[string][]map[string]any{}, messages: map[string][]map[string]any{},
		next: 1200000000000000000, limited: true, everyone: "104324673"}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	f.channels = []map[string]any{
		{"id": "100", "type": 0, "name": "general", "topic": "Talk about gadgets", "parent_id": "103"},
		{"id": "101", "type": 5, "name": "news", "topic": nil, "permission_overwrites": []any{
			map[string]any{"id": "81384788765712384", "type": 0, "allow": "0", "deny": "2048"}}}, // @everyone may not send
		{"id": "102", "type": 2, "name": "Voice"},
		{"id": "103", "type": 4, "name": "Text channels"},
		{"id": "104", "type": 15, "name": "help-forum"},
		{"id": "105", "type": 0, "name": "secret", "permission_overwrites": []any{
			map[string]any{"id": "81384788765712384", "type": 0, "allow": "0", "deny": "1024"}, // @everyone may not view
			map[string]any{"id": "300", "type": 0, "allow": "1024", "deny": "0"}}},
	}
	f.active = []map[string]any{{"id": "200", "type": 11, "name": "gadget question", "parent_id": "100"}}
	f.archived["104"] = []map[string]any{{"id": "201", "type": 11, "name": "How to flux?", "parent_id": "104",
		"thread_metadata": map[string]any{"archived": true, "archive_timestamp": "2024-01-05T10:00:00.000000+00:00"}}}
	t0 := time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC)
	for i := range 250 {
		f.add("100", 0, "ana", fmt.Sprintf("general message %d about widgets", i), t0.Add(time.Duration(i)*time.Minute))
	}
	f.add("100", 7, "bob", "", t0.Add(300*time.Minute)) // a join
	att := f.add("100", 0, "cy", "", t0.Add(301*time.Minute))
	att["attachments"] = []any{map[string]any{"id": "9", "filename": "diagram.png", "size": 10, "url": "https://cdn.example/x"}}
	first := f.messages["100"][0]["id"].(string)
	reply := f.add("100", 19, "dee", "agreed with the first", t0.Add(302*time.Minute))
	reply["message_reference"] = map[string]any{"type": 0, "message_id": first, "channel_id": "100"}
	edited := f.add("101", 0, "eve", "release 2.0 is out", t0.Add(10*time.Minute))
	edited["edited_timestamp"] = "2024-01-02T11:00:00.000000+00:00"
	bot := f.add("101", 0, "buildbot", "nightly build passed", t0.Add(11*time.Minute))
	bot["author"].(map[string]any)["bot"] = true
	f.add("200", 0, "ana", "how do I calibrate the widget?", t0.Add(20*time.Minute))
	f.add("201", 0, "fin", "the flux needs a capacitor", t0.Add(30*time.Minute))
	f.add("105", 0, "zed", "you cannot read this", t0)
	return f
}

// add appends a message with the next snowflake to a channel.
func (f *fakeDiscord) add(channel string, typ int, user, content string, at time.Time) map[string]any {
	f.next += 1 << 22
	id := strconv.FormatUint(f.next, 10)
	m := map[string]any{
		"id": id, "channel_id": channel, "type": typ, "content": content,
		"timestamp": at.Format("2006-01-02T15:04:05.000000+00:00"), "edited_timestamp": nil,
		"author":      map[string]any{"id": "u-" + user, "username": user, "global_name": strings.ToUpper(user[:1]) + user[1:], "discriminator": "0"},
		"attachments": []any{}, "embeds": []any{}, "flags": 0,
	}
	f.messages[channel] = append(f.messages[channel], m)
	return m
}

func (f *fakeDiscord) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.URL.RequestURI())
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bot "+f.token || !strings.HasPrefix(r.Header.Get("User-Agent"), "DiscordBot (") {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message": "401: Unauthorized", "code": 0}`)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/api/v10")
	send := func(v any) { json.NewEncoder(w).Encode(v) }
	switch {
	case p == "/users/@me":
		send(map[string]any{"id": "999", "username": "siftbot", "bot": true})
	case p == "/guilds/81384788765712384/channels":
		send(f.channels)
	case p == "/guilds/81384788765712384/roles":
		if f.everyone == "" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message": "Missing Access", "code": 50001}`)
			return
		}
		send([]map[string]any{{"id": "81384788765712384", "name": "@everyone", "permissions": f.everyone, "position": 0},
			{"id": "300", "name": "Staff", "permissions": "8", "position": 1}})
	case p == "/guilds/81384788765712384/threads/active":
		send(map[string]any{"threads": f.active, "members": []any{}})
	case strings.HasSuffix(p, "/threads/archived/public"):
		parent := strings.Split(p, "/")[2]
		send(map[string]any{"threads": f.archived[parent], "members": []any{}, "has_more": false})
	case strings.HasSuffix(p, "/messages"):
		ch := strings.Split(p, "/")[2]
		if ch == "105" {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message": "Missing Access", "code": 50001}`)
			return
		}
		if f.limited {
			f.limited = false
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message": "You are being rate limited.", "retry_after": 0.05, "global": false}`)
			return
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if limit < 1 || limit > 100 {
			limit = 50
		}
		before, after := r.URL.Query().Get("before"), r.URL.Query().Get("after")
		if before != "" && after != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"message": "before and after are exclusive", "code": 50035}`)
			return
		}
		all := slices.Clone(f.messages[ch])
		slices.SortFunc(all, func(a, b map[string]any) int { return snowflakeCmp(a["id"].(string), b["id"].(string)) })
		var page []map[string]any
		switch {
		case after != "": // the limit smallest ids above after
			for _, m := range all {
				if snowflakeLess(after, m["id"].(string)) && len(page) < limit {
					page = append(page, m)
				}
			}
		case before != "": // the limit largest ids below before
			for i := len(all) - 1; i >= 0 && len(page) < limit; i-- {
				if snowflakeLess(all[i]["id"].(string), before) {
					page = append(page, all[i])
				}
			}
		default:
			for i := len(all) - 1; i >= 0 && len(page) < limit; i-- {
				page = append(page, all[i])
			}
		}
		slices.SortFunc(page, func(a, b map[string]any) int { return snowflakeCmp(b["id"].(string), a["id"].(string)) }) // newest first
		out := make([]map[string]any, len(page))
		for i, m := range page {
			c := map[string]any{}
			for k, v := range m {
				c[k] = v
			}
			if f.noIntent {
				c["content"], c["attachments"], c["embeds"] = "", []any{}, []any{}
			}
			out[i] = c
		}
		send(out)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message": "404: Not Found", "code": 0}`)
	}
}

func (f *fakeDiscord) reqs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = nil
	return out
}

func discordSource(t *testing.T, f *fakeDiscord, extra map[string]any) (*engine.Engine, *Runner) {
	t.Helper()
	eng := webEngine(t)
	cfg := map[string]any{"token": f.token, "guildId": "81384788765712384", "apiBase": f.URL + "/api/v10", "allowPrivate": true}
	for k, v := range extra {
		cfg[k] = v
	}
	cfg, err := CheckConfig("discord", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSource(record.Source{ID: "dc", Name: "Gadget Discord", Type: "discord", Enabled: true, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(eng, RunnerOptions{Env: Env{UserAgent: "SiftBot/test"}})
	t.Cleanup(r.Close)
	return eng, r
}

func channelIDs(eng *engine.Engine) []string {
	var out []string
	for _, c := range eng.Channels("dc", true) {
		out = append(out, c.ID+":"+c.Kind+":"+c.ParentID)
	}
	slices.Sort(out)
	return out
}

// privateIDs lists the ids of the source's private channels.
// privateIDs lists the channels callers without credentials cannot see: a
// thread follows its stored channel in the engine.
func privateIDs(eng *engine.Engine) []string {
	var out []string
	for _, c := range eng.Channels("dc", true) {
		if c.Hidden {
			out = append(out, c.ID)
		}
	}
	slices.Sort(out)
	return out
}

func TestDiscordCrawl(t *testing.T) {
	f := newFakeDiscord(t)
	eng, r := discordSource(t, f, nil)
	tr, err := r.Test(t.Context(), "dc")
	if err != nil || !tr.OK || !strings.Contains(tr.Detail, "siftbot") || !strings.Contains(tr.Detail, "3 readable channels") {
		t.Fatalf("test: %+v %v", tr, err)
	}
	f.reqs()

	res, err := r.Crawl("dc", false)
	if err != nil {
		t.Fatal(err)
	}
	// Text and announcement channels, the active thread, the forum's
	// archived post; not the voice channel, the category, the forum itself.
	if got := channelIDs(eng); !slices.Equal(got, []string{"100:channel:", "101:channel:", "105:channel:", "200:thread:100", "201:thread:104"}) {
		t.Fatalf("channels %v", got)
	}
	// @everyone is denied VIEW_CHANNEL in #secret only.
	if got := privateIDs(eng); !slices.Equal(got, []string{"105"}) {
		t.Fatalf("private channels %v", got)
	}
	// 250 + attachment + reply in #general, 2 in #news, 1 + 1 in threads;
	// the join is not kept; #secret answers 403 and is skipped.
	if st := eng.SourceStats("dc", true); st.Messages != 256 || res.Messages != 256 || res.Failed != 1 {
		t.Fatalf("stats %+v, result %+v", st, res)
	}
	msgs, _, _ := eng.ChannelMessages("general", 250, 10)
	if len(msgs) != 2 || msgs[0].Content != "[attachment: diagram.png]" || msgs[1].ReplyTo == "" || msgs[1].AuthorName != "Dee" ||
		!strings.HasPrefix(msgs[1].URL, "https://discord.com/channels/81384788765712384/100/") {
		t.Fatalf("last messages of #general: %+v", msgs)
	}
	news, _, _ := eng.ChannelMessages("news", 0, 10)
	if len(news) != 2 || news[0].EditedAt.IsZero() || news[1].Author != "buildbot" {
		t.Fatalf("#news: %+v", news)
	}
	reqs := f.reqs()
	pages := 0
	for _, q := range reqs {
		if strings.Contains(q, "/channels/100/messages") {
			pages++
		}
	}
	if pages != 4 { // 3 pages of 100 back to the first message, plus the 429 retried
		t.Fatalf("%d requests for #general's messages: %v", pages, reqs)
	}

	// Incremental: only what is new, asked with after=.
	f.mu.Lock()
	f.add("100", 0, "ana", "a brand new message", time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC))
	f.mu.Unlock()
	res, err = r.Crawl("dc", false)
	if err != nil || res.Messages != 1 {
		t.Fatalf("incremental: %+v %v", res, err)
	}
	for _, q := range f.reqs() {
		if strings.Contains(q, "/messages") && !strings.Contains(q, "after=") && !strings.Contains(q, "/105/") {
			t.Fatalf("an incremental crawl asked %s", q)
		}
	}

	// Upstream, a message is edited and another deleted: a full crawl
	// replaces the one and removes the other.
	f.mu.Lock()
	f.messages["100"][5]["content"] = "general message 5, corrected"
	deleted := f.messages["100"][6]["id"].(string)
	f.messages["100"] = slices.Delete(f.messages["100"], 6, 7)
	f.mu.Unlock()
	res, err = r.Crawl("dc", true)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("full: %+v %v", res, err)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "corrected"}); len(found.Messages) != 1 {
		t.Fatal("the edit was not picked up")
	}
	if _, err := eng.MessagePosition("general", deleted); err == nil {
		t.Fatal("the message deleted upstream is still there")
	}
}

func TestDiscordFailures(t *testing.T) {
	f := newFakeDiscord(t)
	eng, r := discordSource(t, f, map[string]any{"token": "wrong"})
	if tr, _ := r.Test(t.Context(), "dc"); tr.OK || !strings.Contains(tr.Error, "401") {
		t.Fatalf("test with a wrong token: %+v", tr)
	}
	if _, err := r.Crawl("dc", false); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("crawl with a wrong token: %v", err)
	}
	if s, _ := eng.Source("dc"); s.LastCrawl == nil || s.LastCrawl.Status != "error" {
		t.Fatalf("last crawl %+v", s.LastCrawl)
	}

	// Without the Message Content intent the crawl says so.
	f2 := newFakeDiscord(t)
	f2.noIntent = true
	_, r2 := discordSource(t, f2, nil)
	res, err := r2.Crawl("dc", false)
	if err != nil || res.Messages != 0 || res.Failed < 2 {
		t.Fatalf("no intent: %+v %v", res, err)
	}

	// channelIds restricts the crawl to those channels and their threads.
	f3 := newFakeDiscord(t)
	eng3, r3 := discordSource(t, f3, map[string]any{"channelIds": []any{"100"}})
	if _, err := r3.Crawl("dc", false); err != nil {
		t.Fatal(err)
	}
	if got := channelIDs(eng3); !slices.Equal(got, []string{"100:channel:", "200:thread:100"}) {
		t.Fatalf("channels %v", got)
	}

	// No token: the source takes imports only.
	eng4 := webEngine(t)
	eng4.PutSource(record.Source{ID: "dc", Name: "D", Type: "discord", Enabled: true, Config: map[string]any{"guildId": "1"}})
	r4 := NewRunner(eng4, RunnerOptions{})
	defer r4.Close()
	if _, err := r4.Crawl("dc", false); err == nil || !strings.Contains(err.Error(), "config.token") {
		t.Fatalf("crawl without a token: %v", err)
	}
}

// FuzzDiscordMessages maps whatever a messages page holds: no panic, and
// every kept message is one the engine takes.
func FuzzDiscordMessages(f *testing.F) {
	f.Add(`[{"id":"1189000000000000000","channel_id":"1188","type":19,"content":"agreed","timestamp":"2024-01-02T10:00:00.123000+00:00","edited_timestamp":null,"author":{"id":"42","username":"ana","global_name":"Ana","discriminator":"0"},"message_reference":{"type":0,"message_id":"1188999"},"attachments":[{"filename":"a.png"}],"embeds":[{"title":"t"}]}]`)
	f.Add(`[{"id":"1","type":7,"content":"","timestamp":"x","author":{}}]`)
	d := &discord{guild: "1"}
	f.Fuzz(func(t *testing.T, page string) {
		var msgs []discordMessage
		if json.Unmarshal([]byte(page), &msgs) != nil {
			return
		}
		for i := range msgs {
			m, ok, _ := d.message("c", &msgs[i])
			if ok && (m.ID != msgs[i].ID || !snowflake.MatchString(m.ID) || m.Timestamp.IsZero() || strings.TrimSpace(m.Content) == "" || len(m.Content) > record.MaxMessageBytes) {
				t.Fatalf("kept %+v", m)
			}
		}
	})
}

// TestDiscordFullCrawlWithoutIntent: a full crawl after the Message
// Content intent was lost sees blank messages and deletes nothing.
func TestDiscordFullCrawlWithoutIntent(t *testing.T) {
	f := newFakeDiscord(t)
	eng, r := discordSource(t, f, nil)
	if _, err := r.Crawl("dc", false); err != nil {
		t.Fatal(err)
	}
	before := eng.SourceStats("dc", true).Messages
	f.mu.Lock()
	f.noIntent = true
	f.mu.Unlock()
	res, err := r.Crawl("dc", true)
	if err != nil || res.Deleted != 0 || eng.SourceStats("dc", true).Messages != before {
		t.Fatalf("%+v %v: %d messages, were %d", res, err, eng.SourceStats("dc", true).Messages, before)
	}
}

// TestDiscordPrivateChannels: a channel is private when @everyone may not
// view it, by its own overwrite, else its category's, else the role's base
// permissions; a thread follows its channel; a private thread is private.
func TestDiscordPrivateChannels(t *testing.T) {
	const guild = "81384788765712384"
	everyone := func(allow, deny string) []any {
		return []any{map[string]any{"id": guild, "type": 0, "allow": allow, "deny": deny},
			map[string]any{"id": "999", "type": 1, "allow": "1024", "deny": "0"}} // the bot, a member
	}
	setup := func(f *fakeDiscord) {
		f.channels = append(f.channels,
			map[string]any{"id": "106", "type": 4, "name": "Staff", "permission_overwrites": everyone("0", "1024")},
			map[string]any{"id": "107", "type": 0, "name": "staff-chat", "parent_id": "106", "permission_overwrites": []any{}},
			map[string]any{"id": "108", "type": 0, "name": "staff-lobby", "parent_id": "106", "permission_overwrites": everyone("1024", "0")},
			map[string]any{"id": "109", "type": 15, "name": "staff-forum", "parent_id": "106"},
			map[string]any{"id": "110", "type": 0, "name": "open", "permission_overwrites": everyone("1024", "0")})
		f.active = append(f.active,
			map[string]any{"id": "202", "type": 11, "name": "rota", "parent_id": "107"},
			map[string]any{"id": "203", "type": 12, "name": "a private word", "parent_id": "100"},
			map[string]any{"id": "204", "type": 11, "name": "lobby thread", "parent_id": "108"})
		f.archived["109"] = []map[string]any{{"id": "205", "type": 11, "name": "forum post", "parent_id": "109",
			"thread_metadata": map[string]any{"archived": true, "archive_timestamp": "2024-01-05T10:00:00.000000+00:00"}}}
		f.add("202", 0, "ana", "the rota for next week", time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC))
	}
	for _, c := range []struct {
		name, everyone string
		want           []string
	}{
		// #secret by its overwrite; #staff-chat by its category's, with its
		// thread; the staff forum's post; the private thread.
		{"overwrites", "104324673", []string{"105", "107", "202", "203", "205"}},
		// Roles unreadable: overwrites alone decide.
		{"no roles", "", []string{"105", "107", "202", "203", "205"}},
		// @everyone may not view by default: all but the channels that allow
		// it, and their threads.
		{"base denies", "104323649", []string{"100", "101", "105", "107", "200", "201", "202", "203", "205"}},
		// An @everyone with Administrator sees everything, but a private thread
		// is still private.
		{"administrator", "8", []string{"203"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeDiscord(t)
			f.limited = false
			f.everyone = c.everyone
			setup(f)
			eng, r := discordSource(t, f, nil)
			if _, err := r.Crawl("dc", false); err != nil {
				t.Fatal(err)
			}
			if got := privateIDs(eng); !slices.Equal(got, c.want) {
				t.Fatalf("private channels %v, want %v", got, c.want)
			}
			found, _ := eng.Search(query.SearchRequest{Query: "rota"})
			if hidden := slices.Contains(c.want, "202"); hidden != (len(found.Messages) == 0) {
				t.Fatalf("the thread of #staff-chat: hidden %v, found %d without credentials", hidden, len(found.Messages))
			}
		})
	}
}
