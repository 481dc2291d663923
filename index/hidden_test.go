package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// hideVocab is larger than MaxTerms, so a query of every word exercises
// rarest.
const hideVocab = 150

// hideDoc is the deterministic text of document id: words drawn with a
// steep decline, so the common ones outgrow short postings lists.
func hideDoc(id uint32) []string {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	ws := make([]string, 1+rng.IntN(12))
	for i := range ws {
		ws[i] = fmt.Sprint("w", min(hideVocab-1, int(rng.ExpFloat64()*8)))
	}
	return ws
}

func addHideDoc(ix *Index, id uint32) {
	var d Doc
	for p, w := range hideDoc(id) {
		d.Add(w, uint32(p), uint8(1+p%2), true)
	}
	ix.Add(id, &d, []string{fmt.Sprintf("mod:%d", id%2)})
}

// hideQueries are the queries the public statistics are checked with.
func hideQueries() []Query {
	var all []Term
	for i := range hideVocab {
		all = append(all, Term{Text: fmt.Sprint("w", i), Weight: 1})
	}
	return []Query{
		{Terms: terms("w0")},
		{Terms: terms("w3", "w9")},
		{Terms: terms("w1", "w2", "w17", "w40")},
		{Terms: []Term{{Text: "w5", Weight: 2}, {Text: "w0", Weight: 1}}},
		{Terms: all},
		{Phrases: [][]string{{"w0", "w1"}}},
		{Phrases: [][]string{{"w2"}}, Terms: terms("w4")},
		{Terms: terms("w1", "w6"), Exclude: []string{"w3"}},
		{Terms: terms("w0", "w2"), Filter: roaring.BitmapOf(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21)},
		{},
	}
}

// hideModel is what a sequence of operations should leave: per id, whether
// it is live, hidden, or deleted with postings remaining (and then whether
// it was hidden when deleted, or counts as such after a load).
type hideModel struct {
	next   uint32
	live   map[uint32]bool
	hidden map[uint32]bool // live or not yet added
	dead   map[uint32]bool // postings remain; true = hidden when deleted
}

// hideRun applies operations drawn from ops to an index that hides, to a
// plain one given the same writes, and to the model, checking them against
// each other every check operations.
func hideRun(t *testing.T, ops []byte, check int) {
	ix, plain := New(DefaultOptions()), New(DefaultOptions())
	m := hideModel{live: map[uint32]bool{}, hidden: map[uint32]bool{}, dead: map[uint32]bool{}}
	pick := func(b byte) uint32 { return uint32(b) % (m.next + 3) } // sometimes not yet added
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%16, ops[i+1]
		switch {
		case op < 6: // add, hidden or not, sometimes hidden before
			id := m.next + uint32(arg%3)
			h := arg%4 == 0
			if h && arg%8 == 0 {
				ix.Hide(id, true)
				m.hidden[id] = true
			}
			addHideDoc(ix, id)
			addHideDoc(plain, id)
			for gap := m.next; gap < id; gap++ { // skipped: never added
				delete(m.hidden, gap)
			}
			m.next, m.live[id] = id+1, true
			if h {
				ix.Hide(id, true)
				m.hidden[id] = true
			}
		case op < 10: // hide or show
			id, h := pick(arg), arg&0x80 != 0
			ix.Hide(id, h)
			if m.live[id] || id >= m.next {
				if h {
					m.hidden[id] = true
				} else {
					delete(m.hidden, id)
				}
			}
		case op < 13: // delete
			id := pick(arg)
			ix.Delete(id)
			plain.Delete(id)
			if m.live[id] {
				m.dead[id] = m.hidden[id]
				delete(m.live, id)
				delete(m.hidden, id)
			}
		case op < 14:
			ix, plain = ix.Compacted(), plain.Compacted()
			clear(m.dead)
		case op < 15: // a restart: the caller hides again what it hides
			ix, plain = roundTrip(t, ix), roundTrip(t, plain)
			for id := range m.dead {
				m.dead[id] = true
			}
			for id := range m.hidden {
				ix.Hide(id, true)
			}
		default:
			ix.Hide(pick(arg), m.hidden[pick(arg)]) // no change
		}
		if (i/2)%check == check-1 || i+3 >= len(ops) {
			hideCheck(t, ix, plain, &m)
		}
	}
}

func roundTrip(t *testing.T, ix *Index) *Index {
	t.Helper()
	got, err := decode(encode(t, ix))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// hideCheck compares public searches of ix with searches of an index
// holding only what the model says is visible, and the other searches of
// ix with those of plain.
func hideCheck(t *testing.T, ix, plain *Index, m *hideModel) {
	t.Helper()
	ref := New(DefaultOptions())
	var gone []uint32
	for id := range m.next {
		if m.live[id] && !m.hidden[id] {
			addHideDoc(ref, id)
		} else if h, ok := m.dead[id]; ok && !h {
			addHideDoc(ref, id)
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		ref.Delete(id)
	}
	if ix.PublicLen() != ref.Len() {
		t.Fatalf("PublicLen %d, want %d", ix.PublicLen(), ref.Len())
	}
	for id := range m.next + 3 {
		if ix.Hidden(id) != (m.live[id] && m.hidden[id]) {
			t.Fatalf("Hidden(%d) = %v", id, ix.Hidden(id))
		}
	}
	for qi, q := range hideQueries() {
		want := ref.Search(&q, 1000)
		pq := q
		pq.Public = true
		sameHits(t, fmt.Sprint("public query ", qi), ix.Search(&pq, 1000), want)
		sameHits(t, fmt.Sprint("query ", qi), ix.Search(&q, 1000), plain.Search(&q, 1000))
	}
}

// sameHits fails unless a and b hold the same hits with bit-equal scores.
func sameHits(t *testing.T, what string, a, b Result) {
	t.Helper()
	if a.Total != b.Total || !slices.Equal(a.Hits, b.Hits) && (len(a.Hits) > 0 || len(b.Hits) > 0) {
		t.Fatalf("%s: %d hits %v, want %d %v", what, a.Total, a.Hits, b.Total, b.Hits)
	}
}

func TestPublicStatsMatchVisibleIndex(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			ops := make([]byte, 1200)
			for i := range ops {
				ops[i] = byte(rng.UintN(256))
			}
			hideRun(t, ops, 25)
		})
	}
}

func FuzzPublicStats(f *testing.F) {
	f.Add([]byte{0, 4, 0, 0, 0, 1, 6, 0x81, 10, 1, 13, 0, 0, 8, 14, 0, 7, 0x02})
	f.Fuzz(func(t *testing.T, ops []byte) {
		hideRun(t, ops[:min(len(ops), 400)], 8) // longer is slower, not deeper
	})
}

// TestPublicUnchangedWithNothingHidden: with nothing hidden, a public query
// scores bit for bit as any other, deleted documents included.
func TestPublicUnchangedWithNothingHidden(t *testing.T) {
	ix := New(DefaultOptions())
	for id := range uint32(500) {
		addHideDoc(ix, id)
	}
	for id := uint32(0); id < 500; id += 7 {
		ix.Delete(id)
	}
	for qi, q := range hideQueries() {
		pq := q
		pq.Public = true
		sameHits(t, fmt.Sprint("query ", qi), ix.Search(&pq, 1000), ix.Search(&q, 1000))
	}
}

// TestPublicScoreIgnoresHiddenText is the leak of issue 22: a public
// document's score must not move when hidden documents holding its words
// come, go or are deleted.
func TestPublicScoreIgnoresHiddenText(t *testing.T) {
	ix := build(t, "alpha beta", "beta gamma", "gamma delta")
	q := Query{Terms: terms("alpha"), Public: true}
	before := ix.Search(&q, 10).Hits
	var d Doc
	for id := uint32(3); id < 40; id++ {
		d.Reset()
		for p, w := range strings.Fields("alpha alpha secret words") {
			d.Add(w, uint32(p), 1, true)
		}
		ix.Hide(id, true)
		ix.Add(id, &d, nil)
	}
	if got := ix.Search(&q, 10).Hits; !slices.Equal(got, before) {
		t.Fatalf("with hidden documents %v, before %v", got, before)
	}
	for id := uint32(3); id < 40; id += 2 {
		ix.Delete(id)
	}
	if got := ix.Search(&q, 10).Hits; !slices.Equal(got, before) {
		t.Fatalf("after deleting hidden documents %v, before %v", got, before)
	}
	q.Public = false
	if got := ix.Search(&q, 10); got.Total != 1+18 || got.Hits[0].Score == before[0].Score {
		t.Fatalf("a private query sees %d hits, scores %v", got.Total, got.Hits)
	}
}

// BenchmarkSearchPublic compares a public query's cost with that of the
// same query denying the hidden set by hand (how the engine searched before
// public statistics) and of a private query, as the hidden share grows.
func BenchmarkSearchPublic(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		ix := New(DefaultOptions())
		for id := range uint32(n) {
			addHideDoc(ix, id)
		}
		qs := hideQueries()[:4]
		for _, share := range []int{0, 25} {
			hidden := roaring.New()
			for id := range uint32(n) {
				h := share > 0 && int(id%100) < share
				ix.Hide(id, h)
				if h {
					hidden.Add(id)
				}
			}
			for _, mode := range []string{"private", "deny", "public"} {
				b.Run(fmt.Sprintf("n=%d/hidden=%d%%/%s", n, share, mode), func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						q := qs[i%len(qs)]
						switch mode {
						case "deny":
							if !hidden.IsEmpty() {
								q.Deny = hidden
							}
						case "public":
							q.Public = true
						}
						ix.Search(&q, 20)
					}
				})
			}
		}
	}
}
