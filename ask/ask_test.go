package ask

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/llm"
	"github.com/sift-search/sift/semantic"
)

var (
	demoOnce sync.Once
	demoIdx  *semantic.Index
	demoEng  *engine.Engine
)

// demoIndex is the semantic index of an engine holding the demo content,
// built, shared by the tests (they only read it).
func demoIndex(t *testing.T) *semantic.Index {
	t.Helper()
	demoOnce.Do(func() {
		e, x, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := demo.Load(e, nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := x.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		demoIdx, demoEng = x, e
	})
	if demoIdx == nil {
		t.Fatal("no demo index")
	}
	return demoIdx
}

// demoCorrect corrects a question's words against the demo store, as
// sift serve's asker does.
func demoCorrect(q string, private bool) map[string]string { return TypoFixes(demoEng)(q, private) }

// recorder is a Sink that keeps what it gets, and can fail after n tokens.
type recorder struct {
	sources []Source
	tokens  []string
	events  []string
	failAt  int
}

func (r *recorder) Sources(s []Source, _ bool) error {
	r.sources = s
	r.events = append(r.events, "sources")
	return nil
}

func (r *recorder) Token(s string) error {
	if r.failAt > 0 && len(r.tokens) == r.failAt {
		return errClientGone
	}
	r.tokens = append(r.tokens, s)
	r.events = append(r.events, "token")
	return nil
}

func (r *recorder) answer() string { return strings.Join(r.tokens, "") }

var errClientGone = errors.New("client gone")

// testLink links a passage the way the server does, at http://sift.test.
func testLink(h *semantic.Hit) (url, page string) {
	if h.Type == "document" {
		page = "http://sift.test/d/" + h.DocSlug + h.Fragment
		return cmp.Or(h.DocURL, page), page
	}
	page = "http://sift.test/c/" + h.ChannelSlug + "?m=" + h.MessageID + "#m-" + h.MessageID
	return cmp.Or(h.MessageURL, page), page
}

func TestExtractiveAnswers(t *testing.T) {
	a := New(demoIndex(t), Options{Link: testLink})
	for _, c := range []struct {
		question string
		want     []string // one of these in the answer
	}{
		{"Why did my job run twice after the DST change?", []string{"twice", "#812", "2.0.1"}},
		{"How do I verify the webhook signature?", []string{"HMAC", "X-Wren-Signature", "signature"}},
		{"How do I configure the Postgres connection pool?", []string{"max_open_conns", "pool"}},
	} {
		var r recorder
		u, err := a.Ask(context.Background(), Request{Question: c.question}, &r)
		if err != nil {
			t.Fatal(err)
		}
		ans := r.answer()
		t.Logf("%s\n  -> %s", c.question, ans)
		if len(r.sources) == 0 || r.events[0] != "sources" || len(r.tokens) < 5 || !strings.Contains(ans, "[") {
			t.Fatalf("%q: %d sources, answer %q", c.question, len(r.sources), ans)
		}
		found := false
		for _, w := range c.want {
			found = found || strings.Contains(ans, w)
		}
		if !found {
			t.Errorf("%q: answer lacks %v: %q", c.question, c.want, ans)
		}
		if u.CompletionTokens != EstimateTokens(ans) || u.PromptTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Errorf("usage %+v", u)
		}
		for _, s := range r.sources {
			if s.URL == "" || s.Preview() == "" || s.Metadata(false) == "" {
				t.Errorf("source %+v", s)
			}
		}
	}
	var r recorder
	if _, err := a.Ask(context.Background(), Request{Question: "What is the boiling point of mercury in kelvin?"}, &r); err != nil || r.answer() != NoAnswer {
		t.Errorf("unanswerable: %q %v", r.answer(), err)
	}
}

// modelAsker is an Asker over the demo content whose model is the fake
// server.
func modelAsker(t *testing.T, srv *fakeoai.Server, opts Options) *Asker {
	t.Helper()
	c := llm.New(srv.URL, "k", "tiny")
	c.Transport().Backoff = time.Millisecond
	opts.Model, opts.Link = c, testLink
	return New(demoIndex(t), opts)
}

func TestModelAnswers(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("twice", "Upgrade to 2.0.1 [1]; 2.0.0 had bug #812 [2].")
	a := modelAsker(t, srv, Options{})
	history := []Turn{
		{"user", "We run Wren 2.0.0 on Postgres."}, {"assistant", "Noted."},
		{"system", "ignored: not a conversation role"}, {"user", "  "},
	}
	var r recorder
	u, err := a.Ask(context.Background(), Request{Question: "Why did my job run twice after the DST change?", History: history}, &r)
	if err != nil {
		t.Fatal(err)
	}
	if r.answer() != "Upgrade to 2.0.1 [1]; 2.0.0 had bug #812 [2]." || r.events[0] != "sources" || len(r.tokens) < 5 {
		t.Fatalf("answer %q, events %v", r.answer(), r.events)
	}
	if u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.CompletionTokens != len(r.tokens) || u.PromptTokens != 40 {
		t.Fatalf("usage from the server: %+v", u)
	}
	req := srv.Received()[len(srv.Received())-1]
	msgs := req.Body["messages"].([]any)
	role := func(i int) string { return msgs[i].(map[string]any)["role"].(string) }
	content := func(i int) string { return msgs[i].(map[string]any)["content"].(string) }
	// System prompt with numbered sources holding the retrieved passages,
	// the history (kept roles only), the question last.
	if len(msgs) != 4 || role(0) != "system" || role(1) != "user" || role(2) != "assistant" || role(3) != "user" ||
		content(1) != "We run Wren 2.0.0 on Postgres." || content(3) != "Why did my job run twice after the DST change?" {
		t.Fatalf("messages %v", msgs)
	}
	sys := content(0)
	if !strings.Contains(sys, "[1] ") || !strings.Contains(sys, "cite") && !strings.Contains(sys, "Cite") {
		t.Fatalf("system prompt %q", sys)
	}
	for i, s := range r.sources {
		if !strings.Contains(sys, fmt.Sprintf("[%d] %s", i+1, s.Type)) || !strings.Contains(sys, strings.TrimSpace(s.Text)[:40]) {
			t.Fatalf("source %d not in the prompt", i+1)
		}
	}
	if !strings.Contains(sys, "bug (#812)") {
		t.Error("the passage on #812 was not retrieved into the prompt")
	}
}

func TestHistoryIsTrimmed(t *testing.T) {
	var long []Turn
	for i := 0; i < 40; i++ {
		long = append(long, Turn{[]string{"user", "assistant"}[i%2], fmt.Sprintf("turn %d %s", i, strings.Repeat("word ", 20))})
	}
	kept := trimHistory(long, 100000)
	if len(kept) != MaxTurns || !strings.HasPrefix(kept[0].Content, "turn 20 ") {
		t.Fatalf("%d turns kept, first %q", len(kept), kept[0].Content)
	}
	kept = trimHistory(long, 200) // about 7 turns of 30 tokens
	total := 0
	for _, k := range kept {
		total += EstimateTokens(k.Content) + messageOverhead
	}
	if total > 200 || len(kept) == 0 || !strings.HasPrefix(kept[len(kept)-1].Content, "turn 39 ") {
		t.Fatalf("%d turns, %d tokens, last %q", len(kept), total, kept[len(kept)-1].Content)
	}
	// The model sees the trimmed history.
	srv := fakeoai.New()
	defer srv.Close()
	a := modelAsker(t, srv, Options{HistoryTokens: 200})
	if _, err := a.Ask(context.Background(), Request{Question: "cron syntax", History: long}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Received()[0].Body["messages"].([]any)
	if len(msgs) != len(kept)+2 {
		t.Fatalf("%d messages to the model, want %d", len(msgs), len(kept)+2)
	}
}

func TestModelFailures(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("q", "one two three four")
	a := modelAsker(t, srv, Options{})
	srv.Fail(500, 500, 500, 500)
	var r recorder
	if _, err := a.Ask(context.Background(), Request{Question: "q cron"}, &r); !errors.Is(err, ErrModel) || len(r.sources) == 0 || len(r.tokens) != 0 {
		t.Fatalf("failed model: %v, %d sources, %d tokens", err, len(r.sources), len(r.tokens))
	}
	srv.FailStreamAfter(2)
	r = recorder{}
	if _, err := a.Ask(context.Background(), Request{Question: "q cron"}, &r); !errors.Is(err, ErrModel) || r.answer() != "one two " {
		t.Fatalf("failure mid-stream: %v, %q", err, r.answer())
	}
	srv.FailStreamAfter(-1)
	// A sink that fails (the client left) stops the answer and the model.
	srv.SetTokenDelay(10 * time.Millisecond)
	r = recorder{failAt: 1}
	if _, err := a.Ask(context.Background(), Request{Question: "q cron"}, &r); !errors.Is(err, errClientGone) {
		t.Fatalf("client gone: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, cancelled := srv.Streams(); cancelled == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the model call was not cancelled")
		}
	}
}

func TestAdmit(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	a := modelAsker(t, srv, Options{MaxConcurrent: 1, MaxQueued: 1})
	r1, err1 := a.Admit()
	r2, err2 := a.Admit()
	_, err3 := a.Admit()
	if err1 != nil || err2 != nil || !errors.Is(err3, ErrBusy) {
		t.Fatalf("admits: %v %v %v", err1, err2, err3)
	}
	r1()
	if r, err := a.Admit(); err != nil {
		t.Fatalf("after a release: %v", err)
	} else {
		r()
	}
	r2()
	// Extractive answers are always admitted.
	x := New(demoIndex(t), Options{MaxConcurrent: 1, MaxQueued: 1})
	for i := 0; i < 5; i++ {
		if _, err := x.Admit(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abcd": 1, "abcde": 2, "日本語": 3, "café": 2, strings.Repeat("word ", 100): 125} {
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSourceFields(t *testing.T) {
	when := time.Date(2026, 3, 9, 14, 5, 0, 0, time.UTC)
	m := Source{Type: "message", Authors: []string{"Helga", "Tobi", "Dee", "Ana"}, Channel: "help", SourceName: "Wren Discord", SourceType: "discord", Time: when,
		Text: strings.Repeat("a long line of chat ", 30)}
	if got := m.Metadata(false); got != "Helga, Tobi, Dee and 1 others in #help" {
		t.Errorf("metadata %q", got)
	}
	if got := m.Metadata(true); got != "Helga, Tobi, Dee and 1 others in #help on Wren Discord (discord), 2026-03-09 14:05 UTC" {
		t.Errorf("detailed metadata %q", got)
	}
	if p := m.Preview(); !strings.HasSuffix(p, "…") || len([]rune(p)) > previewChars+1 || strings.Contains(p, "  ") {
		t.Errorf("preview %q", p)
	}
	d := Source{Type: "document", Title: "Cron — DST", SourceName: "Docs", Time: when, Text: "short"}
	if d.Metadata(false) != "Cron — DST (Docs)" || d.Metadata(true) != "Cron — DST (Docs), updated 2026-03-09" || d.Preview() != "short" {
		t.Errorf("document: %q %q %q", d.Metadata(false), d.Metadata(true), d.Preview())
	}
}

// FuzzExtract: any question and passages give an answer without a panic,
// citing only sources that exist.
func FuzzExtract(f *testing.F) {
	f.Add("why twice?", "# T\n\nIntro:\n\n- one item, and\n- two.\n\n```go\nx := 1\n```\nDone. Really e.g. this.", "Ana: hi there\nBo: it ran twice. fixed in 2.0.1")
	f.Fuzz(func(t *testing.T, q, doc, chat string) {
		srcs := []Source{{Type: "document", Text: doc, Score: 1}, {Type: "message", Text: chat, Authors: []string{"Ana", "Bo"}, Score: 0.5}}
		ans := extract(q, srcs)
		for _, m := range citation.FindAllStringSubmatch(ans, -1) {
			if m[1] != "1" && m[1] != "2" && !strings.Contains(doc+chat, m[0]) {
				t.Fatalf("answer %q cites %s", ans, m[0])
			}
		}
	})
}

var citation = regexp.MustCompile(`\[(\d+)\]`)

func TestPreviewIsPlainText(t *testing.T) {
	s := Source{Type: "document", Text: "## Pool sizing\n\nEach node opens:\n\n- up to `max_open_conns` (default **20**), see [the docs](x.md#y)\n\n```yaml\nk: v\n```\n| Key | Default |\n|---|---|\n| `a` | `b` |"}
	want := "Pool sizing Each node opens: up to max_open_conns (default 20), see the docs k: v Key · Default a · b"
	if got := s.Preview(); got != want {
		t.Errorf("preview\n%q, want\n%q", got, want)
	}
}

// TestLongFollowUp keeps the question in the retrieval query and the prompt
// when the previous turn is long.
func TestLongFollowUp(t *testing.T) {
	a := New(demoIndex(t), Options{Link: testLink})
	history := []Turn{{"user", strings.Repeat("Tell me about the weather and the pictures of the holidays. ", 60)}, {"assistant", "I cannot."}}
	var r recorder
	if _, err := a.Ask(context.Background(), Request{Question: "What does the cron expression */5 * * * * mean?", History: history}, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.sources) == 0 || !strings.Contains(strings.ToLower(r.sources[0].Text), "cron") {
		t.Fatalf("the question was lost: first source %+v", r.sources)
	}
	// A long question takes room from the history first, then the sources.
	o := DefaultOptions()
	a = New(demoIndex(t), o)
	if h, s := a.budgets("short"); h != o.HistoryTokens || s != o.SourceTokens {
		t.Fatalf("short question: %d %d", h, s)
	}
	if h, s := a.budgets(strings.Repeat("word ", 800)); h != o.HistoryTokens-(1000-questionTokens) || s != o.SourceTokens {
		t.Fatalf("1000-token question: %d %d", h, s)
	}
	if h, s := a.budgets(strings.Repeat("字", 2000)); h != 0 || s != o.SourceTokens-(2000-questionTokens-o.HistoryTokens) {
		t.Fatalf("2000-token question: %d %d", h, s)
	}
}
