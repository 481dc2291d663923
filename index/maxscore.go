package index

import (
	"cmp"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Ranked evaluation: document at a time, with dynamic pruning (MaxScore
// with block-max bounds, as PISA's block_max_maxscore).
//
// Every query clause (a term, or a term with its other-language stems and
// typo matches, which scores the best of them) has an upper bound of what
// it adds to any document's score: its weight times the best BM25
// saturation of its list's impacts (plist.go). Clauses are ordered
// by bound; once the top k is full, its worst score θ says which clauses
// cannot on their own lift a document into it: the longest prefix whose
// bounds sum below θ is non-essential. Candidates then come from the
// essential clauses alone, and the others are only probed for them.
//
// Each list is also cut into blocks of blockLen postings, each with its
// own bound (the best of the block's impacts). Where the
// bounds of every clause's block at a candidate sum below θ, the whole
// range those blocks share is skipped; a candidate whose essential score
// plus the block bounds of the clauses not yet probed falls below θ is
// dropped before they are.
//
// The results are exactly the exhaustive evaluation's: bounds are computed
// in float64 with a relative margin far above float32 rounding, a document
// is skipped only when its bound is strictly below θ (so ties still reach
// the top k, which orders them), and each hit's score is summed from its
// clauses in the exhaustive order (phrases, then terms in query order).
// Totals never come from scoring: they are the cardinality of a bitmap
// (see matching).

// noMore is a cursor's position past its list's end.
const noMore = math.MaxUint32

// slack is the relative margin of every bound over what float32 scoring
// can round a sum of up to MaxTerms+MaxPhrases contributions to.
const slack = 1 + 1e-4

// norms are a query's BM25 length normalisation: a posting of frequency tf
// in a document of length l scores w·tf/(tf + norm0 + normL·l).
type norms struct{ norm0, normL float32 }

// score is one posting's BM25 contribution; every evaluation computes it
// here, so equal inputs give bit-equal scores.
func (n norms) score(w, tf float32, length uint32) float32 {
	return w * tf / (tf + n.norm0 + n.normL*float32(length))
}

// bound is an upper bound of score for the postings whose impacts are xs.
func (n norms) bound(w float32, xs []impact) float64 {
	ub := 0.0
	for _, x := range xs {
		tf := float64(x.tf())
		ub = max(ub, tf/(tf+float64(n.norm0)+float64(n.normL)*float64(x.length())))
	}
	return float64(w) * ub * slack
}

// pcur walks the blocked ids of a postings list, one block decoded at a
// time, and skips blocks it need not decode.
type pcur struct {
	p    *plist
	w    float32 // the weight of the list's matches
	blk  int     // the decoded block (len(blocks) at the end)
	sb   int     // the block a shallow seek last found
	i, n int     // the current id in ids, and how many the block has
	doc  uint32  // ids[i], or noMore
	ubB  int     // the block whose bound ub holds
	ub   float64
	ids  [blockLen]uint32
	lens [blockLen]uint32
	tfs  [blockLen]uint8
	mult [blockLen / 64]uint64 // bit per posting: not one position
}

// multi reports whether posting i of the block has other than one position.
func (c *pcur) multi(i int) bool { return c.mult[i>>6]&(1<<(i&63)) != 0 }

func (c *pcur) reset(p *plist, w float32) {
	c.p, c.w, c.sb, c.ubB = p, w, 0, -1
	c.load(0)
}

// blockBound returns the bound of block b, computed once per block.
func (c *pcur) blockBound(b int, nm norms) float64 {
	if b != c.ubB {
		c.ubB, c.ub = b, nm.bound(c.w, c.p.impacts(b))
	}
	return c.ub
}

// load decodes block b.
func (c *pcur) load(b int) {
	p := c.p
	c.blk, c.i = b, 0
	if b >= p.blocks() {
		c.n, c.doc = 0, noMore
		return
	}
	off, end := int(p.block(b).off), len(p.data)
	if b+1 < p.blocks() {
		end = int(p.block(b + 1).off)
	}
	id := uint32(0)
	if b > 0 {
		id = p.block(b - 1).last
	}
	n, data := 0, p.data[off:end]
	c.mult = [blockLen / 64]uint64{}
	for j := 0; j < len(data); n++ {
		var x uint32
		x, j = uvarint32(data, j)
		id += x
		c.ids[n] = id
		x, j = uvarint32(data, j)
		c.lens[n], c.tfs[n] = x>>2, 1
		c.mult[n>>6] |= uint64(x>>1&1) << (n & 63)
		if x&1 != 0 {
			c.tfs[n] = data[j]
			j++
		}
	}
	c.n, c.doc = n, c.ids[0]
}

// uvarint32 decodes the uvarint at b[j] (of at most 32 bits, as Add writes
// them) and returns it with the offset after it.
func uvarint32(b []byte, j int) (uint32, int) {
	x := uint32(b[j])
	j++
	if x < 0x80 {
		return x, j
	}
	x &= 0x7f
	for s := 7; ; s += 7 {
		y := uint32(b[j])
		j++
		x |= (y & 0x7f) << s
		if y < 0x80 {
			return x, j
		}
	}
}

// next moves to the following posting.
func (c *pcur) next() {
	if c.i++; c.i < c.n {
		c.doc = c.ids[c.i]
		return
	}
	c.load(c.blk + 1)
}

// advance moves to the first posting whose id is at least t.
func (c *pcur) advance(t uint32) {
	if c.doc >= t {
		return
	}
	if c.p.block(c.blk).last < t {
		c.load(c.p.find(c.blk+1, t))
		if c.doc >= t {
			return
		}
	}
	lo, hi := c.i+1, c.n-1 // ids[hi] = last ≥ t
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.ids[m] < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	c.i, c.doc = lo, c.ids[lo]
}

// score is what the current posting scores.
func (c *pcur) score(nm norms) float32 { return nm.score(c.w, float32(c.tfs[c.i]), c.lens[c.i]) }

// shallow returns the block that holds, or would hold, id t, without
// decoding it: len(blocks) past the end. t must not decrease between calls.
func (c *pcur) shallow(t uint32) int {
	c.sb = c.p.find(max(c.sb, c.blk), t)
	return c.sb
}

// find returns the first block from b on whose last id is at least t,
// galloping: O(log distance).
func (p *plist) find(b int, t uint32) int {
	if p.more == nil {
		if b > 0 || p.last < t {
			return p.blocks()
		}
		return 0
	}
	bs := p.more.blocks
	if b >= len(bs) || bs[b].last >= t {
		return b
	}
	lo, step := b, 1 // bs[lo].last < t
	hi := lo + step
	for hi < len(bs) && bs[hi].last < t {
		lo, step = hi, step*2
		hi = lo + step
	}
	hi = min(hi, len(bs))
	for lo+1 < hi { // bs[lo].last < t; bs[hi].last ≥ t or hi = len
		m := int(uint(lo+hi) >> 1)
		if bs[m].last < t {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// clause is one ranked query term: the lists it matches (one, usually),
// scoring the best of them in a document.
type clause struct {
	m    []pcur
	ub   float64 // bounds what it adds to any document
	slot int     // its place in the exhaustive order of summation
	df   uint32  // its largest list's postings
}

// doc is the clause's current candidate: the least of its lists'.
func (c *clause) doc() uint32 {
	d := c.m[0].doc
	for i := 1; i < len(c.m); i++ {
		d = min(d, c.m[i].doc)
	}
	return d
}

// take returns what the clause scores in document d, which is its current
// one, and moves past it.
func (c *clause) take(d uint32, nm norms) float32 {
	var best float32
	for i := range c.m {
		m := &c.m[i]
		if m.doc != d {
			continue
		}
		if v := m.score(nm); v > best {
			best = v
		}
		m.next()
	}
	return best
}

// skip moves past document d, its current one, unscored.
func (c *clause) skip(d uint32) {
	for i := range c.m {
		if c.m[i].doc == d {
			c.m[i].next()
		}
	}
}

// advance moves every list to its first id at least t.
func (c *clause) advance(t uint32) {
	for i := range c.m {
		c.m[i].advance(t)
	}
}

// blockBound bounds what the clause adds to any document from d to end,
// and lowers end to where that bound stops holding. current says the
// clause's lists are positioned at or past d (an essential clause): a list
// past d holds nothing before its position; the others are sought
// shallowly.
func (c *clause) blockBound(d uint32, end *uint32, nm norms, current bool) float64 {
	ub := 0.0
	for i := range c.m {
		m := &c.m[i]
		b := m.blk
		if current {
			if m.doc != d {
				*end = min(*end, m.doc-1)
				continue
			}
		} else if b = m.shallow(d); b >= m.p.blocks() {
			continue
		}
		ub = max(ub, m.blockBound(b, nm))
		*end = min(*end, m.p.block(b).last)
	}
	return ub
}

// ranker holds one query's evaluation state.
type ranker struct {
	sc      *scratch
	cl      []clause
	nm      norms
	lens    []uint32
	ok      *roaring.Bitmap      // when non-nil, candidates must be in it
	accept  func(id uint32) bool // when non-nil, likewise
	top     *topK
	contrib []float32 // by slot (phrases first, then terms), for the candidate at hand
	has     []bool
}

// sum is the candidate's score, its contributions added in slot order,
// which it then clears.
func (r *ranker) sum() float32 {
	var s float32
	for i, ok := range r.has {
		if ok {
			s += r.contrib[i]
			r.has[i], r.contrib[i] = false, 0
		}
	}
	return s
}

func (r *ranker) put(slot int, v float32) { r.contrib[slot], r.has[slot] = v, true }

// maxScore offers to the top k every document of the clauses' lists that
// can enter it, in id order (see the comment at the top of the file).
func (r *ranker) maxScore() {
	cl, sc := r.cl, r.sc
	ord := sc.ord[:0]
	for i := range cl {
		ord = append(ord, i)
	}
	slices.SortFunc(ord, func(a, b int) int { return cmp.Compare(cl[a].ub, cl[b].ub) })
	prefix := append(sc.prefix[:0], 0) // prefix[i]: the bounds of ord[:i]
	for i, c := range ord {
		prefix = append(prefix, prefix[i]+cl[c].ub)
	}
	bnd := append(sc.bnd[:0], make([]float64, len(cl))...) // block bounds of the non-essential clauses over the region
	sc.ord, sc.prefix, sc.bnd = ord, prefix, bnd
	full, theta, e := false, 0.0, 0 // ord[e:] are essential
	// The region [from, end] is where the block bounds last computed hold:
	// bound for every clause, rem for the non-essential ones.
	var region struct {
		ok         bool
		end        uint32
		bound, rem float64
	}
	for {
		d := uint32(noMore)
		for _, i := range ord[e:] {
			d = min(d, cl[i].doc())
		}
		if d == noMore {
			return
		}
		if full {
			if !region.ok || d > region.end {
				bound, rem, end := 0.0, 0.0, uint32(noMore-1)
				for _, i := range ord[e:] {
					bound += cl[i].blockBound(d, &end, r.nm, true)
				}
				for j, i := range ord[:e] {
					bnd[j] = cl[i].blockBound(d, &end, r.nm, false)
					rem += bnd[j]
				}
				region.ok, region.end, region.bound, region.rem = true, end, bound+rem, rem
			}
			if region.bound < theta {
				// No document of the region can enter: skip it, and the
				// regions after it that the blocks' bounds rule out, before
				// decoding a block.
				t := r.skipFrom(region.end+1, theta)
				for _, i := range ord[e:] {
					cl[i].advance(t)
				}
				region.ok = false
				continue
			}
		}
		if (r.ok != nil && !r.ok.Contains(d)) || (r.accept != nil && !r.accept(d)) {
			for _, i := range ord[e:] {
				cl[i].skip(d)
			}
			continue
		}
		partial := 0.0
		for _, i := range ord[e:] {
			if c := &cl[i]; c.doc() == d {
				v := c.take(d, r.nm)
				r.put(c.slot, v)
				partial += float64(v)
			}
		}
		dropped, rem := false, region.rem
		for j := e - 1; j >= 0; j-- {
			if full && partial+rem < theta {
				dropped = true
				break
			}
			rem -= bnd[j]
			c := &cl[ord[j]]
			c.advance(d)
			if c.doc() == d {
				v := c.take(d, r.nm)
				r.put(c.slot, v)
				partial += float64(v)
			}
		}
		s := r.sum()
		if dropped {
			continue
		}
		r.top.offer(d, s)
		if len(r.top.h) == r.top.k {
			full, theta = true, float64(r.top.h[0].Score)
			for e < len(ord) && prefix[e+1] < theta {
				e++
				region.ok = false // its bounds were of other non-essential clauses
			}
			if e == len(ord) {
				return // no document can enter any more
			}
		}
	}
}

// skipFrom returns the first id from t on that the blocks' bounds of every
// clause (sought shallowly, none decoded) do not rule out of a top k whose
// worst score is theta; noMore when there is none.
func (r *ranker) skipFrom(t uint32, theta float64) uint32 {
	for t != noMore {
		bound, end := 0.0, uint32(noMore-1)
		for i := range r.cl {
			bound += r.cl[i].blockBound(t, &end, r.nm, false)
		}
		if bound >= theta || end == noMore-1 {
			return t
		}
		t = end + 1
	}
	return t
}

// exhaust scores every candidate of cand (ids of the clauses' lists or
// not) with phrase scores given, and offers those that pass accept: for a
// candidate set smaller than the lists, such as a phrase's.
func (r *ranker) exhaust(cand *roaring.Bitmap, phrases []phraseHits) (total int) {
	it := cand.ManyIterator()
	var buf [256]uint32
	at := make([]int, len(phrases))
	for m := it.NextMany(buf[:]); m > 0; m = it.NextMany(buf[:]) {
		for _, d := range buf[:m] {
			if r.accept != nil && !r.accept(d) {
				continue
			}
			total++
			for i, ph := range phrases {
				j := at[i]
				for ph.docs[j] < d {
					j++
				}
				at[i] = j
				r.put(i, r.nm.score(ph.w, float32(ph.counts[j]), r.lens[d]))
			}
			for i := range r.cl {
				c := &r.cl[i]
				if c.advance(d); c.doc() == d {
					r.put(c.slot, c.take(d, r.nm))
				}
			}
			r.top.offer(d, r.sum())
		}
	}
	return total
}

// phraseHits are the documents of a required phrase, with its counts in
// each and its weight.
type phraseHits struct {
	docs, counts []uint32
	w            float32
}
