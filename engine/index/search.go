package index

import (
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Query is what Search evaluates. Terms are optional and ranked (BM25, any
// one of them suffices); every phrase is required; excluded terms and phrases
// remove documents; Filter and Accept restrict the candidates.
type Query struct {
	Terms          []Term
	Phrases        [][]string // each must occur at consecutive positions
	Exclude        []string
	ExcludePhrases [][]string
	Filter         *roaring.Bitmap       // when non-nil, only these ids
	Accept         func(id uint32) bool  // when non-nil, a further test per candidate
	Recency        func(id uint32) int64 // breaks score ties and orders unranked results (newest first); id order when nil
}

// Term is a ranked query term with its query-side weight (1 for a plain term).
type Term struct {
	Text   string
	Weight float32
}

// Hit is one ranked document.
type Hit struct {
	ID    uint32
	Score float32
	key   int64
}

// Result holds the best hits, best first, and how many documents matched.
type Result struct {
	Hits  []Hit
	Total int
}

// scratch is the per-query working memory, pooled: a dense score
// accumulator indexed by document id, and the ids it touched.
type scratch struct {
	acc     []float32
	req     []uint8
	touched []uint32
	buf     [256]uint32
	pos     [][]uint32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(n int) *scratch {
	sc := scratchPool.Get().(*scratch)
	if len(sc.acc) < n {
		sc.acc = make([]float32, n+n/4)
		sc.req = nil
	}
	return sc
}

func (sc *scratch) release() {
	for _, id := range sc.touched {
		sc.acc[id] = 0
		if sc.req != nil {
			sc.req[id] = 0
		}
	}
	sc.touched = sc.touched[:0]
	scratchPool.Put(sc)
}

// Search returns the k best documents for q. With neither terms nor phrases
// it returns the matching documents newest first, unscored.
func (ix *Index) Search(q *Query, k int) Result {
	if k <= 0 {
		return Result{}
	}
	excl := ix.excluded(q)
	if len(q.Terms) == 0 && len(q.Phrases) == 0 {
		return ix.browse(q, excl, k)
	}
	sc := getScratch(len(ix.lens))
	defer sc.release()

	k1, b := float32(ix.opts.K1), float32(ix.opts.B)
	norm0 := k1 * (1 - b)
	normL := k1 * b / float32(ix.avgLen())
	n := float64(ix.live.GetCardinality())

	for _, ph := range q.Phrases {
		docs, pfs := ix.phrase(ph, sc)
		if len(docs) == 0 {
			return Result{}
		}
		if sc.req == nil {
			sc.req = make([]uint8, len(sc.acc))
		}
		w := float32(idf(n, float64(len(docs)))) * (k1 + 1)
		for i, id := range docs {
			tf := float32(pfs[i])
			if sc.acc[id] == 0 {
				sc.touched = append(sc.touched, id)
			}
			sc.acc[id] += w * tf / (tf + norm0 + normL*float32(ix.lens[id]))
			sc.req[id]++
		}
	}
	for _, t := range q.Terms {
		li, ok := ix.dict[t.Text]
		if !ok || t.Weight <= 0 { // a zero score would touch a document twice
			continue
		}
		pl := &ix.lists[li]
		w := float32(idf(n, float64(pl.n))) * (k1 + 1) * t.Weight
		it := pl.iter()
		for {
			m, first := it.next(sc.buf[:])
			if m == 0 {
				break
			}
			tfs := pl.tfs[first : first+m]
			for j, id := range sc.buf[:m] {
				tf := float32(tfs[j])
				if sc.acc[id] == 0 {
					sc.touched = append(sc.touched, id)
				}
				sc.acc[id] += w * tf / (tf + norm0 + normL*float32(ix.lens[id]))
			}
		}
	}

	need := uint8(len(q.Phrases))
	var top topK
	top.init(k)
	total := 0
	for _, id := range sc.touched {
		if ix.lens[id] == 0 || (need > 0 && sc.req[id] != need) ||
			(excl != nil && excl.Contains(id)) ||
			(q.Filter != nil && !q.Filter.Contains(id)) ||
			(q.Accept != nil && !q.Accept(id)) {
			continue
		}
		total++
		h := Hit{ID: id, Score: sc.acc[id], key: int64(id)}
		if q.Recency != nil {
			h.key = q.Recency(id)
		}
		top.push(h)
	}
	return Result{Hits: top.sorted(), Total: total}
}

// idf is BM25's inverse document frequency, kept positive (Lucene's form).
func idf(n, df float64) float64 {
	if df > n {
		df = n
	}
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// excluded returns the union of the documents of excluded terms and phrases,
// or nil when the query excludes nothing.
func (ix *Index) excluded(q *Query) *roaring.Bitmap {
	if len(q.Exclude) == 0 && len(q.ExcludePhrases) == 0 {
		return nil
	}
	out := roaring.New()
	for _, t := range q.Exclude {
		if li, ok := ix.dict[t]; ok {
			out.Or(ix.lists[li].bitmap())
		}
	}
	if len(q.ExcludePhrases) > 0 {
		sc := getScratch(0)
		defer sc.release()
		for _, ph := range q.ExcludePhrases {
			docs, _ := ix.phrase(ph, sc)
			out.AddMany(docs)
		}
	}
	return out
}

// browse returns the newest k live documents that pass the query's filters.
func (ix *Index) browse(q *Query, excl *roaring.Bitmap, k int) Result {
	cand := ix.live
	if q.Filter != nil {
		cand = roaring.And(q.Filter, ix.live)
	}
	if excl != nil {
		cand = roaring.AndNot(cand, excl)
	}
	var top topK
	top.init(k)
	total := 0
	it := cand.ManyIterator()
	var buf [256]uint32
	for m := it.NextMany(buf[:]); m > 0; m = it.NextMany(buf[:]) {
		for _, id := range buf[:m] {
			if q.Accept != nil && !q.Accept(id) {
				continue
			}
			total++
			h := Hit{ID: id, key: int64(id)}
			if q.Recency != nil {
				h.key = q.Recency(id)
			}
			top.push(h)
		}
	}
	return Result{Hits: top.sorted(), Total: total}
}

// phrase returns the live documents where terms occur at consecutive
// positions, and how often. The slices are valid until the next call with sc.
func (ix *Index) phrase(terms []string, sc *scratch) (docs []uint32, counts []uint32) {
	lists := make([]*plist, len(terms))
	for i, t := range terms {
		li, ok := ix.dict[t]
		if !ok {
			return nil, nil
		}
		lists[i] = &ix.lists[li]
	}
	if len(lists) == 1 {
		pl := lists[0]
		it := pl.iter()
		for {
			m, first := it.next(sc.buf[:])
			if m == 0 {
				return docs, counts
			}
			for j, id := range sc.buf[:m] {
				if ix.lens[id] != 0 {
					docs = append(docs, id)
					counts = append(counts, uint32(pl.tfs[first+j]))
				}
			}
		}
	}
	bms := make([]*roaring.Bitmap, len(lists))
	for i, pl := range lists {
		bms[i] = pl.bitmap()
	}
	cand := roaring.FastAnd(bms...)
	for len(sc.pos) < len(lists) {
		sc.pos = append(sc.pos, nil)
	}
	it := cand.Iterator()
	for it.HasNext() {
		id := it.Next()
		if ix.lens[id] == 0 {
			continue
		}
		for i, pl := range lists {
			sc.pos[i] = pl.positions(pl.rank(id), sc.pos[i][:0])
		}
		if c := countPhrase(sc.pos[:len(lists)]); c > 0 {
			docs = append(docs, id)
			counts = append(counts, c)
		}
	}
	return docs, counts
}

// countPhrase counts the positions p of pos[0] such that p+i is in pos[i]
// for every i. Each list is sorted.
func countPhrase(pos [][]uint32) uint32 {
	cur := make([]int, len(pos))
	var c uint32
next:
	for _, p := range pos[0] {
		for i := 1; i < len(pos); i++ {
			want := p + uint32(i)
			l := pos[i]
			j := cur[i]
			for j < len(l) && l[j] < want {
				j++
			}
			cur[i] = j
			if j == len(l) {
				break next
			}
			if l[j] != want {
				continue next
			}
		}
		c++
	}
	return c
}

// topK keeps the k best hits in a min-heap (worst at the root).
type topK struct {
	h []Hit
	k int
}

func (t *topK) init(k int) { t.k, t.h = k, make([]Hit, 0, min(k, 1024)) }

func worse(a, b Hit) bool { return a.Score < b.Score || (a.Score == b.Score && a.key < b.key) }

func (t *topK) push(x Hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !worse(t.h[0], x) {
		return
	}
	t.h[0] = x
	t.down(0, len(t.h))
}

func (t *topK) down(i, n int) {
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(t.h[r], t.h[l]) {
			m = r
		}
		if !worse(t.h[m], t.h[i]) {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// sorted empties the heap into a best-first slice.
func (t *topK) sorted() []Hit {
	for n := len(t.h) - 1; n > 0; n-- {
		t.h[0], t.h[n] = t.h[n], t.h[0]
		t.down(0, n)
	}
	return t.h
}
