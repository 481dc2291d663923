package engine

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/tokenizer"
)

// maxExclusions bounds the -terms and -"phrases" of a query.
const maxExclusions = 32

// compiled is a parsed query analysed into index terms.
type compiled struct {
	q     index.Query
	marks map[string]bool // terms to highlight
	words []string        // each ranked term's word as the query has it
	langs []string        // the languages besides English it is analysed in
}

// compile analyses the text parts of pq. Stop words are dropped from the
// ranked terms unless the query holds nothing else; phrases keep them.
// With typos, words long enough ask for typo-tolerant matches (typoEdits).
func (a *analyzer) compile(pq *query.ParsedQuery, typos bool) compiled {
	c := compiled{marks: map[string]bool{}}
	c.q.NotTypo = tokenizer.IsAnyStopWord
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
			c.q.Terms = append(c.q.Terms, term)
			c.words = append(c.words, pq.Text[t.Start:t.End])
		}
		weights[t.Term]++
		c.marks[t.Term] = true
	}
	for i := range c.q.Terms {
		c.q.Terms[i].Weight = weights[c.q.Terms[i].Text]
	}
	for _, p := range pq.Phrases {
		if ts := a.phraseTerms(p); len(ts) > 0 {
			c.q.Phrases = append(c.q.Phrases, ts)
			for _, t := range ts {
				c.marks[t] = true
			}
		}
	}
	for _, x := range pq.Exclude {
		if ts := a.phraseTerms(x); len(ts) == 1 {
			c.q.Exclude = append(c.q.Exclude, ts[0])
		} else if len(ts) > 1 {
			c.q.ExcludePhrases = append(c.q.ExcludePhrases, ts)
		}
	}
	for _, x := range pq.ExcludePhrases {
		if ts := a.phraseTerms(x); len(ts) > 0 {
			c.q.ExcludePhrases = append(c.q.ExcludePhrases, ts)
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
func (a *analyzer) phraseTerms(s string) []string {
	a.toks = a.Append(a.toks[:0], s, 0)
	var ts []string
	for _, t := range a.toks {
		if t.Flags&tokenizer.Whole == 0 {
			ts = append(ts, t.Term)
		}
	}
	return ts
}

// Search runs a full-text search over messages and documents.
func (e *Engine) Search(req query.SearchRequest) (*query.SearchResult, error) {
	cs, err := CompileSearch(req)
	if err != nil {
		return nil, err
	}
	if cs.Nothing {
		// Only punctuation: nothing can match.
		return &query.SearchResult{Messages: []query.MessageHit{}, Documents: []query.DocumentHit{}}, nil
	}
	c, pq, offset, limit := cs.compiled, cs.Filters, cs.Offset, cs.Limit
	c.q.Exhaustive = req.Exhaustive
	a := searchAnalyzers.Get()
	defer searchAnalyzers.Put(a)

	res := &query.SearchResult{}
	var tn typoNotes
	e.mu.RLock()
	c.langs = e.st.languages(!req.Private)
	a.inLanguages(&c, c.langs)
	var msgLangs []string
	var docText []docHitText
	res.Messages, msgLangs, res.TotalMessages = e.searchMessages(&c, &pq, offset, limit, req.Private, &tn)
	res.Documents, docText, res.TotalDocuments = e.searchDocuments(&c, &pq, offset, limit, req.Private, &tn)
	e.mu.RUnlock()
	res.Corrections = tn.corrections(c.q.Terms)
	c.marks = withMarks(c.marks, slices.Collect(maps.Keys(tn.matched)))

	for i := range res.Messages {
		m := &res.Messages[i]
		a.SetLanguage(msgLangs[i])
		m.Highlight = a.highlight(mdtext.PlainChat(m.Content), c.marks, highlightChars)
	}
	for i := range res.Documents {
		d := &res.Documents[i]
		a.SetLanguage(docText[i].lang)
		d.Highlight = a.highlight(e.plain.text(docText[i].stored), c.marks, highlightChars)
	}
	a.SetLanguage("")
	return res, nil
}

func mergeFilter(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

// timeWindow returns a test of a unix-microsecond time against the query's
// after/before window, or nil when there is none.
func timeWindow(pq *query.ParsedQuery, ts func(uint32) int64) func(uint32) bool {
	if pq.After.IsZero() && pq.Before.IsZero() {
		return nil
	}
	lo, hi := int64(-1<<63), int64(1<<63-1)
	if !pq.After.IsZero() {
		lo = pq.After.UnixMicro()
	}
	if !pq.Before.IsZero() {
		hi = pq.Before.UnixMicro()
	}
	return func(id uint32) bool { t := ts(id); return t >= lo && t < hi }
}

// docHitText is what highlighting a document hit needs: the language it
// is analysed in and the stored record, the plain-text cache's key.
type docHitText struct {
	lang   string
	stored *record.Document
}

// searchMessages runs c over messages, returning the hits, the language
// each is analysed in, and how many matched. The caller holds mu.RLock.
func (e *Engine) searchMessages(c *compiled, pq *query.ParsedQuery, offset, limit int, private bool, tn *typoNotes) ([]query.MessageHit, []string, int) {
	st := e.st
	var filters []*roaring.Bitmap
	if pq.Source != "" {
		filters = append(filters, st.msgIdx.Tag(sourceFacet(pq.Source)))
	}
	if pq.Channel != "" {
		n, ok := st.chanSlug[pq.Channel]
		if !ok {
			return []query.MessageHit{}, nil, 0
		}
		filters = append(filters, st.msgIdx.Tag(channelFacet(n)))
	}
	if pq.From != "" {
		filters = append(filters, st.msgIdx.Tag(authorFacet(pq.From)))
	}
	q := c.q
	switch len(filters) { // read-only: the index's own bitmaps, deleted ids included
	case 0:
	case 1:
		q.Filter = filters[0]
	default:
		q.Filter = roaring.FastAnd(filters...)
	}
	q.Public = !private
	ts := func(id uint32) int64 { return st.msgs.at(id).ts }
	q.Accept = timeWindow(pq, ts)
	q.Recency = ts
	q.Tie = func(a, b uint32) int { return strings.Compare(st.msgID(a), st.msgID(b)) } // as wvstore's sort
	r := st.msgIdx.Search(&q, offset+limit)
	tn.add(st.msgIdx, r.Typos)
	hits := make([]query.MessageHit, 0, max(len(r.Hits)-offset, 0))
	langs := make([]string, 0, cap(hits))
	for _, h := range r.Hits[min(offset, len(r.Hits)):] {
		m := st.message(h.ID)
		ch := st.chans[st.msgs.at(h.ID).channel]
		hit := query.MessageHit{Message: m, ChannelName: ch.Name, ChannelSlug: ch.Slug, Score: float64(h.Score)}
		langs = append(langs, languageOf(st.msgIdx, h.ID, c.langs))
		if src := st.sources[ch.SourceID]; src != nil {
			hit.SourceName, hit.SourceType = src.Name, src.Type
		}
		hits = append(hits, hit)
	}
	return hits, langs, r.Total
}

// searchDocuments runs c over documents, as searchMessages does over
// messages. The caller holds mu.RLock. Documents have no channel or
// author, so those filters exclude them all.
func (e *Engine) searchDocuments(c *compiled, pq *query.ParsedQuery, offset, limit int, private bool, tn *typoNotes) ([]query.DocumentHit, []docHitText, int) {
	st := e.st
	if pq.Channel != "" || pq.From != "" {
		return []query.DocumentHit{}, nil, 0
	}
	q := c.q
	if pq.Source != "" {
		q.Filter = st.docIdx.Tag(sourceFacet(pq.Source))
	}
	q.Public = !private
	ts := func(id uint32) int64 { return timeMicro(st.docs[id].UpdatedAt) }
	q.Accept = timeWindow(pq, ts)
	q.Recency = ts
	q.Tie = func(a, b uint32) int { return strings.Compare(st.docs[a].ID, st.docs[b].ID) }
	r := st.docIdx.Search(&q, offset+limit)
	tn.add(st.docIdx, r.Typos)
	hits := make([]query.DocumentHit, 0, max(len(r.Hits)-offset, 0))
	text := make([]docHitText, 0, cap(hits))
	for _, h := range r.Hits[min(offset, len(r.Hits)):] {
		hits = append(hits, query.DocumentHit{Document: st.document(h.ID), Score: float64(h.Score)})
		text = append(text, docHitText{lang: languageOf(st.docIdx, h.ID, c.langs), stored: st.docs[h.ID]})
	}
	return hits, text, r.Total
}
