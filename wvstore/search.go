package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/tokenizer"
)

// Full-text search (docs/weaviate.md "Full-text search"). Sift compiles the
// query as the memory store does (analysis.CompileSearch): its analysed words
// are ranked by Weaviate's BM25 over "terms", which holds the records'
// analysed words; source, channel, author and time filters, visibility and
// excluded words are Weaviate filters; a phrase's words are a filter too
// (every one present), and the phrase itself — consecutive positions — and
// excluded phrases are checked by Sift on the candidates, which for such a
// query are read whole (rankChecked) so the total counts only those that
// hold. Ties come newest first, then by id, as in the memory store.

// cond is a filter: every condition of all, none of those of none.
// Weaviate's counts under a Not filter include objects deleted since
// (weaviate#10260, open in v1.35.2), so a count subtracts what matches one
// of none from what matches all, each a filter without Not; queries that
// list objects use Not, which is right for them.
type cond struct{ all, none []*filters.WhereBuilder }

func (c cond) and(ws ...*filters.WhereBuilder) cond {
	out := cond{all: slices.Clone(c.all), none: c.none}
	for _, w := range ws {
		if w != nil {
			out.all = append(out.all, w)
		}
	}
	return out
}

func (c cond) except(ws ...*filters.WhereBuilder) cond {
	out := cond{all: c.all, none: slices.Clone(c.none)}
	for _, w := range ws {
		if w != nil {
			out.none = append(out.none, w)
		}
	}
	return out
}

// where is the filter for a query that lists objects.
func (c cond) where() *filters.WhereBuilder {
	if len(c.none) == 0 {
		return and(c.all...)
	}
	return and(append(slices.Clone(c.all), not(or(c.none...)))...)
}

// countCond counts the objects of class c matches.
func (s *core) countCond(ctx context.Context, class string, c cond) (int, error) {
	n, err := s.count(ctx, class, and(c.all...))
	if err != nil || len(c.none) == 0 || n == 0 {
		return n, err
	}
	out, err := s.count(ctx, class, and(append(slices.Clone(c.all), or(c.none...))...))
	return max(n-out, 0), err
}

// hiddenDocuments matches the documents callers without credentials may
// not see (nil: none, or private).
func hiddenDocuments(cat *catalog, private bool) *filters.WhereBuilder {
	if private {
		return nil
	}
	if hidden := cat.hiddenDocSources(); len(hidden) > 0 {
		return anyText("sourceId", hidden)
	}
	return nil
}

// hiddenMessages matches the messages callers without credentials may
// not see (nil: none, or private).
func hiddenMessages(cat *catalog, private bool) *filters.WhereBuilder {
	if private {
		return nil
	}
	sources, chans := cat.hiddenContent()
	var ws []*filters.WhereBuilder
	if len(sources) > 0 {
		ws = append(ws, anyText("sourceId", sources))
	}
	if len(chans) > 0 {
		ws = append(ws, anyText("chan", chans))
	}
	if len(ws) == 0 {
		return nil
	}
	return or(ws...)
}

// wordFilters are the conditions the query's words make: each phrase's
// (phraseFilter), no excluded word.
func (s *searcher) wordFilters(c *analysis.CompiledSearch) cond {
	var out cond
	if len(c.Exclude) > 0 {
		out = out.except(anyText("terms", c.Exclude))
	}
	for _, p := range c.Phrases {
		out = out.and(s.phraseFilter(p))
	}
	return out
}

// phraseFilter is the filter of a phrase's candidates: the records
// holding each of its words but the stop words ("the", "to") and, where
// every record carries its pairs (core.pairs), each pair of a stop word
// and another word the phrase holds (analysis.PhrasePairs: "i+shurir");
// a phrase of stop words alone, each of its words. Sift checks the phrase
// itself on the candidates, so a looser filter changes no answer, only
// how many candidates it reads: at 1M messages the other words of
// `"i shurir"` were held by ~10,000 messages, its pair by a few; and a
// stop word's postings hold most records, which Weaviate reads whole to
// filter by them.
func (s *searcher) phraseFilter(p []string) *filters.WhereBuilder {
	words := make([]string, 0, len(p))
	for _, w := range p {
		if !tokenizer.IsAnyStopWord(w) {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return allText("terms", p)
	}
	f := allText("terms", words)
	if pairs := analysis.PhrasePairs(p); s.pairs && len(pairs) > 0 {
		f = and(f, allText("pairs", uniq(pairs)))
	}
	return f
}

// hit is a candidate: its object, BM25 score and time.
type hit struct {
	o     map[string]any
	score float64
	ts    time.Time
	id    string
	len   int    // length in words ("len"), when read
	oid   string // Weaviate's object id ("_id"), when read
}

// Search runs a full-text search over messages and documents.
func (s *searcher) Search(req query.SearchRequest) (*query.SearchResult, error) {
	c, err := analysis.CompileSearch(req)
	if err != nil {
		return nil, err
	}
	res := &query.SearchResult{Messages: []query.MessageHit{}, Documents: []query.DocumentHit{}}
	if c.Nothing {
		return res, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.searchMessages(ctx, cat, c, req.Private, res); err != nil {
		return nil, err
	}
	if err := s.searchDocuments(ctx, cat, c, req.Private, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *searcher) searchMessages(ctx context.Context, cat *catalog, c *analysis.CompiledSearch, private bool, res *query.SearchResult) error {
	f := &c.Filters
	w := s.wordFilters(c)
	if f.Source != "" {
		w = w.and(eqText("sourceId", f.Source))
	}
	if f.Channel != "" {
		k, ok := cat.bySlug[f.Channel]
		if !ok {
			return nil
		}
		w = w.and(channelWhere(k))
	}
	if f.From != "" {
		a := analysis.Fold(f.From)
		w = w.and(or(eqText("author", a), eqText("authorName", a)))
	}
	w = w.and(timeFilters("ts", f)).except(hiddenMessages(cat, private))
	hits, total, atLeast, err := s.rank(ctx, c, s.class("Message"), "ts", "msgId", w, func(h hit) analysis.Candidate {
		m, _ := decodeMessage(h.o)
		return analysis.Candidate{Body: m.Content}
	})
	if err != nil {
		return err
	}
	res.TotalMessages, res.MessagesAtLeast = total, atLeast
	for _, h := range hits {
		m, err := decodeMessage(h.o)
		if err != nil {
			return err
		}
		mh := query.MessageHit{Message: m, Score: h.score, Highlight: c.Highlight(analysis.MessagePlain(m.Content))}
		if ch := cat.chans[chanKey{m.SourceID, m.ChannelID}]; ch != nil {
			mh.ChannelName, mh.ChannelSlug = ch.Name, ch.Slug
		}
		if src := cat.sources[m.SourceID]; src != nil {
			mh.SourceName, mh.SourceType = src.Name, src.Type
		}
		res.Messages = append(res.Messages, mh)
	}
	return nil
}

func (s *searcher) searchDocuments(ctx context.Context, cat *catalog, c *analysis.CompiledSearch, private bool, res *query.SearchResult) error {
	f := &c.Filters
	if f.Channel != "" || f.From != "" {
		return nil // documents have no channel or author
	}
	w := s.wordFilters(c)
	if f.Source != "" {
		w = w.and(eqText("sourceId", f.Source))
	}
	w = w.and(timeFilters("updated", f)).except(hiddenDocuments(cat, private))
	hits, total, atLeast, err := s.rank(ctx, c, s.class("Document"), "updated", "docId", w, func(h hit) analysis.Candidate {
		d, _ := decodeDocument(cat, h.o)
		return analysis.Candidate{Title: d.Title, Body: d.Content, Document: true}
	})
	if err != nil {
		return err
	}
	res.TotalDocuments, res.DocumentsAtLeast = total, atLeast
	for _, h := range hits {
		d, err := decodeDocument(cat, h.o)
		if err != nil {
			return err
		}
		res.Documents = append(res.Documents, query.DocumentHit{Document: d, Score: h.score, Highlight: c.Highlight(analysis.DocumentPlain(&d))})
	}
	return nil
}

func timeFilters(prop string, f *query.ParsedQuery) *filters.WhereBuilder {
	var ws []*filters.WhereBuilder
	if !f.After.IsZero() {
		ws = append(ws, dateCmp(prop, filters.GreaterThanEqual, f.After))
	}
	if !f.Before.IsZero() {
		ws = append(ws, dateCmp(prop, filters.LessThan, f.Before))
	}
	return and(ws...)
}

// rank returns the page c asks for of class's objects matching where, and
// how many match in all: exactly, or at least that many when atLeast.
func (s *searcher) rank(ctx context.Context, c *analysis.CompiledSearch, class, tsProp, idProp string, w cond,
	candidate func(hit) analysis.Candidate) (hits []hit, total int, atLeast bool, err error) {
	words := termWords(c)
	if len(words) > 0 && len(c.Phrases) == 0 {
		// Any word suffices (with a phrase, the phrase's words decide).
		// BM25 alone finds only records holding one; ranking without the
		// filter is faster, but has not been compared whole against the
		// memory store yet.
		w = w.and(anyText("terms", uniq(words)))
	}
	if len(c.Phrases) > 0 || len(c.ExcludePhrases) > 0 {
		return s.rankChecked(ctx, c, class, tsProp, idProp, w, candidate)
	}
	if len(words) == 0 {
		total, err := s.countCond(ctx, class, w)
		if err != nil || total <= c.Offset {
			return nil, total, false, err
		}
		objs, err := s.listPage(ctx, listing{class: class, where: w.where(), ts: tsProp, id: idProp, desc: true,
			fields: []string{"record", tsProp, idProp}}, c.Offset, c.Limit)
		return toHits(objs, tsProp, idProp), total, false, err
	}
	if hits, total, atLeast, err = s.ranked(ctx, c, class, tsProp, idProp, w, words); err != nil || len(hits) == 0 {
		return nil, total, atLeast, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.oid
	}
	recs, err := s.byObjectID(ctx, class, ids, "record")
	if err != nil {
		return nil, 0, false, err
	}
	kept := hits[:0]
	for _, h := range hits {
		if r, ok := recs[h.oid]; ok { // one deleted meanwhile is left out
			h.o = r
			kept = append(kept, h)
		}
	}
	return kept, total, atLeast, nil
}

// ranked returns the page c asks for of a search of words alone, ordered
// by Sift (score, newest, id), without the records, and its total.
//
// Weaviate ranks by BM25 and returns its best; Sift reads their scores,
// times and ids only — a window from the page's end, at least rankWindow,
// and one more, at most maxResults in all — and orders them itself, so
// that among equal scores the newest come first as in the memory store. The window is wide enough
// when it holds every match (the total is then exact) or when its lowest
// score is below the page's last: what it left out scores lower still.
// Otherwise (ties across its edge) it is read again four times as wide.
// When more match than the window holds, the total is the window's size,
// a lower bound (more than that match), and says so: Weaviate counts a
// filtered query by reading every matching object (BenchmarkCommonWordCost),
// which costs more than the ranking. BM25's order cannot be paged by key,
// so no more than maxResults are read: a page past the maxResults-th
// candidate comes back short or empty.
func (s *searcher) ranked(ctx context.Context, c *analysis.CompiledSearch, class, tsProp, idProp string, w cond,
	words []string) ([]hit, int, bool, error) {
	need := c.Offset + c.Limit
	where := w.where()
	scale := bm25Scale(s.opts)
	for limit := min(max(need+need/2, rankWindow)+1, maxResults); ; limit = min(limit*4, maxResults) {
		objs, err := s.get(ctx, getQuery{class: class, fields: []string{tsProp, idProp, "_score", "_id"}, where: where, bm25: words,
			limit: limit})
		if err != nil {
			return nil, 0, false, err
		}
		hits := toHits(objs, tsProp, idProp)
		lowest := math.Inf(1)
		for i := range hits {
			lowest = min(lowest, hits[i].score)
			hits[i].score *= scale
		}
		sortHits(hits)
		if len(hits) < limit { // every match
			return page(hits, c.Offset, c.Limit), len(hits), false, nil
		}
		if limit < maxResults && need <= len(hits) && hits[need-1].score <= lowest*scale {
			continue // ties across the window's edge: some may be left out
		}
		if limit < maxResults {
			hits = hits[:limit-1] // the one more read says more match than the window
		}
		return page(hits, c.Offset, c.Limit), len(hits), true, nil
	}
}

// rankChecked ranks a search with phrases or excluded phrases, which Sift
// checks on each candidate (Weaviate narrows the candidates to those
// holding every word of the phrases). Every candidate is read, newest
// first, in queries of phraseWindow, so the total is exact however
// common the words. The scores are the memory store's: its BM25 of the
// query's words (Weaviate's, read by id for the holders) plus each
// phrase's, which Sift computes as the memory index does — the phrase as
// one term, from how often each holder holds it, how many hold it in all
// and the records' lengths ("len").
func (s *searcher) rankChecked(ctx context.Context, c *analysis.CompiledSearch, class, tsProp, idProp string, w cond,
	candidate func(hit) analysis.Candidate) ([]hit, int, bool, error) {
	all, matches, cut, err := s.walk(ctx, c, class, tsProp, idProp, w, candidate)
	if err != nil {
		return nil, 0, false, err
	}
	var held []hit
	var counts [][]int
	for i, m := range matches {
		if m.OK {
			held = append(held, all[i])
			counts = append(counts, m.Counts)
		}
	}
	if !c.Ranked() { // newest first, as the walk reads them
		return page(held, c.Offset, c.Limit), len(held), cut, nil
	}
	if len(c.Phrases) > 0 && len(held) > 0 {
		n, avg, err := s.lengths(ctx, class)
		if err != nil {
			return nil, 0, false, err
		}
		for p, ph := range c.Phrases {
			df, err := s.phraseHolders(ctx, c, class, tsProp, idProp, w, p, ph, all, matches, candidate)
			if err != nil {
				return nil, 0, false, err
			}
			for i := range held {
				held[i].score += analysis.PhraseScore(n, df, counts[i][p], held[i].len, avg)
			}
		}
	}
	if words := termWords(c); len(words) > 0 {
		byID := make(map[string]int, len(held))
		for i, h := range held {
			byID[h.oid] = i
		}
		for part := range slices.Chunk(held, perQuery(1000)) {
			ids := make([]string, len(part))
			for i, h := range part {
				ids[i] = h.oid
			}
			objs, err := s.get(ctx, getQuery{class: class, fields: []string{"_id", "_score"}, bm25: words, limit: len(part),
				where: idIn(ids)})
			if err != nil {
				return nil, 0, false, err
			}
			for _, o := range objs {
				id, _ := o["_id"].(string)
				sc, _ := o["_score"].(string)
				f, _ := strconv.ParseFloat(sc, 64)
				if i, ok := byID[id]; ok {
					held[i].score += f * bm25Scale(s.opts)
				}
			}
		}
	}
	sortHits(held)
	return page(held, c.Offset, c.Limit), len(held), cut, nil
}

// bm25Scale brings Weaviate's BM25 scores to the memory store's, which
// weighs each term by k1+1 as Lucene's classic form does (the order is
// the same either way; the sums with phrase scores need one scale).
func bm25Scale(o Options) float64 { return float64(o.K1) + 1 }

// termWords are the query's ranked words without its phrases'.
func termWords(c *analysis.CompiledSearch) []string {
	var ws []string
	for _, t := range c.Terms {
		for range max(int(t.Weight), 1) {
			ws = append(ws, t.Text)
		}
	}
	return ws
}

// phraseHolders returns how many records of class hold phrase p of c, as
// the memory index counts them for the phrase's weight: all of them,
// whatever the query's filters. When the query has no condition but the
// phrase's words, the walk it made already counted them.
func (s *searcher) phraseHolders(ctx context.Context, c *analysis.CompiledSearch, class, tsProp, idProp string, w cond,
	p int, ph []string, all []hit, matches []analysis.PhraseMatch, candidate func(hit) analysis.Candidate) (int, error) {
	if len(w.none) > 0 || len(w.all) != 1 || len(c.Phrases) != 1 {
		var err error
		only := cond{all: []*filters.WhereBuilder{s.phraseFilter(ph)}}
		if _, matches, _, err = s.walk(ctx, c, class, tsProp, idProp, only, candidate); err != nil {
			return 0, err
		}
	}
	df := 0
	for _, m := range matches {
		if m.Counts[p] > 0 {
			df++
		}
	}
	return df, nil
}

// lengthsCache holds each collection's lengths (searcher.lengths) as of a
// write stamp (instance.Seq).
type lengthsCache struct {
	mu sync.Mutex
	m  map[string]lengthsAt
}

type lengthsAt struct {
	seq uint64
	n   int
	avg float64
}

// lengths returns how many records class holds and their mean length in
// words, as BM25 counts them. Weaviate aggregates them by reading every
// object (BenchmarkStores at 1M: 1.4 s of a phrase search), so they are
// kept until a write: this process's at once, another's within a second
// (Seq).
func (s *searcher) lengths(ctx context.Context, class string) (int, float64, error) {
	seq := s.Seq()
	s.lens.mu.Lock()
	l, ok := s.lens.m[class]
	s.lens.mu.Unlock()
	if ok && l.seq == seq {
		return l.n, l.avg, nil
	}
	n, avg, err := s.aggregateLengths(ctx, class)
	if err != nil {
		return 0, 0, err
	}
	s.lens.mu.Lock()
	if s.lens.m == nil {
		s.lens.m = map[string]lengthsAt{}
	}
	s.lens.m[class] = lengthsAt{seq, n, avg}
	s.lens.mu.Unlock()
	return n, avg, nil
}

func (s *searcher) aggregateLengths(ctx context.Context, class string) (int, float64, error) {
	o, err := s.aggregate(ctx, class, nil,
		graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}},
		graphql.Field{Name: "len", Fields: []graphql.Field{{Name: "mean"}}})
	if err != nil {
		return 0, 0, fmt.Errorf("lengths of %s: %w", class, err)
	}
	meta, _ := o["meta"].(map[string]any)
	n, _ := meta["count"].(float64)
	l, _ := o["len"].(map[string]any)
	mean, _ := l["mean"].(float64)
	if mean <= 0 {
		mean = 1
	}
	return int(n), mean, nil
}

// phraseWindow is how many candidates a phrase search reads a query, at
// most maxResults (a variable for tests).
var phraseWindow = maxResults

// phraseWalkMax bounds the candidates a phrase search walks: beyond it
// the search ranks and counts the holders among the newest phraseWalkMax
// candidates (docs/weaviate.md).
const phraseWalkMax = 100_000

// walk reads every candidate matching w, newest first, a window of
// phraseWindow (at most maxResults) a query keyed on (time, id): each
// query starts at the last time read and leaves out the ids read at it.
// It matches each candidate against c.
func (s *searcher) walk(ctx context.Context, c *analysis.CompiledSearch, class, tsProp, idProp string, w cond,
	candidate func(hit) analysis.Candidate) (out []hit, matches []analysis.PhraseMatch, cut bool, err error) {
	window := perQuery(phraseWindow)
	var last time.Time
	seen := map[string]bool{} // ids at time last, read already
	for len(out) < phraseWalkMax {
		q := w
		if len(out) > 0 {
			q = q.and(dateCmp(tsProp, filters.LessThanEqual, last))
		}
		objs, err := s.get(ctx, getQuery{class: class, fields: []string{"record", "len", tsProp, idProp, "_id"}, where: q.where(),
			sort: byTime(tsProp, idProp), limit: window})
		if err != nil {
			return nil, nil, false, err
		}
		hits := toHits(objs, tsProp, idProp)
		fresh := hits[:0]
		for _, h := range hits {
			if len(out) == 0 || !h.ts.Equal(last) || !seen[h.id] {
				fresh = append(fresh, h)
			}
		}
		if len(fresh) == 0 { // more than a query's worth at one time: left
			break
		}
		cands := make([]analysis.Candidate, len(fresh))
		for i, h := range fresh {
			cands[i] = candidate(h)
		}
		out = append(out, fresh...)
		matches = append(matches, c.Match(cands)...)
		if len(objs) < window {
			break
		}
		if t := fresh[len(fresh)-1].ts; !t.Equal(last) {
			last = t
			clear(seen)
		}
		for _, h := range fresh {
			if h.ts.Equal(last) {
				seen[h.id] = true
			}
		}
	}
	return out, matches, len(out) >= phraseWalkMax, nil
}

// byObjectID reads fields of objects by their ids.
func (s *core) byObjectID(ctx context.Context, class string, ids []string, fields ...string) (map[string]map[string]any, error) {
	out := make(map[string]map[string]any, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	objs, err := s.get(ctx, getQuery{class: class, fields: append(fields, "_id"), limit: len(ids),
		where: idIn(ids)})
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		id, _ := o["_id"].(string)
		out[id] = o
	}
	// An object the query did not return (its replica was behind) is read
	// by id at QUORUM, which repairs it; one deleted meanwhile is not.
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		p, ok, err := getProps(ctx, s.c, class, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = p
		}
	}
	return out, nil
}

// rankWindow is how many candidates a ranked search reads at least (a
// variable so a test can make it small): a page's hits and enough beyond
// them for a total that says "more than" the pages a person reads.
var rankWindow = 100

// byTime orders newest first, then by id, as the memory store
// lists what a query without ranked words matches.
func byTime(tsProp, idProp string) []graphql.Sort {
	return []graphql.Sort{{Path: []string{tsProp}, Order: graphql.Desc}, {Path: []string{idProp}, Order: graphql.Asc}}
}

func toHits(objs []map[string]any, tsProp, idProp string) []hit {
	out := make([]hit, 0, len(objs))
	for _, o := range objs {
		h := hit{o: o}
		if sc, ok := o["_score"].(string); ok {
			h.score, _ = strconv.ParseFloat(sc, 64)
		}
		if ts, ok := o[tsProp].(string); ok {
			h.ts, _ = time.Parse(time.RFC3339Nano, ts)
		}
		h.id, _ = o[idProp].(string)
		h.oid, _ = o["_id"].(string)
		if l, ok := o["len"].(float64); ok {
			h.len = int(l)
		}
		out = append(out, h)
	}
	return out
}

// sortHits orders by score, then newest first, then id.
func sortHits(hits []hit) {
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), b.ts.Compare(a.ts), cmp.Compare(a.id, b.id))
	})
}

func page(hits []hit, offset, limit int) []hit {
	offset = min(offset, len(hits))
	return hits[offset:min(offset+limit, len(hits))]
}

func uniq(ws []string) []string {
	out := slices.Clone(ws)
	slices.Sort(out)
	return slices.Compact(out)
}
