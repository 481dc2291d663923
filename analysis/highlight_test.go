package analysis

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/query"
)

// fullSpans is matchSpans without its shortcut: the whole text analysed.
func fullSpans(a *Analyzer, text string, marks map[string]bool) []span {
	return a.spansIn(text, 0, marks, nil)
}

// marksOf analyses a query into the terms a search would mark.
func marksOf(a *Analyzer, q string) map[string]bool {
	pq, _ := query.ParseQuery(q)
	return a.Compile(&pq, false).Marks
}

func TestMatchSpansAsFullAnalysis(t *testing.T) {
	a := New(0)
	texts := []string{
		"Retrying with backoff: the RetryPolicy's max_retries=5 and retry-after headers.",
		"**Retries** are `retry_backoff_ms`-bound; see RETRY.md#back-off (naïve retrying).",
		"Café naïve résumé — Ångström units, «retry» and “backoff”. 日本語のテキストで再試行",
		"x\ty\nretry\r\nBACKOFF\fback\voff",
		"Key · Default · retry.backoff · 10s ·retry· ·",
		"",
		"   ",
		"ret re retr retry",
		"Dying lying tying; TRY cry fly; the skies; O'Reilly's don't; a file, the fyle",
		"callbackHandler retryBackoff HTTPRetry x2retry feedBack secret.retry snake_retry_case RETRYING BackOff",
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
		a := New(64)
		m := marksOf(a, q)
		want := fullSpans(a, text, m)
		if got := a.matchSpans(text, m); !slices.Equal(got, want) {
			t.Fatalf("q %q, text %q: spans %v, want %v", q, text, got, want)
		}
		h := a.Highlight(text, m, HighlightChars)
		if !strings.Contains(text, h.Text) || !h.Before && !strings.HasPrefix(text, h.Text) || !h.After && !strings.HasSuffix(text, h.Text) {
			t.Fatalf("snippet %+v of %q", h, text)
		}
		at := 0
		for _, s := range h.Marks {
			if s.Start < at || s.End > len(h.Text) || s.Start >= s.End || !utf8.ValidString(h.Text[s.Start:s.End]) && utf8.ValidString(text) {
				t.Fatalf("mark %v of %+v", s, h)
			}
			at = s.End + 1 // marks that touch are merged
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

// TestMatchSpansOnRealText checks the shortcut against the whole-text
// analysis on real English: every query of the CISI and Cranfield
// collections over a sample of their documents (skipped without them).
func TestMatchSpansOnRealText(t *testing.T) {
	a := New(0)
	checked := 0
	for _, set := range []string{"cisi", "cranfield"} {
		dir := filepath.Join("..", "..", "shared", "datasets", set)
		docs := readJSONL(t, filepath.Join(dir, "corpus.jsonl"), "text", 300)
		queries := readJSONL(t, filepath.Join(dir, "queries.jsonl"), "text", 0)
		if len(docs) == 0 || len(queries) == 0 {
			continue
		}
		for i := 0; i < len(docs); i += 3 { // the documents' own words as queries, more of the vocabulary
			queries = append(queries, textcut.Prefix(docs[i], 400))
		}
		for qi, q := range queries {
			m := marksOf(a, q)
			for di := qi % 7; di < len(docs); di += 7 {
				if got, want := a.matchSpans(docs[di], m), fullSpans(a, docs[di], m); !slices.Equal(got, want) {
					t.Fatalf("%s query %q, document %d: spans %v, want %v", set, q, di, got, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Skip("no datasets in ../shared/datasets")
	}
	t.Logf("%d query-document pairs agree", checked)
}

// readJSONL reads the field of up to n lines of a JSON-lines file (all
// when n is 0); nothing when the file is missing.
func readJSONL(t *testing.T, path, field string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && (n == 0 || len(out) < n) {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			if s, ok := rec[field].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func TestHighlightSkipsCellSeparator(t *testing.T) {
	a := New(0)
	text := strings.Repeat("filler ", 40) + "· alpha · needle · omega " + strings.Repeat("filler ", 40)
	h := a.Highlight(text, marksOf(a, "needle"), 40).Render(nil, "<mark>", "</mark>")
	if !strings.Contains(h, "<mark>needle</mark>") || strings.HasPrefix(h, "…·") {
		t.Errorf("highlight %q", h)
	}
}
