package index

import (
	"cmp"
	"math"
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
	// Exhaustive scores every posting and counts every match, without
	// pruning: the reference the pruned evaluation equals, for tests and
	// benchmarks. O(documents).
	Exhaustive bool
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
	key   int64 // the tie-breaking key, once keyed
	keyed bool
}

// Result holds the best hits, best first, and how many documents matched.
type Result struct {
	Hits  []Hit
	Total int
	Typos []TypoUse // one per term with Edits
}

// scratch is the per-query working memory, pooled.
type scratch struct {
	pos     [][]uint32
	curs    []cursor
	pcurs   []pcur // the ranked evaluation's (maxscore.go)
	members []groupMember
	clauses []clause
	ord     []int
	prefix  []float64
	bnd     []float64
	contrib []float32
	has     []bool
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// release returns sc to the pool, holding on to no index's lists.
func (sc *scratch) release() {
	for i := range sc.pcurs {
		sc.pcurs[i].p = nil
	}
	for i := range sc.curs {
		sc.curs[i].pc.p = nil
	}
	scratchPool.Put(sc)
}

// Search returns the k best documents for q. With neither terms nor phrases
// it returns the matching documents newest first, unscored.
//
// Ranked terms are evaluated document at a time with dynamic pruning
// (maxscore.go): the cost grows with the postings of the query's rarest
// terms and with k far more than with the corpus. Required phrases are
// found by a position check of every document holding all their terms,
// then those documents alone are scored. The total is the size of a bitmap
// (matching), never a count of scored documents.
func (ix *Index) Search(q *Query, k int) Result {
	if k <= 0 {
		return Result{}
	}
	sc := getScratch()
	var r Result
	if q.Exhaustive {
		r = ix.searchExhaustive(q, k, sc)
	} else {
		r = ix.search(q, k, sc)
	}
	sc.release()
	return r
}

func (ix *Index) search(q *Query, k int, sc *scratch) Result {
	removed := ix.removed(q, sc)
	if len(q.Terms) == 0 && len(q.Phrases) == 0 {
		return ix.browse(q, removed, k)
	}
	if len(q.Phrases) > MaxPhrases {
		panic("BUG: more phrases than MaxPhrases reached the index")
	}
	st := ix.statsFor(q)
	k1, b := float32(ix.opts.K1), float32(ix.opts.B)
	nm := norms{norm0: k1 * (1 - b), normL: k1 * b / float32(st.avgLen)}
	var phrases []phraseHits
	for _, ph := range q.Phrases {
		docs, counts := ix.phrase(ph, sc)
		if len(docs) == 0 {
			return Result{}
		}
		phrases = append(phrases, phraseHits{docs, counts, float32(idf(st.n, float64(st.phraseDF(docs)))) * (k1 + 1)})
	}
	r := ranker{sc: sc, nm: nm, lens: ix.lens, accept: q.Accept, top: &topK{}}
	r.top.init(k, q.Recency, q.Tie)
	var typos []TypoUse
	members := sc.members[:0]
	type span struct{ slot, from, to int }
	var spans []span
	for slot, t := range ix.rarest(q.Terms, MaxTerms, &st) {
		if t.Weight <= 0 {
			continue
		}
		from := len(members)
		ms, u, ok := ix.group(q, &t, &st)
		if ok {
			typos = append(typos, u)
		}
		members = append(members, ms...)
		if len(members) > from {
			spans = append(spans, span{len(phrases) + slot, from, len(members)})
		}
	}
	sc.members = members
	if cap(sc.pcurs) < len(members) {
		sc.pcurs = make([]pcur, len(members))
	}
	curs := sc.pcurs[:len(members)]
	r.cl = sc.clauses[:0]
	for _, sp := range spans {
		c := clause{m: curs[sp.from:sp.to], slot: sp.slot}
		for i, m := range members[sp.from:sp.to] {
			pl := &ix.lists[m.li]
			c.m[i].reset(pl, m.w)
			c.ub = max(c.ub, nm.bound(m.w, pl.top()))
			c.df = max(c.df, pl.n)
		}
		r.cl = append(r.cl, c)
	}
	sc.clauses = r.cl
	slots := len(phrases) + len(q.Terms)
	r.contrib, r.has = resize(sc.contrib, slots), resize(sc.has, slots)
	sc.contrib, sc.has = r.contrib, r.has

	if len(r.cl) == 0 && len(phrases) == 0 {
		return Result{Typos: typos}
	}
	if len(phrases) == 0 && q.Filter == nil && removed == nil && ix.dead == 0 && q.Accept == nil {
		// Unfiltered: the total is the union's size, counted without
		// building it when the lists are long.
		if n := unionCount(r.cl); n > 512 {
			r.maxScore()
			return Result{Hits: r.top.sorted(), Total: n, Typos: typos}
		}
	}
	cand := ix.matching(q, r.cl, phrases, removed)
	total := 0
	n := int(cand.GetCardinality())
	rarest := uint32(math.MaxUint32)
	for _, c := range r.cl {
		rarest = min(rarest, c.df)
	}
	if len(phrases) > 0 || n <= 512 || uint32(n) <= rarest/4 {
		// Few candidates (a phrase's, a narrow filter's): score them all.
		total = r.exhaust(cand, phrases)
	} else {
		if q.Filter != nil || removed != nil || ix.dead > 0 {
			r.ok = cand
		}
		total = n
		if q.Accept != nil {
			total = countAccepted(cand, q.Accept)
		}
		r.maxScore()
	}
	return Result{Hits: r.top.sorted(), Total: total, Typos: typos}
}

// resize returns s with n zero elements, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// matching returns the documents q matches: those of every phrase, or
// else of any clause, live, in the filter and not removed.
// Its cardinality is the query's total (before Accept). The bitmap may be
// a list's own: the caller only reads it. A roaring union or intersection
// costs a pass over the lists' containers (a 64th of the postings of a
// common term held as a bitmap container, its postings as an array
// container), whatever k.
func (ix *Index) matching(q *Query, cl []clause, phrases []phraseHits, removed *roaring.Bitmap) *roaring.Bitmap {
	var m *roaring.Bitmap
	owned := false
	switch {
	case len(phrases) > 0:
		m, owned = roaring.BitmapOf(phrases[0].docs...), true
		for _, ph := range phrases[1:] {
			m.And(roaring.BitmapOf(ph.docs...))
		}
	case len(cl) == 1 && len(cl[0].m) == 1:
		m = cl[0].m[0].p.bitmap()
	default:
		var bms []*roaring.Bitmap
		for _, c := range cl {
			for _, pc := range c.m {
				bms = append(bms, pc.p.bitmap())
			}
		}
		m, owned = roaring.FastOr(bms...), true
	}
	and := func(x *roaring.Bitmap, not bool) {
		switch {
		case owned && not:
			m.AndNot(x)
		case owned:
			m.And(x)
		case not:
			m = roaring.AndNot(m, x)
		default:
			m = roaring.And(m, x)
		}
		owned = true
	}
	if ix.dead > 0 && len(phrases) == 0 {
		and(ix.live, false)
	}
	if q.Filter != nil {
		and(q.Filter, false)
	}
	if removed != nil {
		and(removed, true)
	}
	return m
}

// unionCount returns how many documents the clauses' lists hold together:
// the longest list's count, plus the union of the others less what they
// share with it, so the longest list is read (AndCardinality) but never
// copied.
func unionCount(cl []clause) int {
	var lists []*plist
	for _, c := range cl {
		for i := range c.m {
			lists = append(lists, c.m[i].p)
		}
	}
	long := 0
	for i, p := range lists {
		if p.n > lists[long].n {
			long = i
		}
	}
	l := lists[long]
	lists = slices.Delete(lists, long, long+1)
	switch len(lists) {
	case 0:
		return int(l.n)
	case 1:
		return int(l.bitmap().OrCardinality(lists[0].bitmap()))
	}
	bms := make([]*roaring.Bitmap, len(lists))
	for i, p := range lists {
		bms[i] = p.bitmap()
	}
	rest := roaring.FastOr(bms...)
	return int(uint64(l.n) + rest.GetCardinality() - rest.AndCardinality(l.bitmap()))
}

// countAccepted counts the documents of set that pass accept.
func countAccepted(set *roaring.Bitmap, accept func(uint32) bool) int {
	n := 0
	it := set.ManyIterator()
	var buf [256]uint32
	for m := it.NextMany(buf[:]); m > 0; m = it.NextMany(buf[:]) {
		for _, id := range buf[:m] {
			if accept(id) {
				n++
			}
		}
	}
	return n
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
func (ix *Index) browse(q *Query, removed *roaring.Bitmap, k int) Result {
	cand := ix.live
	if q.Filter != nil {
		cand = roaring.And(q.Filter, ix.live)
	}
	if removed != nil {
		cand = roaring.AndNot(cand, removed)
	}
	var top topK
	top.init(k, q.Recency, q.Tie)
	total := 0
	it := cand.ManyIterator()
	var buf [256]uint32
	for m := it.NextMany(buf[:]); m > 0; m = it.NextMany(buf[:]) {
		for _, id := range buf[:m] {
			if q.Accept != nil && !q.Accept(id) {
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
		lists[0].postings(func(id uint32, tf uint8, _ uint32) {
			if ix.lens[id] != 0 {
				docs = append(docs, id)
				counts = append(counts, uint32(tf))
			}
		})
		return docs, counts
	}
	bms := make([]*roaring.Bitmap, len(lists))
	for i, pl := range lists {
		bms[i] = pl.bitmap()
	}
	cand := roaring.FastAnd(bms...)
	for len(sc.pos) < len(lists) {
		sc.pos = append(sc.pos, nil)
	}
	if cap(sc.curs) < len(lists) {
		sc.curs = make([]cursor, len(lists))
	}
	sc.curs = sc.curs[:len(lists)]
	for i, pl := range lists {
		sc.curs[i].reset(pl)
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
// tie-breaking key is computed only for hits that tie with another in
// score, so a query over many candidates rarely calls it (each call may
// read a record far from the last).
type topK struct {
	h      []Hit
	k      int
	keyFor func(uint32) int64
	tie    func(a, b uint32) int
}

func (t *topK) init(k int, keyFor func(uint32) int64, tie func(a, b uint32) int) {
	t.k, t.h, t.keyFor, t.tie = k, make([]Hit, 0, min(k, 1024)), keyFor, tie
}

func (t *topK) key(h *Hit) int64 {
	if !h.keyed {
		h.key, h.keyed = int64(h.ID), true
		if t.keyFor != nil {
			h.key = t.keyFor(h.ID)
		}
	}
	return h.key
}

// worse reports whether a ranks below b: a lower score, then an older
// key, then the tie order — a total order, so equal hits come out the
// same way whatever order they were offered in.
func (t *topK) worse(a, b *Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	if t.key(a) != t.key(b) {
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
	x := Hit{ID: id, Score: score}
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.worse(&t.h[i], &t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !t.worse(&t.h[0], &x) {
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
		if r := l + 1; r < n && t.worse(&t.h[r], &t.h[l]) {
			m = r
		}
		if !t.worse(&t.h[m], &t.h[i]) {
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
	sc := getScratch()
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
