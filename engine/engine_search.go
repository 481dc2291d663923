package engine

import (
	"maps"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// searcher is the engine's role of ranking messages and documents by
// words (this file) and completing a query being typed (suggest.go): what
// httpapi.Searcher asks. Like catalog it is the engine itself, embedded
// in it.
type searcher struct{ *Engine }

// Search runs a full-text search over messages and documents.
func (e *searcher) Search(req query.SearchRequest) (*query.SearchResult, error) {
	cs, err := analysis.CompileSearch(req)
	if err != nil {
		return nil, err
	}
	if cs.Nothing {
		// Only punctuation: nothing can match.
		return &query.SearchResult{Messages: []query.MessageHit{}, Documents: []query.DocumentHit{}}, nil
	}
	c, pq, offset, limit := cs.Analysed(), cs.Filters, cs.Offset, cs.Limit
	c.Query.Exhaustive = req.Exhaustive
	a := analysis.Get()
	defer analysis.Put(a)

	res := &query.SearchResult{}
	var tn typoNotes
	e.mu.RLock()
	c.Langs = e.st.languages(!req.Private)
	a.InLanguages(&c, c.Langs)
	var msgLangs []string
	var docText []docHitText
	res.Messages, msgLangs, res.TotalMessages = e.searchMessages(&c, &pq, offset, limit, req.Private, &tn)
	res.Documents, docText, res.TotalDocuments = e.searchDocuments(&c, &pq, offset, limit, req.Private, &tn)
	e.mu.RUnlock()
	res.Corrections = tn.corrections(c.Query.Terms)
	c.Marks = analysis.WithMarks(c.Marks, slices.Collect(maps.Keys(tn.matched)))

	for i := range res.Messages {
		m := &res.Messages[i]
		a.SetLanguage(msgLangs[i])
		m.Highlight = a.Highlight(analysis.MessagePlain(m.Content), c.Marks, analysis.HighlightChars)
	}
	for i := range res.Documents {
		d := &res.Documents[i]
		a.SetLanguage(docText[i].lang)
		d.Highlight = a.Highlight(e.plain.text(docText[i].stored), c.Marks, analysis.HighlightChars)
	}
	a.SetLanguage("")
	return res, nil
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
func (e *searcher) searchMessages(c *analysis.Compiled, pq *query.ParsedQuery, offset, limit int, private bool, tn *typoNotes) ([]query.MessageHit, []string, int) {
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
	q := c.Query
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
		langs = append(langs, languageOf(st.msgIdx, h.ID, c.Langs))
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
func (e *searcher) searchDocuments(c *analysis.Compiled, pq *query.ParsedQuery, offset, limit int, private bool, tn *typoNotes) ([]query.DocumentHit, []docHitText, int) {
	st := e.st
	if pq.Channel != "" || pq.From != "" {
		return []query.DocumentHit{}, nil, 0
	}
	q := c.Query
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
		text = append(text, docHitText{lang: languageOf(st.docIdx, h.ID, c.Langs), stored: st.docs[h.ID]})
	}
	return hits, text, r.Total
}
