package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// osa is the plain optimal-string-alignment distance, the reference.
func osa(a, b []rune) int {
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

func TestOSAWithinAgreesWithFullTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []rune("abcdé")
	word := func() []rune {
		w := make([]rune, r.IntN(12))
		for i := range w {
			w[i] = alpha[r.IntN(len(alpha))]
		}
		return w
	}
	for range 200000 {
		a, b := word(), word()
		k := 1 + r.IntN(2)
		want := min(osa(a, b), k+1)
		if got := osaWithin(a, b, k); got != want {
			t.Fatalf("osaWithin(%q, %q, %d) = %d, want %d", string(a), string(b), k, got, want)
		}
	}
}

func FuzzOSAWithin(f *testing.F) {
	f.Add("licence", "license", 1)
	f.Add("webhok", "webhook", 2)
	f.Fuzz(func(t *testing.T, a, b string, k int) {
		k = 1 + (k & 1)
		ra, rb := runesOf(nil, a), runesOf(nil, b)
		if got, want := osaWithin(ra, rb, k), min(osa(ra, rb), k+1); got != want {
			t.Fatalf("osaWithin(%q, %q, %d) = %d, want %d", a, b, k, got, want)
		}
	})
}

func TestTypoMatches(t *testing.T) {
	ix := New(DefaultOptions())
	words := []string{"webhook", "license", "licence", "lichen", "wbehook", "xebhook", "webhooks", "configuration"}
	for i, w := range words {
		var d Doc
		d.Add(w, 0, 1, true)
		ix.Add(uint32(i), &d, nil)
	}
	got := func(q string, edits int) []string {
		var out []string
		for _, m := range ix.typoMatches(q, "", edits, 0) {
			out = append(out, ix.terms[m.li])
		}
		slices.Sort(out)
		return out
	}
	// First letter exact: xebhook is one edit from webhook but not found.
	if g := got("webhok", 1); !slices.Equal(g, []string{"webhook"}) {
		t.Errorf("webhok: %v", g)
	}
	if g := got("webhok", 2); !slices.Equal(g, []string{"wbehook", "webhook", "webhooks"}) {
		t.Errorf("webhok, 2 edits: %v", g)
	}
	if g := got("license", 1); !slices.Equal(g, []string{"licence"}) {
		t.Errorf("license: %v (the term itself is not a typo match)", g)
	}
	if g := got("license", 0); g != nil {
		t.Errorf("no edits: %v", g)
	}
}

// A word the index holds is corrected only into one far more common
// (TypoRatio); a typo match then never outranks an exact match in an
// otherwise equal document; a word the index lacks is always corrected.
func TestTypoScoring(t *testing.T) {
	add := func(ix *Index, id uint32, w string) {
		var d Doc
		d.Add(w, 0, 1, true)
		ix.Add(id, &d, nil)
	}
	ix := New(DefaultOptions())
	add(ix, 0, "license")
	add(ix, 1, "licence")
	add(ix, 2, "other")
	r := ix.Search(&Query{Terms: []Term{{Text: "license", Weight: 1, Edits: 1}}}, 10)
	if r.Total != 1 || len(r.Typos) != 1 || r.Typos[0].ExactDF != 1 || r.Typos[0].Matches != nil {
		t.Fatalf("as common as the word: %+v", r)
	}
	r = ix.Search(&Query{Terms: []Term{{Text: "licenze", Weight: 1, Edits: 1}}}, 10)
	if r.Total != 2 || len(r.Typos) != 1 || r.Typos[0].ExactDF != 0 || len(r.Typos[0].Matches) != 2 {
		t.Fatalf("misspelt: %+v", r)
	}

	ix = New(DefaultOptions())
	add(ix, 0, "license")
	n := uint32(1)
	for ; n <= uint32(TypoRatio)+1; n++ {
		add(ix, n, "licence")
	}
	for ; n < 1000; n++ {
		add(ix, n, "other")
	}
	r = ix.Search(&Query{Terms: []Term{{Text: "license", Weight: 1, Edits: 1}}}, 10)
	if r.Total != TypoRatio+2 || r.Hits[0].ID != 0 || r.Hits[1].Score >= r.Hits[0].Score {
		t.Fatalf("far rarer than its match: hits %+v total %d", r.Hits, r.Total)
	}
	if len(r.Typos) != 1 || !slices.Equal(r.Typos[0].Matches, []string{"licence"}) {
		t.Fatalf("typos %+v", r.Typos)
	}
	r = ix.Search(&Query{Terms: []Term{{Text: "license", Weight: 1}}}, 10)
	if r.Total != 1 {
		t.Fatalf("without edits: total %d", r.Total)
	}
}
