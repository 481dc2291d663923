package analysis

import (
	"slices"
	"unicode"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/tokenizer"
)

// MaxExclusions bounds the -terms and -"phrases" of a query.
const MaxExclusions = 32

// Compiled is a parsed query analysed into index terms.
type Compiled struct {
	Query index.Query
	Marks map[string]bool // terms to highlight
	Words []string        // each ranked term's word as the query has it
	Langs []string        // the languages besides English it is analysed in
}

// Compile analyses the text parts of pq. Stop words are dropped from the
// ranked terms unless the query holds nothing else; phrases keep them.
// With typos, words long enough ask for typo-tolerant matches (typoEdits).
func (a *Analyzer) Compile(pq *query.ParsedQuery, typos bool) Compiled {
	c := Compiled{Marks: map[string]bool{}}
	c.Query.NotTypo = tokenizer.IsAnyStopWord
	a.toks = a.Append(a.toks[:0], pq.Text, 0)
	allStop := true
	for _, t := range a.toks {
		if t.Flags&tokenizer.Stop == 0 {
			allStop = false
			break
		}
	}
	weights := map[string]float32{}
	for _, t := range a.toks {
		if t.Flags&tokenizer.Stop != 0 && !allStop {
			continue
		}
		if _, seen := weights[t.Term]; !seen {
			term := index.Term{Text: t.Term, Word: t.Word}
			if typos {
				term.Edits = typoEdits(t)
			}
			c.Query.Terms = append(c.Query.Terms, term)
			c.Words = append(c.Words, pq.Text[t.Start:t.End])
		}
		weights[t.Term]++
		c.Marks[t.Term] = true
	}
	for i := range c.Query.Terms {
		c.Query.Terms[i].Weight = weights[c.Query.Terms[i].Text]
	}
	for _, p := range pq.Phrases {
		if ts := a.phraseTerms(p); len(ts) > 0 {
			c.Query.Phrases = append(c.Query.Phrases, ts)
			for _, t := range ts {
				c.Marks[t] = true
			}
		}
	}
	for _, x := range pq.Exclude {
		if ts := a.phraseTerms(x); len(ts) == 1 {
			c.Query.Exclude = append(c.Query.Exclude, ts[0])
		} else if len(ts) > 1 {
			c.Query.ExcludePhrases = append(c.Query.ExcludePhrases, ts)
		}
	}
	for _, x := range pq.ExcludePhrases {
		if ts := a.phraseTerms(x); len(ts) > 0 {
			c.Query.ExcludePhrases = append(c.Query.ExcludePhrases, ts)
		}
	}
	return c
}

// typoEdits is how many typos a match of the query word t may have: one
// for terms of 5 to 8 letters, two from 9; none for stop words, words
// with digits, identifiers kept whole and CJK bigrams.
func typoEdits(t tokenizer.Token) uint8 {
	if t.Flags&(tokenizer.Stop|tokenizer.Whole|tokenizer.CJK) != 0 {
		return 0
	}
	// The term is counted, not the word: a stem is what is matched, and
	// two edits in a stem of five letters would match anything.
	n := 0
	for _, r := range t.Term {
		if unicode.IsDigit(r) {
			return 0
		}
		n++
	}
	switch {
	case n >= 9:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}

// phraseTerms returns the terms of s at consecutive positions: compounds
// contribute their parts, which is how they are indexed position by position.
func (a *Analyzer) phraseTerms(s string) []string {
	a.toks = a.Append(a.toks[:0], s, 0)
	var ts []string
	for _, t := range a.toks {
		if t.Flags&tokenizer.Whole == 0 {
			ts = append(ts, t.Term)
		}
	}
	return ts
}

// QueryTerms analyses plain text (no search syntax) into the ranked terms
// of a query as a search does: stop words left out unless there is
// nothing else.
func QueryTerms(text string) []index.Term {
	a := Get()
	c := a.Compile(&query.ParsedQuery{Text: text}, false)
	Put(a)
	return c.Query.Terms
}

// InLanguages adds to c's ranked terms their analyses in langs, as
// alternatives, and drops words that are stop words in one of them
// (unless nothing else would be left).
func (a *Analyzer) InLanguages(c *Compiled, langs []string) {
	if len(langs) == 0 || len(c.Words) != len(c.Query.Terms) {
		return
	}
	terms := make([]index.Term, 0, len(c.Query.Terms))
	var alts []string
	for i, t := range c.Query.Terms {
		stop := false
		t.Alts = nil
		for _, lang := range langs {
			alt, isStop := a.TermIn(c.Words[i], lang)
			if isStop {
				stop = true
				break
			}
			if alt != t.Text && alt != "" && !slices.Contains(t.Alts, alt) {
				t.Alts = append(t.Alts, alt)
			}
		}
		if stop {
			continue
		}
		alts = append(alts, t.Alts...)
		terms = append(terms, t)
	}
	if len(terms) == 0 && len(c.Query.Phrases) == 0 {
		return // only stop words: keep them all, as Compile does
	}
	c.Query.Terms = terms
	c.Marks = WithMarks(c.Marks, alts)
}

// WithMarks returns marks with add marked too: a copy when add holds
// anything, so the compiled query's own set stays as compiled.
func WithMarks(marks map[string]bool, add []string) map[string]bool {
	if len(add) == 0 {
		return marks
	}
	out := make(map[string]bool, len(marks)+len(add))
	for t := range marks {
		out[t] = true
	}
	for _, t := range add {
		out[t] = true
	}
	return out
}
