package bench

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var typoQueries = []string{
	"what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .",
	"How can actually pertinent data, as opposed to references, be retrieved automatically?",
	"Boundary-layer TRANSITION on a 1958 X15 model",
	"aaaaa aaaaaa bbbbb",
	"what is it for",
	"naïve résumé café",
	"supersonic",
	"",
}

// typoSplit cuts s into its words (runs of letters and digits) and the
// text between them.
func typoSplit(s string) (words, gaps []string) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		} else {
			gaps = append(gaps, cur.String())
		}
		cur.Reset()
	}
	for _, r := range s {
		if w := unicode.IsLetter(r) || unicode.IsDigit(r); w != inWord {
			flush()
			inWord = w
		}
		cur.WriteRune(r)
	}
	flush()
	return words, gaps
}

// osa is the Damerau–Levenshtein distance (optimal string alignment)
// between a and b, by bytes.
func osa(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func eligibleTypoWord(w string) bool {
	if len(w) < TypoMinLetters {
		return false
	}
	for _, r := range w {
		if !isASCIILetter(r) {
			return false
		}
	}
	return true
}

func TestTypoDeterministic(t *testing.T) {
	for i, q := range typoQueries {
		id := strconv.Itoa(i)
		a, b := Typo(id, q, 23), Typo(id, q, 23)
		if a != b {
			t.Errorf("%q: %q then %q", q, a, b)
		}
	}
	// The same query under another id or seed is typed otherwise (some of
	// 20 tries).
	q := typoQueries[0]
	ids, seeds := map[string]bool{}, map[string]bool{}
	for i := range 20 {
		ids[Typo(strconv.Itoa(i), q, 23)] = true
		seeds[Typo("1", q, int64(i))] = true
	}
	if len(ids) < 2 || len(seeds) < 2 {
		t.Errorf("20 ids give %d different typos, 20 seeds %d", len(ids), len(seeds))
	}
	// A query's typos do not depend on the others'.
	qs := []BEIRQuery{{ID: "a", Text: typoQueries[0]}, {ID: "b", Text: typoQueries[1]}}
	one, two := TypoQueries(qs[1:], 23), TypoQueries(qs, 23)
	if one[0] != two[1] {
		t.Errorf("query b alone: %q; after a: %q", one[0].Text, two[1].Text)
	}
}

func TestTypoEdits(t *testing.T) {
	kinds := map[TypoKind]int{}
	firstLetter := 0
	for seed := range int64(500) {
		for i, q := range typoQueries {
			id := strconv.Itoa(i)
			got, edits := TypoQuery(id, q, seed)
			ow, og := typoSplit(q)
			gw, gg := typoSplit(got)
			if fmt.Sprint(og) != fmt.Sprint(gg) || len(ow) != len(gw) {
				t.Fatalf("seed %d: %q -> %q: more than words changed", seed, q, got)
			}
			var eligible, changed []int
			for j := range ow {
				if eligibleTypoWord(ow[j]) {
					eligible = append(eligible, j)
				}
				if ow[j] == gw[j] {
					continue
				}
				changed = append(changed, j)
				if !eligibleTypoWord(ow[j]) {
					t.Errorf("seed %d: %q -> %q: changed %q", seed, q, got, ow[j])
				}
				if d := osa(ow[j], gw[j]); d != 1 {
					t.Errorf("seed %d: %q -> %q: %d edits", seed, ow[j], gw[j], d)
				}
				if strings.ToLower(ow[j]) == ow[j] && strings.ToLower(gw[j]) != gw[j] ||
					strings.ToUpper(ow[j]) == ow[j] && strings.ToUpper(gw[j]) != gw[j] {
					t.Errorf("seed %d: %q -> %q: case changed", seed, ow[j], gw[j])
				}
			}
			if want := min(2, len(eligible)); len(changed) != want || len(edits) != want {
				t.Errorf("seed %d: %q -> %q: %d words changed, %d edits, want %d", seed, q, got, len(changed), len(edits), want)
				continue
			}
			for k, e := range edits {
				if e.Word != ow[changed[k]] || e.Typo != gw[changed[k]] {
					t.Errorf("seed %d: edit %+v, words %q -> %q", seed, e, ow[changed[k]], gw[changed[k]])
				}
				kinds[e.Kind]++
				if e.Pos == 0 {
					firstLetter++
				}
			}
		}
	}
	// Every kind of slip, and some on the first letter: nothing is left
	// out that the engine might find harder.
	for k := range TypoKind(4) {
		if kinds[k] < 100 {
			t.Errorf("%d %s typos of %v", kinds[k], k, kinds)
		}
	}
	if firstLetter < 100 {
		t.Errorf("%d typos at the first letter", firstLetter)
	}
}

func TestTypoShortWordsUntouched(t *testing.T) {
	for _, q := range []string{"what is it for", "naïve résumé café", "x15 b747 a380 abcd1", "", " . , "} {
		for seed := range int64(50) {
			if got, edits := TypoQuery("1", q, seed); got != q || edits != nil {
				t.Errorf("seed %d: %q -> %q %v", seed, q, got, edits)
			}
		}
	}
}

func TestTypoKeyboard(t *testing.T) {
	for c, nb := range qwertyNeighbours {
		for _, n := range []byte(nb) {
			if !strings.ContainsRune(qwertyNeighbours[n], rune(c)) {
				t.Errorf("%c is beside %c but not %c beside %c", n, c, c, n)
			}
		}
	}
	if len(qwertyNeighbours) != 26 {
		t.Errorf("%d keys", len(qwertyNeighbours))
	}
}
