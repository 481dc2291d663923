package index

import (
	"cmp"
	"slices"
)

// Typo tolerance. A query term may ask for the terms of the dictionary one
// or two edits away (Damerau–Levenshtein in its optimal-string-alignment
// form: a substitution, insertion, deletion or transposition of adjacent
// letters each cost one). Candidates come from the lexicon's buckets that
// share the term's first letter and whose lengths differ by at most the
// edits; each is checked by a banded dynamic program that stops as soon as
// every cell of a row exceeds the bound. (A Levenshtein automaton built per
// query word, as vellum's, costs 72 µs at one edit and 1.8 ms at two to
// build on this machine: more than the whole search; the check below costs
// tens of nanoseconds per candidate.)

// maxTypoMatches bounds the dictionary terms one query word is matched as.
const maxTypoMatches = 24

// TypoWeight is what a typo match of a word weighs against an exact match
// of it, per edit: a document that holds the word as typed outranks one
// that holds a word one edit away, which outranks two.
var TypoWeight = [3]float32{1, 0.85, 0.7}

// TypoRatio is how many times more documents a word one or two edits away
// must hold than the word as typed for it to be taken as what was meant:
// a word the index holds often is not corrected into a rarer one, nor
// into one of about its own frequency (the noisy-channel rule of spelling
// correction). A word in no document is always corrected.
const TypoRatio = 100

// typoMatch is a dictionary term within the edits of a query term.
type typoMatch struct {
	li   uint32
	dist uint8
}

// typoMatches returns the terms within edits of term (or of word, the form
// term was stemmed from, against the written forms the lexicon keeps),
// sharing its first letter, nearest first and then in the most documents;
// term itself is not among them.
//
// Only terms in more than minDF documents (deleted and hidden ones
// included: an upper bound of what a query counts) are considered.
func (ix *Index) typoMatches(term, word string, edits int, minDF int) []typoMatch {
	if edits <= 0 || minDF >= len(ix.lens) {
		return nil
	}
	var out []typoMatch
	var qbuf, cbuf [maxLexLen]rune
	exact, hasExact := ix.dict[term]
	scan := func(q string, fromWords bool) {
		qr := runesOf(qbuf[:0], q)
		if len(qr) == 0 || len(qr) >= maxLexLen {
			return
		}
		buckets := ix.lex.tier(minDF, fromWords)
		for n := max(len(qr)-edits, 1); n <= len(qr)+edits; n++ {
			b := buckets[lexKey{qr[0], uint16(n)}]
			if b == nil {
				continue
			}
			for i := range b.ids {
				li, text := b.at(i)
				if hasExact && li == exact {
					continue
				}
				// Which test first: a word the index holds rules out
				// most terms by their frequency; one it lacks, by spelling.
				if minDF > 0 && int(ix.lists[li].n) <= minDF {
					continue
				}
				d := osaWithin(qr, runesOf(cbuf[:0], text), edits)
				if d > edits || (minDF == 0 && ix.lists[li].n == 0) {
					continue
				}
				if fromWords && ix.lex.words[li] != string(text) {
					continue // written as itself since: the term was scanned
				}
				out = append(out, typoMatch{li, uint8(d)})
			}
		}
	}
	scan(term, false)
	if word != "" && word != term {
		scan(word, true)
	}
	slices.SortFunc(out, func(a, b typoMatch) int {
		if c := cmp.Compare(a.li, b.li); c != 0 {
			return c
		}
		return cmp.Compare(a.dist, b.dist)
	})
	out = slices.CompactFunc(out, func(a, b typoMatch) bool { return a.li == b.li })
	slices.SortFunc(out, func(a, b typoMatch) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		if c := cmp.Compare(ix.lists[b.li].n, ix.lists[a.li].n); c != 0 {
			return c
		}
		return cmp.Compare(a.li, b.li)
	})
	return out[:min(len(out), maxTypoMatches)]
}

// runesOf decodes s into dst, stopping at maxLexLen runes.
func runesOf[S string | []byte](dst []rune, s S) []rune {
	for _, r := range string(s) { // no copy of a []byte: the compiler ranges over it in place
		if len(dst) == maxLexLen {
			break
		}
		dst = append(dst, r)
	}
	return dst
}

// osaWithin returns the optimal-string-alignment distance of a and b when
// it is at most k, else k+1. Only the cells within k of the diagonal are
// computed, and it stops at the first row whose cells all exceed k.
func osaWithin(a, b []rune, k int) int {
	if d := len(a) - len(b); d > k || -d > k {
		return k + 1
	}
	const inf = 1 << 20
	var rows [3][maxLexLen + 1]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		cur[0] = i
		if lo > 1 {
			cur[lo-1] = inf
		}
		best := inf
		if lo == 1 {
			best = i
		}
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := prev[j-1] + cost
			if x := prev[j] + 1; x < v && j <= i-1+k {
				v = x
			}
			if x := cur[j-1] + 1; x < v {
				v = x
			}
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				if x := prev2[j-2] + 1; x < v {
					v = x
				}
			}
			cur[j] = v
			best = min(best, v)
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		if best > k {
			return k + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	if d := prev[len(b)]; d <= k {
		return d
	}
	return k + 1
}

// groupMember is one dictionary term a query term matches.
type groupMember struct {
	li uint32
	w  float32 // its weight: the term's, times its idf, less for a typo
}

// group returns the lists t matches in the index: its text and other
// analyses (Alts), and its typo matches, each with its weight (its idf
// times the term's, less for a typo, never above an exact match's); a
// list no document of the query's statistics holds (all hidden) is left
// out. It reports how typos were matched when t asks for them.
func (ix *Index) group(q *Query, t *Term, st *stats) ([]groupMember, TypoUse, bool) {
	k1 := float32(ix.opts.K1)
	var members []groupMember
	exactIDF, exactDF := float32(-1), 0
	seen := func(li uint32) bool {
		return slices.ContainsFunc(members, func(m groupMember) bool { return m.li == li })
	}
	for i := -1; i < len(t.Alts); i++ {
		text := t.Text
		if i >= 0 {
			text = t.Alts[i]
		}
		li, ok := ix.dict[text]
		if !ok || seen(li) {
			continue
		}
		df := st.df(&ix.lists[li])
		if df == 0 {
			continue
		}
		w := float32(idf(st.n, float64(df)))
		exactIDF, exactDF = max(exactIDF, w), exactDF+int(df)
		members = append(members, groupMember{li, w * (k1 + 1) * t.Weight})
	}
	var use TypoUse
	for _, m := range ix.typoMatches(t.Text, t.Word, int(t.Edits), exactDF*TypoRatio) {
		if seen(m.li) {
			continue
		}
		df := st.df(&ix.lists[m.li])
		if df == 0 || int(df) <= exactDF*TypoRatio || (q.NotTypo != nil && q.NotTypo(ix.terms[m.li])) {
			continue // the word as typed is common enough to be what was meant
		}
		w := float32(idf(st.n, float64(df)))
		if exactIDF >= 0 {
			w = min(w, exactIDF)
		}
		members = append(members, groupMember{m.li, w * TypoWeight[m.dist] * (k1 + 1) * t.Weight})
		use.Matches = append(use.Matches, ix.terms[m.li])
	}
	use.Text, use.ExactDF = t.Text, exactDF
	return members, use, t.Edits > 0
}
