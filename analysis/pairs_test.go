package analysis

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sift-search/sift/query"
)

func TestIndexPairs(t *testing.T) {
	// "the", "of", "get", "by", "then" are stop words; "kernel", "doc",
	// "user", "id", "call" are not.
	got := IndexPairs(nil, "Call the getUserById on the kernel docs of the kernel, then the kernel docs.")
	want := []string{"by+id", "call+the", "doc+of", "get+user", "id+on", "kernel+then", "the+getuserbyid", "the+kernel", "user+by"}
	if !slices.Equal(got, want) {
		t.Errorf("pairs %v, want %v (one word of each a stop word, once each, the compound whole at its first part's position)", got, want)
	}
	if got := IndexPairs(nil, "alone"); len(got) != 0 {
		t.Errorf("one word: pairs %v", got)
	}
	if got := PhrasePairs([]string{"of", "the", "kernel", "doc", "by", "user"}); !slices.Equal(got, []string{"the+kernel", "doc+by", "by+user"}) {
		t.Errorf("PhrasePairs: %v", got)
	}
}

// checkPairs fails when a phrase cut from text (words from..to) holds,
// as Match decides, in text but a pair of it is not among text's.
func checkPairs(t testing.TB, text string, from, to int) bool {
	words := strings.Fields(text)
	if from < 0 || to > len(words) || from >= to {
		return false
	}
	cut := strings.ReplaceAll(strings.Join(words[from:to], " "), `"`, "")
	held := false
	// As cut, and as typed in lower case ("getuserbyid": the compound
	// whole, not its parts).
	for _, phrase := range []string{cut, strings.ToLower(cut)} {
		c, err := CompileSearch(query.SearchRequest{Query: `"` + phrase + `"`})
		if err != nil || len(c.Phrases) == 0 {
			continue
		}
		if m := c.Match([]Candidate{{Body: text}}); !m[0].OK {
			continue
		}
		held = true
		have := IndexPairs(nil, text)
		for _, ph := range c.Phrases {
			for _, p := range PhrasePairs(ph) {
				if !slices.Contains(have, p) {
					t.Fatalf("%q holds phrase %q (%v), yet not its pair %q; its pairs: %v", text, phrase, ph, p, have)
				}
			}
		}
	}
	return held
}

// TestPairsOfRealText: every phrase of two to five words cut from real
// text (the CISI and Cranfield collections) that the text holds has each
// of its pairs among the text's.
func TestPairsOfRealText(t *testing.T) {
	checked := 0
	for _, set := range []string{"cisi", "cranfield"} {
		docs := readJSONL(t, filepath.Join("..", "..", "shared", "datasets", set, "corpus.jsonl"), "text", 60)
		for i, d := range docs {
			n := len(strings.Fields(d))
			for from := i % 5; from < n; from += 11 {
				if checkPairs(t, d, from, min(from+2+(from+i)%4, n)) {
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Skip("no datasets in ../shared/datasets")
	}
	t.Logf("%d phrases checked", checked)
}

func FuzzPairs(f *testing.F) {
	for _, s := range []string{
		"Call getUserById, then call it again.",
		"ana: <b>Signatures</b> & webhooks: see getUserById",
		"the path/to/file.go failed: snake_case_name at pkg.Func",
		"東京都に行きました and then 서울 too",
		"c++ and c# are languages; so is Go 1.22",
		"don't stop—it's the end of the line... or is it?",
	} {
		f.Add(s, 0, 3)
	}
	f.Fuzz(func(t *testing.T, text string, from, to int) {
		checkPairs(t, text, from, to)
	})
}
