package ask

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// qaCase is a question a user of the demo product would ask, the facts of
// which a correct answer holds one, and where the answer is.
type qaCase struct {
	Question string   `json:"question"`
	Facts    []string `json:"facts"`
	From     string   `json:"from"`
}

// The question sets: testdata/qa.json is the development set, which the
// answerer was tuned on; testdata/qa-heldout.json was written (by someone
// who had not read the answerer) before any tuning for it, and its misses
// were then read for kinds of failure, never tuned on one at a time;
// testdata/qa-fresh.json was written the same way after that tuning, and
// nothing was changed for it. Each must reach its minimum share.
var qaSets = []struct {
	file     string
	minScore float64
}{
	{"testdata/qa.json", 0.85},
	{"testdata/qa-heldout.json", 0.6}, // 20 of 40 when written, 28 since: a floor, short of the 85% aimed at
	{"testdata/qa-fresh.json", 0.7},   // 24 of 30 when first run: a floor
}

// TestQuestionAnswerSet asks the questions of each set over the demo
// content through the extractive answerer, as POST /api/ask does without
// a model, and scores the answers that hold an answering fact. No answer
// may give a sentence twice.
func TestQuestionAnswerSet(t *testing.T) {
	a := New(demoIndex(t), Options{Link: testLink, Correct: demoCorrect})
	for _, set := range qaSets {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(set.file, "testdata/"), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(set.file)
			if err != nil {
				t.Fatal(err)
			}
			var cases []qaCase
			if err := json.Unmarshal(b, &cases); err != nil {
				t.Fatal(err)
			}
			if len(cases) < 30 {
				t.Fatalf("%d questions, want at least 30", len(cases))
			}
			hits := 0
			for _, c := range cases {
				var r recorder
				if _, err := a.Ask(context.Background(), Request{Question: c.Question}, &r); err != nil {
					t.Fatal(err)
				}
				ans := r.answer()
				if testing.Verbose() {
					t.Logf("%s\n%s", c.Question, ans)
				}
				if answers(ans, c.Facts) {
					hits++
				} else {
					t.Logf("miss: %s (from %s; want one of %q)\n  -> %s\n  sources: %s", c.Question, c.From, c.Facts, ans, sourceTitles(r.sources))
				}
				if s1, s2, ok := repeatedSentence(ans); ok {
					t.Errorf("%q: the answer repeats a sentence:\n  %s\n  %s", c.Question, s1, s2)
				}
			}
			score := float64(hits) / float64(len(cases))
			t.Logf("QA score: %d of %d = %.0f%%", hits, len(cases), 100*score)
			if score < set.minScore {
				t.Errorf("QA score %.2f, want at least %.2f", score, set.minScore)
			}
		})
	}
}

// sourceTitles lists the sources' origins, numbered as cited.
func sourceTitles(sources []Source) string {
	var b strings.Builder
	for i, s := range sources {
		fmt.Fprintf(&b, "\n    [%d] %s", i+1, s.Metadata(false))
	}
	return b.String()
}

// answers reports whether answer holds one of facts, compared without case,
// with runs of spaces as one and without code and bold marks (facts are
// copied from the Markdown sources; answers give their plain text).
func answers(answer string, facts []string) bool {
	norm := func(s string) string {
		return strings.ToLower(strings.Join(strings.Fields(strings.NewReplacer("`", "", "**", "").Replace(s)), " "))
	}
	a := norm(answer)
	for _, f := range facts {
		if strings.Contains(a, norm(f)) {
			return true
		}
	}
	return false
}

// repeatedSentence finds two sentences of answer that are the same or
// nearly so (nine tenths of their words shared). An ellipsis inside a
// line does not end a sentence ("postgres://... wren migrate").
func repeatedSentence(answer string) (string, string, bool) {
	var sents []string
	var words []map[string]bool
	for _, line := range strings.Split(answer, "\n") {
		var units []string
		for _, s := range splitSentences(strings.TrimSpace(line)) {
			if n := len(units); n > 0 && strings.HasSuffix(units[n-1], "...") {
				units[n-1] += " " + s
			} else {
				units = append(units, s)
			}
		}
		for _, s := range units {
			w := map[string]bool{}
			for _, f := range strings.Fields(strings.ToLower(wordChars.ReplaceAllString(citation.ReplaceAllString(s, ""), " "))) {
				w[f] = true
			}
			if len(w) < 4 {
				continue
			}
			for i, prev := range words {
				shared := 0
				for f := range w {
					if prev[f] {
						shared++
					}
				}
				if shared*10 >= 9*max(len(w), len(prev)) {
					return sents[i], s, true
				}
			}
			sents, words = append(sents, s), append(words, w)
		}
	}
	return "", "", false
}

var wordChars = regexp.MustCompile(`[^\pL\pN]+`)

func TestRepeatedSentence(t *testing.T) {
	f := func(answer string, want bool) {
		t.Helper()
		if _, _, got := repeatedSentence(answer); got != want {
			t.Errorf("repeatedSentence(%q) = %v, want %v", answer, got, want)
		}
	}
	f("Use overlap: skip on the job [1]. Put them in one queue [2].", false)
	f("Use overlap: skip on the job [1]. Use `overlap: skip` on the job! [2].", true)
	f("The default is UTC [1].\nSet tz on each job [2]. The default is UTC [3].", true)
	f("Ok [1]. Ok [2].", false) // too short to count
}

// TestQuestionsWithTypos asks the development set again with typos — two
// letters swapped in each word of six letters or more, as a hurried user
// types — and answers nearly as many right as without: the asker corrects
// the words full-text search finds only with typos before it retrieves.
func TestQuestionsWithTypos(t *testing.T) {
	b, err := os.ReadFile("testdata/qa.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []qaCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	score := func(a *Asker, typos bool) int {
		hits := 0
		for _, c := range cases {
			q := c.Question
			if typos {
				q = withTypos(q)
			}
			var r recorder
			if _, err := a.Ask(context.Background(), Request{Question: q}, &r); err != nil {
				t.Fatal(err)
			}
			if answers(r.answer(), c.Facts) {
				hits++
			}
		}
		return hits
	}
	asIs := New(demoIndex(t), Options{Link: testLink})
	fixing := New(demoIndex(t), Options{Link: testLink, Correct: demoCorrect})
	clean, uncorrected, corrected := score(fixing, false), score(asIs, true), score(fixing, true)
	t.Logf("of %d: %d without typos, %d with typos as written, %d with typos corrected", len(cases), clean, uncorrected, corrected)
	if corrected < clean-4 || corrected < uncorrected+5 {
		t.Errorf("with typos corrected %d, want near %d and above %d", corrected, clean, uncorrected)
	}
}

// withTypos swaps two middle letters of each word of q of six letters or
// more (not code).
func withTypos(q string) string {
	f := strings.Fields(q)
	for i, w := range f {
		if len(w) >= 6 && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
			r := []byte(w)
			k := len(r) / 2
			r[k-1], r[k] = r[k], r[k-1]
			f[i] = string(r)
		}
	}
	return strings.Join(f, " ")
}
