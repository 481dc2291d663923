package engine

import (
	"slices"
	"strings"
	"testing"
)

// fullSpans is matchSpans without its shortcut: the whole text analysed.
func fullSpans(a *analyzer, text string, marks map[string]bool) []span {
	return a.spansIn(text, 0, marks, nil)
}

// marksOf analyses a query into the terms a search would mark.
func marksOf(a *analyzer, q string) map[string]bool {
	pq, _ := ParseQuery(q)
	return a.compile(&pq).marks
}

func TestMatchSpansAsFullAnalysis(t *testing.T) {
	a := newAnalyzer(0)
	texts := []string{
		"Retrying with backoff: the RetryPolicy's max_retries=5 and retry-after headers.",
		"**Retries** are `retry_backoff_ms`-bound; see RETRY.md#back-off (naïve retrying).",
		"Café naïve résumé — Ångström units, «retry» and “backoff”. 日本語のテキストで再試行",
		"x\ty\nretry\r\nBACKOFF\fback\voff",
		"",
		"   ",
		"ret re retr retry",
		"Dying lying tying; TRY cry fly; the skies; O'Reilly's don't; a file, the fyle",
	}
	for _, q := range []string{"retry backoff", "naive resume", "angstrom", "再試行", "back off", "x", "ret", `"retry policy"`,
		"die", "lie tie", "try", "cry flies", "sky", "oreilly", "o'reilly", "dont", "file", "reilly"} {
		m := marksOf(a, q)
		for _, text := range texts {
			want := fullSpans(a, text, m)
			if got := a.matchSpans(text, m); !slices.Equal(got, want) {
				t.Errorf("q %q, text %q: spans %v, want %v", q, text, got, want)
			}
		}
	}
}

func FuzzMatchSpans(f *testing.F) {
	f.Add("retry backoff", "Retrying with back-off and RetryPolicy; naïve café.")
	f.Add("db", "DB db Db dB d_b")
	f.Fuzz(func(t *testing.T, q, text string) {
		if len(q) > 200 || len(text) > 4000 {
			return
		}
		a := newAnalyzer(64)
		m := marksOf(a, q)
		want := fullSpans(a, text, m)
		if got := a.matchSpans(text, m); !slices.Equal(got, want) {
			t.Fatalf("q %q, text %q: spans %v, want %v", q, text, got, want)
		}
		if h := a.highlight(text, m, highlightChars); strings.Count(h, "<mark>") != strings.Count(h, "</mark>") {
			t.Fatalf("unbalanced marks: %q", h)
		}
	})
}

func TestLowerASCII(t *testing.T) {
	for _, s := range []string{"", "A", "Hello, World! ABCXYZ abcxyz @[`{", "ÀÉÎ naïve ÇA", strings.Repeat("AbC", 11) + "é", "\x80\xff\x7fAZaz09", "@@@@@@@@@@@@@@@@[[[[[[[[[[[[[[["} {
		got, wide := lowerASCII(nil, s)
		want := []byte(s)
		first := -1
		for i, c := range want {
			if c >= 'A' && c <= 'Z' {
				want[i] = c + 32
			}
			if c >= 0x80 && first < 0 {
				first = i
			}
		}
		if string(got) != string(want) {
			t.Errorf("lowerASCII(%q) = %q, want %q", s, got, want)
		}
		if (wide < 0) != (first < 0) || wide > first {
			t.Errorf("lowerASCII(%q): first wide byte %d, found from %d", s, first, wide)
		}
	}
}
