package index

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Query is what Search evaluates. Terms are optional and ranked (BM25, any
// one of them suffices); every phrase is required; excluded terms and phrases
// remove documents; Filter and Accept restrict the candidates; Deny removes
// documents as exclusions do. Public removes the hidden documents (Hide) and
// ranks by the statistics of the others alone (hidden.go).
type Query struct {
	Terms          []Term
	Phrases        [][]string // each must occur at consecutive positions
	Exclude        []string
	ExcludePhrases [][]string
	Filter         *roaring.Bitmap        // when non-nil, only these ids
	Deny           *roaring.Bitmap        // when non-nil, never these ids (read, not changed)
	Accept         func(id uint32) bool   // when non-nil, a further test per candidate
	Recency        func(id uint32) int64  // breaks score ties and orders unranked results (newest first); id order when nil
	Tie            func(a, b uint32) int  // orders hits equal in score and recency (negative: a first); id order when nil
	Public         bool                   // for callers who may not see hidden documents
	NotTypo        func(term string) bool // when non-nil, terms never taken as a typo match (stop words)
}

// MaxPhrases bounds the required phrases of a query; callers reject more.
const MaxPhrases = 16

// MaxTerms bounds the ranked terms a search scores: beyond it, the terms in
// the most documents — which weigh least — are dropped, so a long query of
// common words cannot cost a scan of the index per word.
const MaxTerms = 128

// Term is a ranked query term with its query-side weight (1 for a plain
// term). A document scores for a term by the best of its matches: Text,
// the other analyses of the same word (Alts), and the dictionary terms
// within Edits typos of Text or of Word, each typo weighing less
// (TypoWeight) and never more than an exact match of the word would.
type Term struct {
	Text   string
	Weight float32
	Alts   []string // the word's stems in other languages
	Word   string   // the folded word Text is a stem of, when it differs
	Edits  uint8    // typos a match may have: 0, 1 or 2
}

// TypoUse tells how a query term with Edits was matched (Result.Typos).
type TypoUse struct {
	Text    string   // the term's Text
	ExactDF int      // documents holding Text or an Alt, as the query sees them
	Matches []string // the typo matches that hold documents, nearest first
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
	Typos []TypoUse // one per term with Edits
}

// scratch is the per-query working memory, pooled: a dense score
// accumulator indexed by document id, a bitset of the ids it touched, and
// dense bitsets for the filter and the exclusions.
type scratch struct {
	acc     []float32
	req     []uint8
	mark    []uint64 // bit per document: acc or req was touched
	allowed []uint64
	denied  []uint64
	buf     [256]uint32
	pos     [][]uint32
	curs    []cursor
	best    []float32 // a term's best match per document (scoreGroup)
	touched []uint32  // the documents best holds a score for
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch(n int) *scratch {
	sc := scratchPool.Get().(*scratch)
	if len(sc.acc) < n {
		sc.acc = make([]float32, n+n/4)
		sc.mark = make([]uint64, (len(sc.acc)+63)/64)
		sc.req = nil
	}
	return sc
}

func (sc *scratch) release() { scratchPool.Put(sc) }

// denseFrom fills dst (reused) with bm as a bitset of at least n bits.
func denseFrom(dst []uint64, bm *roaring.Bitmap, n int) []uint64 {
	words := max(int(bm.DenseSize()), (n+63)/64)
	if cap(dst) < words {
		dst = make([]uint64, words)
	} else {
		dst = dst[:words]
		clear(dst)
	}
	bm.WriteDenseTo(dst)
	return dst
}

func bitSet(bits []uint64, id uint32) bool {
	w := int(id >> 6)
	return w < len(bits) && bits[w]&(1<<(id&63)) != 0
}

// Search returns the k best documents for q. With neither terms nor phrases
// it returns the matching documents newest first, unscored.
//
// Scoring is term-at-a-time into a dense accumulator: O(postings of the
// query's terms), plus, for phrases, a position check of each candidate;
// a public query with hidden documents adds an intersection count per term.
func (ix *Index) Search(q *Query, k int) Result {
	if k <= 0 {
		return Result{}
	}
	// The scratch goes back to the pool only after a normal return, which
	// leaves it clear; one abandoned by a panic is dropped, not reused dirty.
	sc := getScratch(len(ix.lens))
	r := ix.search(q, k, sc)
	sc.release()
	return r
}

func (ix *Index) search(q *Query, k int, sc *scratch) Result {
	var denied []uint64
	if excl := ix.removed(q, sc); excl != nil {
		sc.denied = denseFrom(sc.denied, excl, len(ix.lens))
		denied = sc.denied
	}
	if len(q.Terms) == 0 && len(q.Phrases) == 0 {
		return ix.browse(q, denied, k)
	}
	if len(q.Phrases) > MaxPhrases {
		panic("BUG: more phrases than MaxPhrases reached the index")
	}

	st := ix.statsFor(q)
	terms := ix.rarest(q.Terms, MaxTerms, &st)
	k1, b := float32(ix.opts.K1), float32(ix.opts.B)
	norm0 := k1 * (1 - b)
	normL := k1 * b / float32(st.avgLen)
	n := st.n
	// Accumulate, marking each touched document in a bitset.
	mark := sc.mark
	for _, ph := range q.Phrases {
		docs, pfs := ix.phrase(ph, sc)
		if len(docs) == 0 {
			sc.clear(len(ix.lens))
			return Result{}
		}
		if sc.req == nil {
			sc.req = make([]uint8, len(sc.acc))
		}
		w := float32(idf(n, float64(st.phraseDF(docs)))) * (k1 + 1)
		for i, id := range docs {
			tf := float32(pfs[i])
			sc.acc[id] += w * tf / (tf + norm0 + normL*float32(ix.lens[id]))
			mark[id>>6] |= 1 << (id & 63)
			sc.req[id]++
		}
	}
	var typos []TypoUse
	for _, t := range terms {
		if t.Weight <= 0 {
			continue
		}
		if len(t.Alts) > 0 || t.Edits > 0 {
			if u, ok := ix.scoreGroup(q, &t, &st, sc); ok {
				typos = append(typos, u)
			}
			continue
		}
		li, ok := ix.dict[t.Text]
		if !ok {
			continue
		}
		pl := &ix.lists[li]
		ix.accumulate(pl, float32(idf(n, float64(st.df(pl))))*(k1+1)*t.Weight, norm0, normL, sc)
	}

	// Collect, clearing the scratch as it goes.
	var allowed []uint64
	if q.Filter != nil {
		sc.allowed = denseFrom(sc.allowed, q.Filter, len(ix.lens))
		allowed = sc.allowed
	}
	need := uint8(len(q.Phrases)) // at most MaxPhrases, so no overflow
	var top topK
	top.init(k, q.Recency, q.Tie)
	total := 0
	for wi, word := range mark[:(len(ix.lens)+63)/64] {
		if word == 0 {
			continue
		}
		mark[wi] = 0
		for ; word != 0; word &= word - 1 {
			id := uint32(wi<<6 + bits.TrailingZeros64(word))
			s := sc.acc[id]
			sc.acc[id] = 0
			if need > 0 {
				ok := sc.req[id] == need
				sc.req[id] = 0
				if !ok {
					continue
				}
			}
			if ix.lens[id] == 0 || (denied != nil && bitSet(denied, id)) ||
				(allowed != nil && !bitSet(allowed, id)) || (q.Accept != nil && !q.Accept(id)) {
				continue
			}
			total++
			top.offer(id, s)
		}
	}
	return Result{Hits: top.sorted(), Total: total, Typos: typos}
}

// accumulate adds each posting's BM25 contribution, w times the saturated
// and length-normalised term frequency, to the scratch's accumulator.
func (ix *Index) accumulate(pl *plist, w, norm0, normL float32, sc *scratch) {
	it := pl.iter()
	acc, mark, lens := sc.acc, sc.mark, ix.lens
	for {
		m, first := it.next(sc.buf[:])
		if m == 0 {
			return
		}
		tfs := pl.tfs[first : first+m]
		for j, id := range sc.buf[:m] {
			tf := float32(tfs[j])
			acc[id] += w * tf / (tf + norm0 + normL*float32(lens[id]))
			mark[id>>6] |= 1 << (id & 63)
		}
	}
}

// clear zeroes what an abandoned query accumulated over n documents.
func (sc *scratch) clear(n int) {
	for wi, word := range sc.mark[:(n+63)/64] {
		sc.mark[wi] = 0
		for ; word != 0; word &= word - 1 {
			id := wi<<6 + bits.TrailingZeros64(word)
			sc.acc[id] = 0
			if sc.req != nil {
				sc.req[id] = 0
			}
		}
	}
}

// rarest returns terms, or the max of them in the fewest documents as st
// counts them.
func (ix *Index) rarest(terms []Term, max int, st *stats) []Term {
	if len(terms) <= max {
		return terms
	}
	type ranked struct {
		t  Term
		df uint32
	}
	rs := make([]ranked, len(terms))
	for i, t := range terms {
		rs[i].t = t
		if li, ok := ix.dict[t.Text]; ok {
			rs[i].df = st.df(&ix.lists[li])
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return cmp.Compare(a.df, b.df) })
	out := make([]Term, max)
	for i := range out {
		out[i] = rs[i].t
	}
	return out
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
func (ix *Index) excluded(q *Query, sc *scratch) *roaring.Bitmap {
	if len(q.Exclude) == 0 && len(q.ExcludePhrases) == 0 {
		return nil
	}
	out := roaring.New()
	for _, t := range q.Exclude {
		if li, ok := ix.dict[t]; ok {
			out.Or(ix.lists[li].bitmap())
		}
	}
	for _, ph := range q.ExcludePhrases {
		docs, _ := ix.phrase(ph, sc)
		out.AddMany(docs)
	}
	return out
}

// removed returns the union of what q removes: its exclusions, Deny and,
// when public, the hidden documents; nil for nothing. It may be Deny or the
// hidden set itself: the caller only reads it.
func (ix *Index) removed(q *Query, sc *scratch) *roaring.Bitmap {
	out := ix.excluded(q, sc)
	owned := out != nil
	var veil *roaring.Bitmap
	if q.Public {
		veil = ix.veil.public()
	}
	for _, bm := range [...]*roaring.Bitmap{q.Deny, veil} {
		switch {
		case bm == nil:
		case out == nil:
			out = bm
		case owned:
			out.Or(bm)
		default:
			out, owned = roaring.Or(out, bm), true
		}
	}
	return out
}

// browse returns the newest k live documents that pass the query's filters.
func (ix *Index) browse(q *Query, denied []uint64, k int) Result {
	cand := ix.live
	if q.Filter != nil {
		cand = roaring.And(q.Filter, ix.live)
	}
	var top topK
	top.init(k, q.Recency, q.Tie)
	total := 0
	it := cand.ManyIterator()
	var buf [256]uint32
	for m := it.NextMany(buf[:]); m > 0; m = it.NextMany(buf[:]) {
		for _, id := range buf[:m] {
			if (denied != nil && bitSet(denied, id)) || (q.Accept != nil && !q.Accept(id)) {
				continue
			}
			total++
			top.offer(id, 0)
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
	sc.curs = sc.curs[:0]
	for _, pl := range lists {
		sc.curs = append(sc.curs, newCursor(pl))
	}
	it := cand.ManyIterator()
	var buf [256]uint32
	for m := it.NextMany(buf[:]); m > 0; m = it.NextMany(buf[:]) {
		for _, id := range buf[:m] {
			if ix.lens[id] == 0 {
				continue
			}
			if ix.opts.NoPositions { // no positions: every term present is a match
				docs = append(docs, id)
				counts = append(counts, 1)
				continue
			}
			for i := range lists {
				c := &sc.curs[i]
				sc.pos[i] = c.positions(c.seek(id), sc.pos[i][:0])
			}
			if c := countPhrase(sc.pos[:len(lists)]); c > 0 {
				docs = append(docs, id)
				counts = append(counts, c)
			}
		}
	}
	return docs, counts
}

// countPhrase counts the positions p of pos[0] such that p+i is in pos[i]
// for every i. Each list is sorted.
func countPhrase(pos [][]uint32) uint32 {
	var cur [16]int
	var c uint32
next:
	for _, p := range pos[0] {
		for i := 1; i < len(pos); i++ {
			want := p + uint32(i)
			l := pos[i]
			j := 0
			if i < len(cur) {
				j = cur[i]
			}
			for j < len(l) && l[j] < want {
				j++
			}
			if i < len(cur) {
				cur[i] = j
			}
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

// topK keeps the k best hits in a min-heap (worst at the root). The
// tie-breaking key is computed only for hits that enter the heap or tie
// with its worst, so a query over many candidates rarely calls it.
type topK struct {
	h      []Hit
	k      int
	keyFor func(uint32) int64
	tie    func(a, b uint32) int
}

func (t *topK) init(k int, keyFor func(uint32) int64, tie func(a, b uint32) int) {
	t.k, t.h, t.keyFor, t.tie = k, make([]Hit, 0, min(k, 1024)), keyFor, tie
}

func (t *topK) key(id uint32) int64 {
	if t.keyFor == nil {
		return int64(id)
	}
	return t.keyFor(id)
}

// worse reports whether a ranks below b: a lower score, then an older
// key, then the tie order — a total order, so equal hits come out the
// same way whatever order they were offered in.
func (t *topK) worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	if a.key != b.key {
		return a.key < b.key
	}
	if t.tie != nil {
		if c := t.tie(a.ID, b.ID); c != 0 {
			return c > 0
		}
	}
	return a.ID > b.ID
}

func (t *topK) offer(id uint32, score float32) {
	if len(t.h) == t.k && score < t.h[0].Score {
		return
	}
	x := Hit{ID: id, Score: score, key: t.key(id)}
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !t.worse(t.h[0], x) {
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
		if r := l + 1; r < n && t.worse(t.h[r], t.h[l]) {
			m = r
		}
		if !t.worse(t.h[m], t.h[i]) {
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

// Phrase returns the live documents where terms occur at consecutive
// positions and how often in each (copies, the caller's to keep).
func (ix *Index) Phrase(terms []string) (docs, counts []uint32) {
	sc := getScratch(len(ix.lens))
	d, c := ix.phrase(terms, sc)
	docs, counts = slices.Clone(d), slices.Clone(c)
	sc.release()
	return docs, counts
}

// PhraseWeight is what a phrase adds to a document's score, as Search
// scores it: BM25 of the phrase as one term, held by df of n documents,
// count times in this one of length n words against avgLen on average.
func PhraseWeight(o Options, n, df float64, count, length int, avgLen float64) float64 {
	if count == 0 {
		return 0
	}
	k1, b := float64(o.K1), float64(o.B)
	tf := float64(count)
	return idf(n, df) * (k1 + 1) * tf / (tf + k1*(1-b) + k1*b*float64(length)/avgLen)
}
