package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func exhaustive(ix *Index, q Query, k int) Result {
	q.Exhaustive = true
	return ix.Search(&q, k)
}

// randomIndex builds an index of n documents over a Zipf-distributed
// vocabulary of v words (w0 the most common), some of them deleted, some
// hidden, with lengths from 1 to 40 words and the odd title-weighted word.
func randomIndex(rng *rand.Rand, n, v int) *Index {
	ix := New(DefaultOptions())
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(v-1))
	var d Doc
	for id := 0; id < n; id++ {
		d.Reset()
		words := 1 + rng.IntN(40)
		if rng.IntN(4) == 0 {
			words = 1 + rng.IntN(4)
		}
		for p := 0; p < words; p++ {
			w := uint8(1)
			if rng.IntN(20) == 0 {
				w = 3
			}
			d.Add(fmt.Sprintf("w%d", zipf.Uint64()), uint32(p), w, true)
		}
		ix.Add(uint32(id), &d, []string{fmt.Sprintf("f:%d", id%5)})
		if rng.IntN(9) == 0 {
			ix.Hide(uint32(id), true)
		}
	}
	for i := 0; i < n/30; i++ {
		ix.Delete(uint32(rng.IntN(n)))
	}
	return ix
}

// randomQuery draws a query of ranked terms, maybe a phrase, exclusions, a
// filter, a time window, typos and visibility over ix's vocabulary.
func randomQuery(rng *rand.Rand, ix *Index, v int) Query {
	word := func() string {
		if rng.IntN(3) == 0 {
			return fmt.Sprintf("w%d", rng.IntN(8)) // common
		}
		return fmt.Sprintf("w%d", rng.IntN(v+5)) // any, or absent
	}
	var q Query
	for i := 1 + rng.IntN(6); i > 0; i-- {
		t := Term{Text: word(), Weight: 1}
		switch rng.IntN(8) {
		case 0:
			t.Weight = 0.5
		case 1:
			t.Alts = []string{word()}
		case 2:
			t.Edits = 1
		}
		q.Terms = append(q.Terms, t)
	}
	if rng.IntN(6) == 0 {
		q.Phrases = [][]string{{word(), word()}}
		if rng.IntN(2) == 0 {
			q.Terms = nil
		}
	}
	if rng.IntN(6) == 0 {
		q.Exclude = []string{word()}
	}
	if rng.IntN(5) == 0 {
		q.Filter = ix.Facet(fmt.Sprintf("f:%d", rng.IntN(5)))
	}
	if rng.IntN(5) == 0 {
		mod := uint32(2 + rng.IntN(3))
		q.Accept = func(id uint32) bool { return id%mod != 0 }
	}
	if rng.IntN(3) == 0 {
		q.Recency = func(id uint32) int64 { return int64(id % 97) } // many ties
	}
	q.Public = rng.IntN(2) == 0
	return q
}

// sameResult fails t unless the pruned evaluation equals the exhaustive
// one: hits, scores to the bit, order, totals and typo notes.
func sameResult(t testing.TB, what string, got, want Result) {
	t.Helper()
	if got.Total != want.Total {
		t.Fatalf("%s: total %d, exhaustive %d", what, got.Total, want.Total)
	}
	if len(got.Hits) != len(want.Hits) {
		t.Fatalf("%s: %d hits, exhaustive %d", what, len(got.Hits), len(want.Hits))
	}
	for i := range got.Hits {
		g, w := got.Hits[i], want.Hits[i]
		if g.ID != w.ID || math.Float32bits(g.Score) != math.Float32bits(w.Score) {
			t.Fatalf("%s: hit %d is %d (%v), exhaustive %d (%v)", what, i, g.ID, g.Score, w.ID, w.Score)
		}
	}
	if len(got.Typos) != len(want.Typos) {
		t.Fatalf("%s: typo notes %v, exhaustive %v", what, got.Typos, want.Typos)
	}
}

func TestPrunedEqualsExhaustive(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		n := []int{50, 700, 3000, 20000, 70000, 150000}[seed-1]
		v := 40 + n/20
		ix := randomIndex(rng, n, v)
		for i := 0; i < 300; i++ {
			q := randomQuery(rng, ix, v)
			k := []int{1, 3, 10, 20, 100}[rng.IntN(5)]
			what := fmt.Sprintf("seed %d n %d query %d %+v k %d", seed, n, i, describe(&q), k)
			sameResult(t, what, ix.Search(&q, k), exhaustive(ix, q, k))
		}
		{ // and after a compaction: no deleted postings, the unfiltered totals counted without a union
			ix = ix.Compacted()
			for i := 0; i < 100; i++ {
				q := randomQuery(rng, ix, v)
				sameResult(t, fmt.Sprintf("compacted query %d", i), ix.Search(&q, 10), exhaustive(ix, q, 10))
			}
		}
	}
}

func describe(q *Query) string {
	var b strings.Builder
	for _, t := range q.Terms {
		fmt.Fprintf(&b, "%s/%g/%v/%d ", t.Text, t.Weight, t.Alts, t.Edits)
	}
	fmt.Fprintf(&b, "phrases %v excl %v filter %v accept %v public %v", q.Phrases, q.Exclude, q.Filter != nil, q.Accept != nil, q.Public)
	return b.String()
}

// FuzzPrunedEqualsExhaustive draws the corpus and the query from the fuzzer's
// bytes: documents of words from a small vocabulary (so lists are long and
// blocks many), and a query of terms, a phrase, an exclusion, a filter.
func FuzzPrunedEqualsExhaustive(f *testing.F) {
	f.Add(uint64(1), uint16(500), []byte("\x01\x02\x03"), uint8(10))
	f.Add(uint64(7), uint16(4000), []byte("\x00\x00\x05\x09\xff"), uint8(1))
	f.Add(uint64(3), uint16(9000), []byte("\x10\x20"), uint8(20))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, query []byte, k uint8) {
		if k == 0 || len(query) > 16 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		v := 10 + int(seed%50)
		ix := randomIndex(rng, int(n)%12000+1, v)
		var q Query
		for i, c := range query {
			w := fmt.Sprintf("w%d", int(c)%(v+3))
			switch {
			case c >= 0xf0:
				q.Exclude = append(q.Exclude, w)
			case c >= 0xe0 && i+1 < len(query) && len(q.Phrases) < 2:
				q.Phrases = append(q.Phrases, []string{w, fmt.Sprintf("w%d", int(query[i+1])%(v+3))})
			case c >= 0xd0:
				q.Filter = ix.Facet(fmt.Sprintf("f:%d", c%5))
			case c >= 0xc0:
				q.Public = true
			default:
				q.Terms = append(q.Terms, Term{Text: w, Weight: float32(1+c%3) / 2, Edits: c % 2})
			}
		}
		sameResult(t, describe(&q), ix.Search(&q, int(k)), exhaustive(ix, q, int(k)))
	})
}

// TestBlocksDecode checks the blocked ids against the list's own ids, and
// advance against a plain search, over lists of every shape.
func TestBlocksDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 127, 128, 129, 1000, 40000} {
		var p plist
		var all []uint32
		var tfs []uint8
		var lens []uint32
		for id := uint32(rng.IntN(3)); len(all) < n; id += 1 + uint32(rng.IntN(1<<uint(rng.IntN(18)))) {
			tf, l := uint8(1+rng.IntN(4)), uint32(rng.IntN(1<<uint(rng.IntN(30))))
			if rng.IntN(2) == 0 {
				tf = 1
			}
			p.push(id, tf, l, false)
			all, tfs, lens = append(all, id), append(tfs, tf), append(lens, l)
		}
		var c pcur
		c.reset(&p, 1)
		for i, id := range all {
			if c.doc != id || c.tfs[c.i] != tfs[i] || c.lens[c.i] != lens[i] {
				t.Fatalf("n %d: posting %d is %d/%d/%d, want %d/%d/%d", n, i, c.doc, c.tfs[c.i], c.lens[c.i], id, tfs[i], lens[i])
			}
			c.next()
		}
		if c.doc != noMore {
			t.Fatalf("n %d: past the end at %d", n, c.doc)
		}
		c.reset(&p, 1)
		for target := uint32(0); c.doc != noMore; target += uint32(rng.IntN(3000)) {
			prev := c.doc
			c.advance(target)
			i, _ := slices.BinarySearch(all, target)
			want := uint32(noMore)
			if i < len(all) {
				want = max(all[i], prev) // advance never goes back
			}
			if c.doc != want {
				t.Fatalf("n %d: advance(%d) at %d, want %d", n, target, c.doc, want)
			}
		}
		if got := roaring.BitmapOf(all...); !got.Equals(p.bitmap()) {
			t.Fatalf("n %d: bitmap differs", n)
		}
	}
}

// TestAddImpact checks the frontier kept per block against the one
// computed from scratch.
func TestAddImpact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 2000; trial++ {
		var set []impact
		var all []impact
		for i := 0; i < 1+rng.IntN(60); i++ {
			x := impactOf(uint8(1+rng.IntN(6)), uint32(1+rng.IntN(40)))
			set, all = addImpact(set, 0, x), append(all, x)
		}
		var want []impact // no other beats it (or equals it, earlier)
		for i, x := range all {
			beaten := false
			for j, y := range all {
				if y.tf() >= x.tf() && y.length() <= x.length() && (y != x || j < i) {
					beaten = true
				}
			}
			if !beaten {
				want = append(want, x)
			}
		}
		slices.SortFunc(want, func(a, b impact) int { return int(a.tf()) - int(b.tf()) })
		if !slices.Equal(set, want) {
			t.Fatalf("trial %d: frontier %v, want %v (from %v)", trial, set, want, all)
		}
	}
}
