package httpapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
)

// chat builds a channel's messages from lines "minute author [>reply-to] text",
// ids m0, m1…
func chat(t *testing.T, lines ...string) []engine.Message {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var out []engine.Message
	for i, l := range lines {
		f := strings.SplitN(l, " ", 3)
		minute, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		m := engine.Message{ID: "m" + strconv.Itoa(i), Author: f[1], Timestamp: t0.Add(time.Duration(minute) * time.Minute)}
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
	got := convoTitle(&engine.Message{Content: "**hi** all, " + long})
	if !strings.HasSuffix(got, "…") || len(got) > 110 || strings.Contains(got, "**") {
		t.Errorf("title %q", got)
	}
	if w := strings.Fields(strings.TrimSuffix(got, "…")); !strings.Contains(long, w[len(w)-1]+" ") {
		t.Errorf("cut within a word: %q", got)
	}
	if got := convoTitle(&engine.Message{Content: "  ", Author: "ana"}); got != "Conversation of ana" {
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
		if !engine.ValidSlug(slug) {
			t.Fatalf("%q: slug %q", s, slug)
		}
		// What a page links, it reads back.
		if s2, id2, ok := splitConvoSlug(convoSlug(slug, id)); !ok || s2 != slug || id2 != id {
			t.Fatalf("%q: %q %q → %q %q %v", s, slug, id, s2, id2, ok)
		}
	})
}
