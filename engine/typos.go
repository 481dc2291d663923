package engine

import (
	"cmp"
	"slices"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/query"
)

// maxCorrectionMatches bounds the words a correction names.
const maxCorrectionMatches = 3

// typoNotes gathers, across the message and document indexes, how a
// search's words were matched with typos.
type typoNotes struct {
	exact   map[string]int            // query term -> documents holding it as written
	words   map[string]map[string]int // query term -> written form of a typo match -> its documents
	matched map[string]bool           // every typo-matched term, for highlights
}

// add notes one index's typo matches. The caller holds mu.RLock.
func (n *typoNotes) add(ix *index.Index, uses []index.TypoUse) {
	for _, u := range uses {
		if n.exact == nil {
			n.exact, n.words, n.matched = map[string]int{}, map[string]map[string]int{}, map[string]bool{}
		}
		n.exact[u.Text] += u.ExactDF
		for _, m := range u.Matches {
			n.matched[m] = true
			if n.words[u.Text] == nil {
				n.words[u.Text] = map[string]int{}
			}
			n.words[u.Text][ix.Word(m)] += ix.DocFreq(m)
		}
	}
}

// corrections names the query words found as written in no document the
// caller may see but found with typos, in query order.
func (n *typoNotes) corrections(terms []index.Term) []query.Correction {
	var out []query.Correction
	for _, t := range terms {
		ws := n.words[t.Text]
		if n.exact[t.Text] > 0 || len(ws) == 0 {
			continue
		}
		word := t.Word
		if word == "" {
			word = t.Text
		}
		c := query.Correction{Word: word}
		for w := range ws {
			c.Matches = append(c.Matches, w)
		}
		slices.SortFunc(c.Matches, func(a, b string) int {
			if d := cmp.Compare(ws[b], ws[a]); d != 0 {
				return d
			}
			return cmp.Compare(a, b)
		})
		c.Matches = c.Matches[:min(len(c.Matches), maxCorrectionMatches)]
		out = append(out, c)
	}
	return out
}
