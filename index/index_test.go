package index

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// build indexes whitespace-separated documents under ids 0..n-1.
func build(t testing.TB, docs ...string) *Index {
	t.Helper()
	ix := New(DefaultOptions())
	var d Doc
	for id, text := range docs {
		d.Reset()
		for p, w := range strings.Fields(text) {
			d.Add(w, uint32(p), 1, true)
		}
		ix.Add(uint32(id), &d, []string{fmt.Sprintf("mod:%d", id%2)})
	}
	return ix
}

func ids(r Result) []uint32 {
	out := []uint32{}
	for _, h := range r.Hits {
		out = append(out, h.ID)
	}
	return out
}

func terms(ws ...string) []Term {
	var ts []Term
	for _, w := range ws {
		ts = append(ts, Term{Text: w, Weight: 1})
	}
	return ts
}

func TestSearchBasics(t *testing.T) {
	ix := build(t,
		"the quick brown fox",             // 0
		"the lazy dog sleeps",             // 1
		"quick quick quick fox jumps",     // 2
		"a brown dog and a brown fox",     // 3
		"nothing to see here",             // 4
		"fox",                             // 5
		"brown fox brown fox brown quick", // 6
	)
	f := func(name string, q Query, k int, want ...uint32) {
		t.Helper()
		if got := ids(ix.Search(&q, k)); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	f("single term, short doc first", Query{Terms: terms("fox")}, 10, 5, 6, 0, 2, 3)
	f("k bounds", Query{Terms: terms("fox")}, 2, 5, 6)
	f("absent term", Query{Terms: terms("zebra")}, 10)
	f("or of terms", Query{Terms: terms("lazy", "jumps")}, 10, 1, 2)
	f("phrase", Query{Phrases: [][]string{{"brown", "fox"}}}, 10, 6, 0, 3)
	f("phrase not adjacent", Query{Phrases: [][]string{{"quick", "jumps"}}}, 10)
	f("phrase plus term", Query{Terms: terms("quick"), Phrases: [][]string{{"brown", "fox"}}}, 10, 6, 0, 3)
	f("exclude", Query{Terms: terms("fox"), Exclude: []string{"quick"}}, 10, 5, 3)
	f("exclude phrase", Query{Terms: terms("fox"), ExcludePhrases: [][]string{{"brown", "fox"}}}, 10, 5, 2)
	f("filter", Query{Terms: terms("fox"), Filter: ix.Facet("mod:0")}, 10, 6, 0, 2)
	f("accept", Query{Terms: terms("fox"), Accept: func(id uint32) bool { return id != 5 }}, 10, 6, 0, 2, 3)
	f("browse newest first", Query{Filter: ix.Facet("mod:1")}, 10, 5, 3, 1)
	f("browse by recency", Query{Filter: ix.Facet("mod:1"), Recency: func(id uint32) int64 { return -int64(id) }}, 2, 1, 3)
	if r := ix.Search(&Query{Terms: terms("fox")}, 2); r.Total != 5 {
		t.Errorf("Total = %d, want 5", r.Total)
	}

	ix.Delete(5)
	ix.Delete(5) // twice is harmless
	f("after delete", Query{Terms: terms("fox")}, 10, 6, 0, 2, 3)
	f("phrase after delete", Query{Phrases: [][]string{{"fox"}}}, 10, 6, 0, 2, 3)
	f("browse after delete", Query{Filter: ix.Facet("mod:1")}, 10, 3, 1)
	if ix.Len() != 6 || ix.Dead() != 1 {
		t.Errorf("Len %d Dead %d", ix.Len(), ix.Dead())
	}
}

// naiveBM25 scores every document by the textbook formula.
func naiveBM25(docs [][]string, live []bool, q []string) map[int]float64 {
	n, total := 0, 0
	for i, d := range docs {
		if live[i] {
			n++
			total += len(d)
		}
	}
	avg := float64(total) / float64(n)
	out := map[int]float64{}
	for _, t := range q {
		df := 0
		for _, d := range docs { // deleted documents still count until Compact
			if slices.Contains(d, t) {
				df++
			}
		}
		w := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
		for i, d := range docs {
			tf := 0
			for _, x := range d {
				if x == t {
					tf++
				}
			}
			if tf == 0 || !live[i] {
				continue
			}
			out[i] += w * float64(tf) * 2.2 / (float64(tf) + 1.2*(0.25+0.75*float64(len(d))/avg))
		}
	}
	return out
}

func TestSearchMatchesNaiveBM25(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	var docs [][]string
	var texts []string
	for i := 0; i < 300; i++ {
		var d []string
		for n := 1 + rng.IntN(20); n > 0; n-- {
			d = append(d, vocab[int(math.Min(float64(len(vocab)-1), rng.ExpFloat64()*3))])
		}
		docs = append(docs, d)
		texts = append(texts, strings.Join(d, " "))
	}
	ix := build(t, texts...)
	live := make([]bool, len(docs))
	for i := range live {
		live[i] = true
		if i%7 == 3 {
			ix.Delete(uint32(i))
			live[i] = false
		}
	}
	for _, q := range [][]string{{"a"}, {"k"}, {"b", "l"}, {"c", "d", "e"}, {"j", "j"}} {
		want := naiveBM25(docs, live, slices.Compact(slices.Clone(q)))
		r := ix.Search(&Query{Terms: terms(slices.Compact(slices.Clone(q))...)}, len(docs))
		if r.Total != len(want) {
			t.Errorf("%v: %d hits, want %d", q, r.Total, len(want))
		}
		for i, h := range r.Hits {
			if math.Abs(float64(h.Score)-want[int(h.ID)]) > 1e-4*want[int(h.ID)] {
				t.Errorf("%v: doc %d scored %v, want %v", q, h.ID, h.Score, want[int(h.ID)])
			}
			if i > 0 && h.Score > r.Hits[i-1].Score {
				t.Errorf("%v: hits out of order at %d", q, i)
			}
		}
	}
}

func TestLongListsAndPhrases(t *testing.T) {
	// Enough documents that common terms move to roaring bitmaps and the
	// position skip index is exercised.
	var texts []string
	for i := 0; i < 2000; i++ {
		texts = append(texts, fmt.Sprintf("w%d common filler word common x%d target phrase here", i%10, i%3))
	}
	ix := build(t, texts...)
	r := ix.Search(&Query{Phrases: [][]string{{"target", "phrase", "here"}}, Filter: ix.Facet("mod:1")}, 5)
	if r.Total != 1000 || len(r.Hits) != 5 {
		t.Fatalf("phrase over long lists: total %d hits %d", r.Total, len(r.Hits))
	}
	r = ix.Search(&Query{Phrases: [][]string{{"common", "filler"}}, Terms: terms("x1")}, 3)
	if r.Total != 2000 || r.Hits[0].Score <= r.Hits[2].Score && !strings.Contains(texts[r.Hits[0].ID], "x1") {
		t.Fatalf("phrase plus term: %+v", r)
	}
	for _, h := range r.Hits {
		if !strings.Contains(texts[h.ID], " x1 ") {
			t.Errorf("doc %d without x1 ranked first", h.ID)
		}
	}
	if r := ix.Search(&Query{Phrases: [][]string{{"common", "common"}}}, 1); r.Total != 0 {
		t.Errorf("non-adjacent repeated term matched %d", r.Total)
	}
}

func encode(t testing.TB, ix *Index) [][]byte {
	t.Helper()
	var blocks [][]byte
	if err := ix.Encode(func(b []byte) error { blocks = append(blocks, bytes.Clone(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func decode(blocks [][]byte) (*Index, error) {
	return decodeWith(DefaultOptions(), blocks)
}

func decodeWith(opts Options, blocks [][]byte) (*Index, error) {
	i := 0
	return Decode(opts, func() ([]byte, error) {
		if i == len(blocks) {
			return nil, errors.New("no more blocks")
		}
		i++
		return blocks[i-1], nil
	})
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	var texts []string
	for i := 0; i < 5000; i++ {
		texts = append(texts, fmt.Sprintf("doc%d alpha beta gamma%d delta", i, i%50))
	}
	ix := build(t, texts...)
	for i := 0; i < 5000; i += 9 {
		ix.Delete(uint32(i))
	}
	blocks := encode(t, ix)
	got, err := decode(blocks)
	if err != nil {
		t.Fatal(err)
	}
	if again := encode(t, got); !slices.EqualFunc(blocks, again, bytes.Equal) {
		t.Fatal("re-encoding a decoded index changed its bytes")
	}
	q := Query{Terms: terms("gamma7", "doc7"), Phrases: [][]string{{"alpha", "beta"}}}
	if a, b := ix.Search(&q, 20), got.Search(&q, 20); !slices.Equal(ids(a), ids(b)) || a.Total != b.Total {
		t.Fatalf("decoded index answers differently: %v vs %v", ids(a), ids(b))
	}
	if got.Len() != ix.Len() || got.Terms() != ix.Terms() || got.NextID() != ix.NextID() {
		t.Fatal("decoded index differs in size")
	}
}

func TestCompacted(t *testing.T) {
	var texts []string
	for i := 0; i < 3000; i++ {
		texts = append(texts, fmt.Sprintf("t%d shared words here and there x%d", i%100, i%7))
	}
	texts[0] += " solo"
	ix := build(t, texts...)
	for i := 0; i < 3000; i++ {
		if i%3 != 0 {
			ix.Delete(uint32(i))
		}
	}
	ix.Delete(0)
	if !ix.Untidy() {
		t.Fatal("2,001 of 3,000 deleted and not untidy")
	}
	c := ix.Compacted()
	if c.Untidy() {
		t.Fatal("untidy once compacted")
	}
	for li := range c.lists { // laid out exactly sized
		if p := &c.lists[li]; cap(p.data) != len(p.data) || cap(p.pos) != len(p.pos) {
			t.Fatalf("list %q: data %d of %d, positions %d of %d", c.terms[li], len(p.data), cap(p.data), len(p.pos), cap(p.pos))
		}
	}
	for _, q := range []Query{
		{Terms: terms("t3", "x3")},
		{Phrases: [][]string{{"words", "here"}}},
		{Filter: c.Facet("mod:0")},
	} {
		if a, b := ix.Search(&q, 50), c.Search(&q, 50); !slices.Equal(ids(a), ids(b)) || a.Total != b.Total {
			t.Errorf("compacted index answers differently: %v vs %v", ids(a), ids(b))
		}
	}
	// t1 lives in 10 documents (201, 501, …); solo only in deleted doc 0.
	if c.Dead() != 0 || c.DocFreq("shared") != 999 || c.DocFreq("t1") != 10 || c.DocFreq("solo") != 0 {
		t.Errorf("compacted: dead %d df %d/%d/%d", c.Dead(), c.DocFreq("shared"), c.DocFreq("t1"), c.DocFreq("solo"))
	}
	// The compacted index keeps accepting documents.
	var d Doc
	d.Add("fresh", 0, 1, true)
	c.Add(c.NextID(), &d, nil)
	if r := c.Search(&Query{Terms: terms("fresh")}, 1); r.Total != 1 {
		t.Error("compacted index lost Add")
	}
}

func TestDecodeRejectsCorruption(t *testing.T) {
	ix := build(t, "alpha beta", "beta gamma", strings.Repeat("delta ", 40))
	blocks := encode(t, ix)
	for bi := range blocks {
		for i := range blocks[bi] {
			bad := slices.Clone(blocks)
			bad[bi] = slices.Clone(bad[bi])
			bad[bi][i] ^= 0xff
			if got, err := decode(bad); err == nil {
				// A flipped byte may still decode (a term's letters, say);
				// then the index must still be usable.
				got.Search(&Query{Terms: terms("beta")}, 5)
				got.Search(&Query{Phrases: [][]string{{"alpha", "beta"}}}, 5)
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	ix := build(f, "alpha beta", "beta gamma", strings.Repeat("delta ", 40))
	blocks := encode(f, ix)
	f.Add(blocks[0], blocks[1], blocks[2])
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		got, err := decode([][]byte{a, b, c})
		if err != nil {
			return
		}
		got.Search(&Query{Terms: terms("beta", "delta")}, 5)
		got.Search(&Query{Phrases: [][]string{{"alpha", "beta"}}}, 5)
		got.Search(&Query{Filter: roaring.BitmapOf(0, 1, 2)}, 5)
		encode(t, got)
	})
}

func TestCursorPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var p plist
	var want [][]uint32
	for id := uint32(0); id < 3000; id += 1 + uint32(rng.IntN(3)) {
		var pos []uint32
		for x := uint32(rng.IntN(3)); len(pos) < 1+rng.IntN(6); x += 1 + uint32(rng.IntN(300)) {
			pos = append(pos, x)
		}
		p.add(id, uint32(len(pos)), 10, pos)
		want = append(want, pos)
	}
	ids := p.bitmap().ToArray()
	for trial := 0; trial < 20; trial++ {
		var c cursor
		c.reset(&p)
		for r := rng.IntN(5); r < len(ids); r += 1 + rng.IntN(1+trial*3) {
			if got := c.seek(ids[r]); got != r {
				t.Fatalf("trial %d: seek(%d) = %d, want %d", trial, ids[r], got, r)
			}
			got := c.positions(r, nil)
			if !slices.Equal(got, want[r]) {
				t.Fatalf("trial %d posting %d: %v, want %v", trial, r, got, want[r])
			}
		}
	}
}

func TestDocGroup(t *testing.T) {
	for _, words := range []string{
		"a b a c b a d",
		"x",
		"",
		strings.Repeat("p q r s p ", 20), // long: sorted
	} {
		var d Doc
		for i, w := range strings.Fields(words) {
			d.Add(w, uint32(i), 1, true)
		}
		d.group()
		seen := map[string]bool{}
		for i, o := range d.occ {
			if i > 0 && d.occ[i-1].term != o.term {
				if seen[o.term] {
					t.Fatalf("%q: term %q split into two groups", words, o.term)
				}
			}
			if i > 0 && d.occ[i-1].term == o.term && d.occ[i-1].pos >= o.pos {
				t.Fatalf("%q: positions of %q out of order", words, o.term)
			}
			seen[o.term] = true
		}
	}
	// Occurrences added out of position order are sorted, not mangled.
	var d Doc
	d.Add("b", 5, 1, true)
	d.Add("a", 1, 1, true)
	d.Add("b", 2, 1, true)
	d.group()
	if d.occ[0].term != "a" || d.occ[1].pos != 2 || d.occ[2].pos != 5 {
		t.Fatalf("%+v", d.occ)
	}
}

func TestNoPositions(t *testing.T) {
	opts := DefaultOptions()
	opts.NoPositions = true
	ix := New(opts)
	var d Doc
	for id, text := range []string{"alpha beta gamma", "beta alpha", "gamma delta", "alpha alpha alpha"} {
		d.Reset()
		for p, w := range strings.Fields(text) {
			d.Add(w, uint32(p), 1, true)
		}
		ix.Add(uint32(id), &d, nil)
	}
	if got := ids(ix.Search(&Query{Terms: terms("alpha")}, 10)); !slices.Equal(got, []uint32{3, 1, 0}) {
		t.Errorf("terms: %v", got)
	}
	// A phrase only requires its terms.
	if got := ids(ix.Search(&Query{Phrases: [][]string{{"alpha", "beta"}}}, 10)); len(got) != 2 {
		t.Errorf("phrase without positions: %v", got)
	}
	for _, l := range ix.lists {
		if len(l.pos) != 0 {
			t.Fatal("positions stored")
		}
	}
	ix.Delete(1)
	blocks := encode(t, ix.Compacted())
	got, err := decodeWith(ix.opts, blocks)
	if err != nil || !got.opts.NoPositions {
		t.Fatalf("round trip: %v", err)
	}
	// An index without positions is refused where positions are expected.
	if _, err := decode(blocks); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decoded without positions where expected: %v", err)
	}
	if r := got.Search(&Query{Terms: terms("alpha")}, 10); !slices.Equal(ids(r), []uint32{3, 0}) {
		t.Errorf("after compact and decode: %v", ids(r))
	}
}
