package analysis

import (
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// What a store needs to search as the memory store does (docs/store.md): the
// request compiled into the same terms, phrases, exclusions and filters,
// the words a record is indexed under, the test of phrases and exclusions
// on candidates, and the highlights.

// CompiledSearch is a SearchRequest as the stores read it.
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

	compiled Compiled // as the memory store runs it
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
	a := Get()
	c := a.Compile(&pq, !req.NoTypos)
	Put(a)
	if len(c.Query.Phrases) > index.MaxPhrases || len(c.Query.Exclude)+len(c.Query.ExcludePhrases) > MaxExclusions {
		return nil, invalidf("q: at most %d phrases and %d exclusions", index.MaxPhrases, MaxExclusions)
	}
	out := &CompiledSearch{
		Filters: pq, Terms: c.Query.Terms, Phrases: c.Query.Phrases, ExcludePhrases: c.Query.ExcludePhrases, Exclude: c.Query.Exclude,
		Offset: min(max(req.Offset, 0), query.MaxSearchOffset), Limit: min(max(req.Limit, 1), query.MaxSearchLimit),
		compiled: c,
	}
	out.Nothing = len(c.Query.Terms) == 0 && len(c.Query.Phrases) == 0 && !pq.HasFilter()
	return out, nil
}

// Analysed returns the query as compiled, for a store that runs it on the
// index package (the memory store): a copy whose fields the caller may
// replace, but whose maps and slices it must not change in place.
func (c *CompiledSearch) Analysed() Compiled { return c.compiled }

func mergeFilter(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

// invalidf returns a record.ErrInvalid with a message for the caller.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", record.ErrInvalid, fmt.Sprintf(format, args...))
}

// Ranked reports whether the query has words or phrases to rank by;
// without them it lists what its filters match, newest first.
func (c *CompiledSearch) Ranked() bool { return len(c.Terms) > 0 || len(c.Phrases) > 0 }

// Highlight returns the snippet of plain text (see MessagePlain and
// DocumentPlain) with this query's words marked, as Search's hits carry.
func (c *CompiledSearch) Highlight(plain string) query.Snippet {
	a := Get()
	defer Put(a)
	return a.Highlight(plain, c.compiled.Marks, HighlightChars)
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
	a := Get()
	var d index.Doc
	all := roaring.New()
	for i, cd := range cands {
		if cd.Document {
			a.Document(&d, cd.Title, cd.Body, 1)
		} else {
			d.Reset()
			a.AddField(&d, cd.Body, 0, 1)
		}
		ix.Add(uint32(i), &d, nil)
		all.Add(uint32(i))
	}
	Put(a)
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
	return mdtext.Plain(MarkdownHead(d.Content))
}

// PlainInput bounds how much of a Markdown document becomes plain text for
// its snippet: a match further in than HighlightScan is not highlighted
// anyway, and turning a megabyte of Markdown into text costs milliseconds.
const PlainInput = 2 * HighlightScan

// MarkdownHead is the first PlainInput bytes of Markdown md, cut at a line
// break.
func MarkdownHead(md string) string {
	if len(md) <= PlainInput {
		return md
	}
	md = md[:PlainInput]
	if i := strings.LastIndexByte(md, '\n'); i > 0 {
		md = md[:i]
	}
	return md
}
