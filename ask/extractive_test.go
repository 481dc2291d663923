package ask

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func doc(text string) Source { return Source{Type: "document", Title: "Guide", Text: text, Score: 1} }

// extract composes the answer to question from sources, citing them as
// numbered.
func extract(question string, sources []Source) string {
	answer, _ := answerFrom(question, sources, len(sources))
	return answer
}

// TestIntroKeepsItsBlock: a sentence leading into code or a list is quoted
// with it, a long block shortened around the question's words.
func TestIntroKeepsItsBlock(t *testing.T) {
	ans := extract("What does wren doctor check?", []Source{doc("## Check\n\n`wren doctor` verifies the configuration, database connectivity and clock skew:\n\n```bash\nwren doctor\n```\n\nRun it after every change.")})
	if want := "wren doctor verifies the configuration, database connectivity and clock skew [1]:\nwren doctor"; !strings.HasPrefix(ans, want) {
		t.Errorf("code: %q, want it to start %q", ans, want)
	}
	ans = extract("How is the retry delay computed?", []Source{doc("The retry delay before retry k is\n\n```text\ndelay(k) = min(backoff × 2^(k-1), max_backoff)\n```\n")})
	if !strings.Contains(ans, "The retry delay before retry k is [1]:\ndelay(k) = min(backoff") {
		t.Errorf("an intro without a colon: %q", ans)
	}
	var list strings.Builder
	list.WriteString("Each node opens these connections:\n\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&list, "- pool %d for queries\n", i)
	}
	list.WriteString("- one listener connection\n")
	ans = extract("Which listener connections does each node open?", []Source{doc(list.String())})
	lines := strings.Split(ans, "\n")
	if !strings.HasPrefix(ans, "Each node opens these connections [1]:\n…\n") || !strings.Contains(ans, "- one listener connection") || len(lines) > maxBlockLines+3 {
		t.Errorf("long list: %q", ans)
	}
}

// TestQuestionLeadsToItsAnswer: an FAQ's question line (bold, a heading or
// "Q:") and a chat question lead to the paragraph that answers them, which
// shares no word with it.
func TestQuestionLeadsToItsAnswer(t *testing.T) {
	for _, text := range []string{
		"## Scheduling\n\n**Can I schedule something every 90 seconds?**\nYes: `@every 90s`. Cron cannot express that.\n\n**Is there a UI?**\nYes, on port 7070.",
		"## Can I schedule something every 90 seconds?\n\nYes: `@every 90s`. Cron cannot express that.",
		"Q: Can I schedule something every 90 seconds?\nA: Yes: `@every 90s`. Cron cannot express that.",
	} {
		if ans := extract("How do I schedule a job every 90 seconds?", []Source{doc(text)}); ans != "Yes: @every 90s. Cron cannot express that [1]." {
			t.Errorf("%q:\n%q", text, ans)
		}
	}
	chat := Source{Type: "message", Authors: []string{"ana", "bo"}, Score: 1,
		Text: "ana: why is the exec job type disabled by default?\nbo: Because anyone who can create jobs could run arbitrary commands on your nodes."}
	if ans := extract("Why is the exec job type disabled by default?", []Source{chat}); !strings.Contains(ans, "arbitrary commands") {
		t.Errorf("chat: %q", ans)
	}
}

// TestSentencesGivenOnce: a sentence a chat message quotes from a document
// is given once.
func TestSentencesGivenOnce(t *testing.T) {
	sentence := "The max_attempts setting counts the first attempt, so three attempts mean two retries."
	sources := []Source{
		doc("## Retries\n\n" + sentence + " Jitter spreads the retries."),
		{Type: "message", Authors: []string{"ana", "bo"}, Score: 0.9, Text: "ana: how many retries do three max_attempts give?\nbo: from the docs: " + strings.ToLower(sentence)},
	}
	ans := extract("How many retries do three max_attempts give?", sources)
	if n := strings.Count(strings.ToLower(ans), "counts the first attempt"); n != 1 {
		t.Errorf("given %d times: %q", n, ans)
	}
}

// TestPronounSentences: a sentence opening with a pronoun comes with the
// sentence before it, or not at all.
func TestPronounSentences(t *testing.T) {
	ans := extract("Is the webhook secret required?", []Source{doc("Set the webhook secret in the environment. It is required for every http job.")})
	if ans != "Set the webhook secret in the environment. It is required for every http job [1]." {
		t.Errorf("with the one before: %q", ans)
	}
	ans = extract("Is the webhook secret required?", []Source{doc("## Webhooks\n\n```yaml\nsecret: x\n```\n\nIt is required for every http job and the webhook secret.\n\nThe webhook secret is a string.")})
	if strings.Contains(ans, "It is required") || !strings.Contains(ans, "The webhook secret is a string") {
		t.Errorf("out of context: %q", ans)
	}
}

func TestPassageBlocks(t *testing.T) {
	ps := passages(0, doc("# T\n\n## Where Wren looks\n\n1. The `--config` flag.\n2. `/etc/wren/wren.yaml`.\n\n| Key | Default |\n|---|---|\n| `server.listen` | `:7070` |\n"))
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%s|%s|%q", p.heading, p.text, p.lines))
	}
	want := []string{
		`Where Wren looks|Where Wren looks|["- The --config flag." "- /etc/wren/wren.yaml."]`,
		`Where Wren looks|The --config flag.|[]`,
		`Where Wren looks|/etc/wren/wren.yaml.|[]`,
		`Where Wren looks Key · Default|server.listen · :7070|[]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("passages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// FuzzPassages: any text cuts into passages without a panic, each with
// text, its shown block bounded.
func FuzzPassages(f *testing.F) {
	f.Add("# T\n\n**Q?**\nIt is so:\n\n```\ncode\n```\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n", "ana: why?\nbo: It is. This too:\n• one")
	f.Fuzz(func(t *testing.T, text, chat string) {
		for _, s := range []Source{doc(text), {Type: "message", Authors: []string{"ana", "bo"}, Text: chat}} {
			for _, p := range passages(0, s) {
				if p.text == "" && p.lines == nil || !utf8.ValidString(p.text) && utf8.ValidString(s.Text) {
					t.Fatalf("passage %+v of %q", p, s.Text)
				}
				if b := p.shown(func(string) bool { return true }); strings.Count(b, "\n") > maxBlockLines+1 {
					t.Fatalf("block of %d lines: %q", strings.Count(b, "\n")+1, b)
				}
			}
		}
	})
}

// TestAnswerKind: a question's wording says what kind of answer it wants,
// and the passage of that kind wins over one sharing the same words.
func TestAnswerKind(t *testing.T) {
	for q, want := range map[string]answerKind{
		"how big can a payload be":                   quantityAnswer,
		"What's the default timeout?":                quantityAnswer,
		"When is 2.2 out?":                           timeAnswer,
		"Is it OK to set jitter: 0?":                 yesNoAnswer,
		"We run SQLite. Why does it lock?":           reasonAnswer,
		"How do I rotate the secret?":                anyAnswer,
		"My pods restart. Can I raise the limit?":    quantityAnswer,
		"Our nodes are many. Does Wren support DST?": yesNoAnswer,
	} {
		if got := askedKind(q); got != want {
			t.Errorf("askedKind(%q) = %d, want %d", q, got, want)
		}
	}
	ans := extract("how big can a payload be", []Source{doc("Payloads are kept in memory while a run is active.\n\nPayloads are limited to 1 MiB by default.")})
	if ans != "Payloads are limited to 1 MiB by default [1]." {
		t.Errorf("quantity: %q", ans)
	}
}

// TestAnswerFromPool: the sources kept are those the answer quotes, first
// and numbered as cited, then the best of the rest; the British spelling
// in a passage answers the American one in the question.
func TestAnswerFromPool(t *testing.T) {
	pool := []Source{
		doc("Wren ships as a single binary."), doc("Logs go to standard error."),
		doc("Metrics are on port 7070."), doc("Wren is under the Apache-2.0 licence, like its Helm chart."),
	}
	ans, kept := answerFrom("What license is Wren under?", pool, 2)
	if !strings.HasPrefix(ans, "Wren is under the Apache-2.0 licence, like its Helm chart [1].") {
		t.Errorf("answer %q", ans)
	}
	if len(kept) != 2 || kept[0].Text != pool[3].Text || kept[1].Text != pool[0].Text {
		t.Errorf("kept %v", kept)
	}
	// The best passage opens the answer, though its source comes later.
	ans, kept = answerFrom("Which port serves metrics, and where do logs go?", []Source{
		doc("Logs go to standard error, one line each."), doc("Metrics are served on port 7070 for Prometheus."),
	}, 2)
	if ans != "Metrics are served on port 7070 for Prometheus [1]. Logs go to standard error, one line each [2]." || kept[0].Text != "Metrics are served on port 7070 for Prometheus." {
		t.Errorf("order: %q", ans)
	}
	// A passage sharing only the product's name and one word more does not
	// trail the answer.
	// (Common: in more than half of at least minCommonSample passages.)
	docs := []Source{doc("Wren is under the Apache-2.0 licence, like its Helm chart."), doc("Wren 2.0 was released in March, Wren says.")}
	for i := range minCommonSample {
		docs = append(docs, doc(fmt.Sprintf("Wren keeps history number %d in the database.", i)))
	}
	ans, _ = answerFrom("What license is Wren released under?", docs, 4)
	if ans != "Wren is under the Apache-2.0 licence, like its Helm chart [1]." {
		t.Errorf("trailing passage: %q", ans)
	}
	ans, kept = answerFrom("What is the boiling point of mercury?", pool, 3)
	if ans != NoAnswer || len(kept) != 3 {
		t.Errorf("no answer: %q, %d sources", ans, len(kept))
	}
}
