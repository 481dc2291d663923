package ann

import "slices"

// Result is a scored id.
type Result struct {
	ID    uint32
	Score float32
}

// topK keeps the k best results in dst as a min-heap (worst at index 0).
type topK struct {
	h []Result
	k int
}

func newTopK(dst []Result, k int) topK { return topK{h: dst[:0], k: k} }

// min is the score a result must beat to enter, once the heap is full.
func (t *topK) full() bool { return len(t.h) == t.k }

func (t *topK) push(id uint32, s float32) {
	if len(t.h) < t.k {
		t.h = append(t.h, Result{id, s})
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !less(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !less(t.h[0], Result{id, s}) {
		return
	}
	t.h[0] = Result{id, s}
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(t.h) {
			return
		}
		m := l
		if r := l + 1; r < len(t.h) && less(t.h[r], t.h[l]) {
			m = r
		}
		if !less(t.h[m], t.h[i]) {
			return
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// less orders results worst first: lower score, then higher id.
func less(a, b Result) bool { return a.Score < b.Score || (a.Score == b.Score && a.ID > b.ID) }

// sorted returns the results best first.
func (t *topK) sorted() []Result {
	slices.SortFunc(t.h, func(a, b Result) int {
		switch {
		case less(b, a):
			return -1
		case less(a, b):
			return 1
		}
		return 0
	})
	return t.h
}

// scan scores each allowed vector of a contiguous run (ids[i]'s vector is
// vecs[i*d:(i+1)*d]) against q and keeps the best in top.
func scan(q []float32, ids []uint32, vecs []float32, d int, flt *filter, top *topK) {
	for p, id := range ids {
		if !flt.ok(id) {
			continue
		}
		score := Dot(q, vecs[p*d:p*d+d])
		if !top.full() || score > top.h[0].Score {
			top.push(id, score)
		}
	}
}
