package engine

import (
	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/tokenizer"
)

// What another store needs to search as Search does (docs/store.md): the
// request compiled into the same terms, phrases, exclusions and filters,
// the words a record is indexed under, the test of phrases and exclusions
// on candidates, and the highlights.

// CompiledSearch is a SearchRequest as Search reads it.
type CompiledSearch struct {
	// Filters holds the query's filters merged with the request's (Source,
	// Channel as a slug, From, After inclusive, Before exclusive).
	Filters query.ParsedQuery
	// Terms are the ranked terms (any one matches), with their weights.
	Terms []index.Term
	// Phrases must all occur; Exclude and ExcludePhrases must not.
	Phrases, ExcludePhrases [][]string
	Exclude                 []string
	Offset, Limit           int // bounded as Search bounds them
	// Nothing is set when the query holds only punctuation: no record
	// matches, and that is not an error.
	Nothing bool

	compiled compiled // as Search runs it
}

// CompileSearch compiles req as Search does, with the same errors.
func CompileSearch(req query.SearchRequest) (*CompiledSearch, error) {
	pq, err := query.ParseQuery(req.Query)
	if err != nil {
		return nil, err
	}
	mergeFilter(&pq.Source, req.Source)
	mergeFilter(&pq.Channel, req.Channel)
	mergeFilter(&pq.From, req.From)
	if !req.After.IsZero() {
		pq.After = req.After
	}
	if !req.Before.IsZero() {
		pq.Before = req.Before
	}
	if pq.Empty() {
		return nil, invalidf("q: give a search term, a phrase or a filter")
	}
	a := searchAnalyzers.Get()
	c := a.compile(&pq, !req.NoTypos)
	searchAnalyzers.Put(a)
	if len(c.q.Phrases) > index.MaxPhrases || len(c.q.Exclude)+len(c.q.ExcludePhrases) > maxExclusions {
		return nil, invalidf("q: at most %d phrases and %d exclusions", index.MaxPhrases, maxExclusions)
	}
	out := &CompiledSearch{
		Filters: pq, Terms: c.q.Terms, Phrases: c.q.Phrases, ExcludePhrases: c.q.ExcludePhrases, Exclude: c.q.Exclude,
		Offset: min(max(req.Offset, 0), query.MaxSearchOffset), Limit: min(max(req.Limit, 1), query.MaxSearchLimit),
		compiled: c,
	}
	out.Nothing = len(c.q.Terms) == 0 && len(c.q.Phrases) == 0 && !pq.HasFilter()
	return out, nil
}

// Ranked reports whether the query has words or phrases to rank by;
// without them it lists what its filters match, newest first.
func (c *CompiledSearch) Ranked() bool { return len(c.Terms) > 0 || len(c.Phrases) > 0 }

// Highlight returns the HTML highlight of plain text (see MessagePlain and
// DocumentPlain) for this query's words, as Search's hits carry.
func (c *CompiledSearch) Highlight(plain string) string {
	a := searchAnalyzers.Get()
	defer searchAnalyzers.Put(a)
	return a.highlight(plain, c.compiled.marks, highlightChars)
}

// Candidate is a record a store found for a query that has phrases or
// excluded phrases to test: a message's content, or a document's title and
// body.
type Candidate struct {
	Title, Body string
	Document    bool
}

// Check reports, for each candidate, whether it holds every phrase of the
// query and none of its excluded words and phrases, as Search decides
// (phrases at consecutive positions of the analysed text, the parts of a
// compound counting one position each, never across a title and a body).
func (c *CompiledSearch) Check(cands []Candidate) []bool {
	ms := c.Match(cands)
	out := make([]bool, len(ms))
	for i, m := range ms {
		out[i] = m.OK
	}
	return out
}

// PhraseMatch is how a candidate meets a search's phrases.
type PhraseMatch struct {
	OK     bool  // it holds every phrase, and no excluded word or phrase
	Counts []int // how often it holds each phrase
}

// Match checks candidates as Check does, and counts what a store needs
// to score the phrases as Search does (PhraseScore).
func (c *CompiledSearch) Match(cands []Candidate) []PhraseMatch {
	out := make([]PhraseMatch, len(cands))
	if len(cands) == 0 {
		return out
	}
	ix := index.New(index.DefaultOptions())
	a := searchAnalyzers.Get()
	var d index.Doc
	all := roaring.New()
	for i, cd := range cands {
		if cd.Document {
			a.analyzeDocument(&d, &record.Document{Title: cd.Title, Content: cd.Body}, 1)
		} else {
			d.Reset()
			a.addField(&d, cd.Body, 0, 1)
		}
		ix.Add(uint32(i), &d, nil)
		all.Add(uint32(i))
	}
	searchAnalyzers.Put(a)
	q := index.Query{Phrases: c.Phrases, Exclude: c.Exclude, ExcludePhrases: c.ExcludePhrases, Filter: all}
	for _, h := range ix.Search(&q, len(cands)).Hits {
		out[h.ID].OK = true
	}
	for i := range out {
		out[i].Counts = make([]int, len(c.Phrases))
	}
	for p, ph := range c.Phrases {
		docs, counts := ix.Phrase(ph)
		for k, id := range docs {
			out[id].Counts[p] = int(counts[k])
		}
	}
	return out
}

// PhraseScore is what phrase p adds to the score of a document holding it
// count times, of length words, where n documents of avgLen words on
// average hold it df times in all: what Search adds for it.
func PhraseScore(n, df, count, length int, avgLen float64) float64 {
	return index.PhraseWeight(index.DefaultOptions(), float64(n), float64(df), count, length, avgLen)
}

// MessagePlain is the plain text of a message that highlights are cut from.
func MessagePlain(content string) string { return mdtext.PlainChat(content) }

// DocumentPlain is the plain text of a document that highlights are cut
// from (the Markdown of the first part of a long document rendered plain).
func DocumentPlain(d *record.Document) string {
	if d.Format != record.FormatMarkdown {
		return d.Content
	}
	return mdtext.Plain(markdownHead(d.Content))
}

// IndexTerms appends to dst the words text is indexed under, one per
// occurrence, each repeated weight times, as Search's index counts them:
// what a store that ranks by its own BM25 stores and ranks on. Words of a
// compound kept whole beside its parts are included.
func IndexTerms(dst []string, text string, weight int) []string {
	a := searchAnalyzers.Get()
	a.toks = a.Append(a.toks[:0], text, 0)
	for _, t := range a.toks {
		for range weight {
			dst = append(dst, t.Term)
		}
	}
	searchAnalyzers.Put(a)
	return dst
}

// Fold is how author names compare in filters and opt-outs.
func Fold(s string) string { return tokenizer.Fold(s) }
