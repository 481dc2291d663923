package httpapi

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

// chat builds a channel's messages from lines "minute author [>reply-to] text",
// ids m0, m1…
func chat(t *testing.T, lines ...string) []record.Message {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var out []record.Message
	for i, l := range lines {
		f := strings.SplitN(l, " ", 3)
		minute, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		m := record.Message{ID: "m" + strconv.Itoa(i), Author: f[1], Timestamp: t0.Add(time.Duration(minute) * time.Minute)}
		text := f[2]
		if strings.HasPrefix(text, ">") {
			to, rest, _ := strings.Cut(text[1:], " ")
			m.ReplyTo, text = to, rest
		}
		m.Content = text
		out = append(out, m)
	}
	return out
}

// convoIDs lists each conversation's message ids.
func convoIDs(cs []*convo) [][]string {
	var out [][]string
	for _, c := range cs {
		var one []string
		for _, m := range c.msgs {
			one = append(one, m.ID)
		}
		out = append(out, one)
	}
	return out
}

func TestGroupConversations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"a question, its answers and thanks", []string{
			"0 ana is sqlite ok for prod?",
			"1 ana also, 1.9 or 2.0?",
			"20 marta >m0 yes, with one node",
			"25 ana >m2 makes sense, thanks",
			"40 jonas +1 on sqlite",
		}, "m0 m1 m2 m3 m4"},
		{"a silence ends it", []string{
			"0 ana is sqlite ok for prod?",
			"5 marta >m0 yes",
			"60 bo the docs moved",
		}, "m0 m1|m2"},
		{"someone new asking starts their own", []string{
			"0 ana is sqlite ok for prod?",
			"5 bo how do I rotate the webhook secret?",
			"9 marta >m0 yes",
			"12 marta >m1 set previous_secret",
			"14 ana does that hold on 2.0?",
		}, "m0 m2 m4|m1 m3"},
		{"a late reply joins within the span, not after", []string{
			"0 ana is sqlite ok for prod?",
			"1440 marta >m0 yes, a day later",
			"20000 bo >m0 and two weeks later",
		}, "m0 m1|m2"},
		{"what answers nothing goes to its author's own conversation", []string{
			"0 ana is sqlite ok for prod?",
			"3 bo how do I rotate the webhook secret?",
			"6 marta >m1 set previous_secret",
			"8 ana thanks, found it",
			"9 bo great",
		}, "m0 m3|m1 m2 m4"},
		{"a reply to what is not here starts one", []string{
			"0 ana >gone as I said",
			"2 bo >m0 sure",
		}, "m0 m1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range convoIDs(group(chat(t, tc.lines...), 0)) {
				got = append(got, strings.Join(c, " "))
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("got %q, want %q", strings.Join(got, "|"), tc.want)
			}
		})
	}
}

// TestGroupSkipsLookback: the conversations the lookback starts are left
// out, those after it placed as when the whole channel is read.
func TestGroupSkipsLookback(t *testing.T) {
	msgs := chat(t,
		"0 ana is sqlite ok?",
		"5 marta >m0 yes",
		"60 bo question two?",
		"62 marta >m2 answer two",
		"64 bo thanks",
	)
	got := convoIDs(group(msgs, 2))
	if len(got) != 1 || strings.Join(got[0], " ") != "m2 m3 m4" {
		t.Errorf("got %v", got)
	}
	if got := convoIDs(group(msgs, -5)); len(got) != 2 {
		t.Errorf("negative skip: %v", got)
	}
}

// TestGroupBounds: a conversation holds at most convoMax messages, and a
// long chat carries on into new ones after convoCarry.
func TestGroupBounds(t *testing.T) {
	var lines []string
	for i := range 3 * convoMax {
		lines = append(lines, strconv.Itoa(i)+" ana and another thing")
	}
	cs := group(chat(t, lines...), 0)
	for _, c := range cs {
		if len(c.msgs) > convoMax {
			t.Fatalf("a conversation of %d messages", len(c.msgs))
		}
		if age := c.last().Timestamp.Sub(c.root().Timestamp); age > convoCarry {
			t.Errorf("a conversation over %v", age)
		}
	}
	if len(cs) < 3 {
		t.Errorf("%d conversations", len(cs))
	}
}

func TestConvoTitle(t *testing.T) {
	long := strings.Repeat("retry the webhook with backoff ", 10)
	got := convoTitle(&record.Message{Content: "**hi** all, " + long})
	if !strings.HasSuffix(got, "…") || len(got) > 110 || strings.Contains(got, "**") {
		t.Errorf("title %q", got)
	}
	if w := strings.Fields(strings.TrimSuffix(got, "…")); !strings.Contains(long, w[len(w)-1]+" ") {
		t.Errorf("cut within a word: %q", got)
	}
	if got := convoTitle(&record.Message{Content: "  ", Author: "ana"}); got != "Conversation of ana" {
		t.Errorf("empty: %q", got)
	}
}

func FuzzConvoSlug(f *testing.F) {
	for _, s := range []string{"help.123", "help", "help.~YWI", "q-u.a?b#c/d", "a.b.c", "x.~", "x.~!!", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slug, id, ok := splitConvoSlug(s)
		if !ok {
			return
		}
		if !record.ValidSlug(slug) {
			t.Fatalf("%q: slug %q", s, slug)
		}
		// What a page links, it reads back.
		if s2, id2, ok := splitConvoSlug(convoSlug(slug, id)); !ok || s2 != slug || id2 != id {
			t.Fatalf("%q: %q %q → %q %q %v", s, slug, id, s2, id2, ok)
		}
	})
}

// TestConversationPages through a real server: a question with its reply
// and thanks is one page named by its JSON-LD; a reply's link leads to it;
// a thread is one; a private channel's conversations are nowhere; the home
// page and the sitemap list what has replies.
func TestConversationPages(t *testing.T) {
	ts := start(t)
	e := ts.eng
	if _, err := e.PutSource(record.Source{ID: "d", Name: "Discord", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{
		{SourceID: "d", ID: "help", Name: "help"},
		{SourceID: "d", ID: "t1", Name: "Cron in UTC", ParentID: "help", Kind: "thread"},
		{SourceID: "d", ID: "sec", Name: "staff", Private: true},
	}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	m := func(ch, id, author, reply, text string, minute int) record.Message {
		return record.Message{SourceID: "d", ChannelID: ch, ID: id, Author: author, ReplyTo: reply, Content: text,
			Timestamp: t0.Add(time.Duration(minute) * time.Minute), URL: "https://discord.example/" + id}
	}
	if _, err := e.PutMessages([]record.Message{
		m("help", "q1", "ana", "", "How do I rotate the **webhook** secret?", 0),
		m("help", "r1", "marta", "q1", "Set previous_secret first.", 10),
		m("help", "c1", "ana", "", "thanks, that worked", 15),
		m("help", "q2", "bo", "", "Is anyone around?", 300),
		m("t1", "t1a", "ana", "", "I moved my jobs to UTC", 20),
		m("t1", "t1b", "marta", "", "Good call", 25),
		m("sec", "s1", "ana", "", "zorbaxstaff question?", 30),
		m("sec", "s2", "marta", "s1", "zorbaxstaff answer", 31),
	}); err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.url+path, nil)
		req.Header.Set("Accept", "text/html")
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Location")
	}

	r := htmlGet(t, ts, "/t/help.q1")
	page := string(r.body)
	if r.status != 200 {
		t.Fatalf("/t/help.q1: %d", r.status)
	}
	for _, want := range []string{`id="m-q1"`, `id="m-r1"`, `id="m-c1"`, `<h1 id="convo-h">How do I rotate the webhook secret?</h1>`,
		`<link rel="canonical" href="` + ts.url + `/t/help.q1">`, `href="https://discord.example/q1"`, `href="/c/help?m=q1#m-q1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("/t/help.q1 lacks %s", want)
		}
	}
	if strings.Contains(page, `id="m-q2"`) {
		t.Error("a later question is in the conversation")
	}
	ld := jsonLD(t, page)
	main, _ := ld["mainEntity"].(map[string]any)
	if ld["@type"] != "QAPage" || main["name"] != "How do I rotate the webhook secret?" || main["answerCount"] != 2.0 {
		t.Errorf("JSON-LD %v", ld)
	}

	for path, want := range map[string]string{
		"/t/help.r1":         "/t/help.q1#m-r1", // a reply: its conversation, at it
		"/t/help.c1":         "/t/help.q1#m-c1",
		"/t/help":            "/c/help",              // a channel is not one conversation
		"/t/cron-in-utc.t1b": "/t/cron-in-utc#m-t1b", // a thread is
	} {
		if code, loc := status(path); code != 301 || loc != want {
			t.Errorf("%s: %d %q, want 301 %q", path, code, loc, want)
		}
	}
	for _, path := range []string{"/t/staff.s1", "/t/staff", "/t/help.nope", "/t/help.~!!", "/t/Bad!.q1", "/t/nochannel.q1"} {
		if code, _ := status(path); code != 404 {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
	r = htmlGet(t, ts, "/t/cron-in-utc")
	if ld := jsonLD(t, string(r.body)); r.status != 200 || ld["@type"] != "DiscussionForumPosting" || ld["headline"] != "Cron in UTC" {
		t.Errorf("thread: %d %v", r.status, ld)
	}

	home := string(htmlGet(t, ts, "/").body)
	for _, want := range []string{`href="/t/help.q1"`, `href="/t/cron-in-utc"`} {
		if !strings.Contains(home, want) {
			t.Errorf("the home page does not list %s", want)
		}
	}
	if strings.Contains(home, "zorbaxstaff") || strings.Contains(home, `href="/t/help.q2"`) {
		t.Error("the home page lists a private conversation, or one without replies")
	}
	var urls []string
	for _, sm := range regexp.MustCompile(`<loc>([^<]+)</loc>`).FindAllStringSubmatch(string(ts.get(t, "/sitemap.xml").body), -1) {
		for _, u := range regexp.MustCompile(`<loc>([^<]+)</loc>`).FindAllStringSubmatch(string(ts.get(t, strings.TrimPrefix(sm[1], ts.url)).body), -1) {
			urls = append(urls, strings.TrimPrefix(u[1], ts.url))
		}
	}
	if !slices.Contains(urls, "/t/help.q1") || !slices.Contains(urls, "/t/cron-in-utc") || slices.Contains(urls, "/t/help.q2") || slices.Contains(urls, "/t/staff.s1") {
		t.Errorf("sitemap %v", urls)
	}
}
