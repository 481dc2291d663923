package wvstore

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"

	"github.com/sift-search/sift/engine"
)

// Full-text search (docs/weaviate.md "Full-text search"). Sift compiles the
// query as the memory store does (engine.CompileSearch): its analysed words
// are ranked by Weaviate's BM25 over "terms", which holds the records'
// analysed words; source, channel, author and time filters, visibility and
// excluded words are Weaviate filters; a phrase's words are a filter too
// (every one present), and the phrase itself — consecutive positions — and
// excluded phrases are checked by Sift on the candidates, which for such a
// query are read whole (at most maxResults) so the total counts only those
// that hold. Ties come newest first, as in the memory store.

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
func (s *Store) countCond(ctx context.Context, class string, c cond) (int, error) {
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

// wordFilters are the conditions the query's words make: every word of
// each phrase, no excluded word.
func wordFilters(c *engine.CompiledSearch) cond {
	var out cond
	if len(c.Exclude) > 0 {
		out = out.except(anyText("terms", c.Exclude))
	}
	for _, p := range c.Phrases {
		out = out.and(allText("terms", p))
	}
	return out
}

// rankWords are the words BM25 ranks by: the query's words and its
// phrases' (Weaviate's BM25 returns only what holds one of them, and a
// phrase's holders must be among the candidates).
func rankWords(c *engine.CompiledSearch) []string {
	var ws []string
	for _, t := range c.Terms {
		for range max(int(t.Weight), 1) {
			ws = append(ws, t.Text)
		}
	}
	for _, p := range c.Phrases {
		ws = append(ws, p...)
	}
	return ws
}

// hit is a candidate: its object, BM25 score and time.
type hit struct {
	o     map[string]any
	score float64
	ts    time.Time
	id    string
}

// Search runs a full-text search over messages and documents.
func (s *Store) Search(req engine.SearchRequest) (*engine.SearchResult, error) {
	c, err := engine.CompileSearch(req)
	if err != nil {
		return nil, err
	}
	res := &engine.SearchResult{Messages: []engine.MessageHit{}, Documents: []engine.DocumentHit{}}
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

func (s *Store) searchMessages(ctx context.Context, cat *catalog, c *engine.CompiledSearch, private bool, res *engine.SearchResult) error {
	f := &c.Filters
	w := wordFilters(c)
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
		a := engine.Fold(f.From)
		w = w.and(or(eqText("author", a), eqText("authorName", a)))
	}
	w = w.and(timeFilters("ts", f)).except(hiddenMessages(cat, private))
	hits, total, err := s.rank(ctx, c, s.class("Message"), "ts", "msgId", w, func(h hit) engine.Candidate {
		m, _ := decodeMessage(h.o)
		return engine.Candidate{Body: m.Content}
	})
	if err != nil {
		return err
	}
	res.TotalMessages = total
	for _, h := range hits {
		m, err := decodeMessage(h.o)
		if err != nil {
			return err
		}
		mh := engine.MessageHit{Message: m, Score: h.score, Highlight: c.Highlight(engine.MessagePlain(m.Content))}
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

func (s *Store) searchDocuments(ctx context.Context, cat *catalog, c *engine.CompiledSearch, private bool, res *engine.SearchResult) error {
	f := &c.Filters
	if f.Channel != "" || f.From != "" {
		return nil // documents have no channel or author
	}
	w := wordFilters(c)
	if f.Source != "" {
		w = w.and(eqText("sourceId", f.Source))
	}
	w = w.and(timeFilters("updated", f)).except(hiddenDocuments(cat, private))
	hits, total, err := s.rank(ctx, c, s.class("Document"), "updated", "docId", w, func(h hit) engine.Candidate {
		d, _ := decodeDocument(cat, h.o)
		return engine.Candidate{Title: d.Title, Body: d.Content, Document: true}
	})
	if err != nil {
		return err
	}
	res.TotalDocuments = total
	for _, h := range hits {
		d, err := decodeDocument(cat, h.o)
		if err != nil {
			return err
		}
		res.Documents = append(res.Documents, engine.DocumentHit{Document: d, Score: h.score, Highlight: c.Highlight(engine.DocumentPlain(&d))})
	}
	return nil
}

func timeFilters(prop string, f *engine.ParsedQuery) *filters.WhereBuilder {
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
// how many match in all.
func (s *Store) rank(ctx context.Context, c *engine.CompiledSearch, class, tsProp, idProp string, w cond,
	candidate func(hit) engine.Candidate) ([]hit, int, error) {
	fields := []string{"record", tsProp, idProp, "_score"}
	words := rankWords(c)
	if len(words) > 0 && len(c.Phrases) == 0 {
		w = w.and(anyText("terms", uniq(words)))
	}
	where := w.where()
	need := c.Offset + c.Limit
	if len(c.Phrases) > 0 || len(c.ExcludePhrases) > 0 {
		// Sift checks each candidate: read them all.
		objs, err := s.get(ctx, query{class: class, fields: fields, where: where, bm25: words, limit: maxResults,
			sort: unrankedSort(words, tsProp, idProp)})
		if err != nil {
			return nil, 0, err
		}
		hits := toHits(objs, tsProp, idProp)
		cands := make([]engine.Candidate, len(hits))
		for i, h := range hits {
			cands[i] = candidate(h)
		}
		ok := c.Check(cands)
		kept := hits[:0]
		for i, h := range hits {
			if ok[i] {
				kept = append(kept, h)
			}
		}
		sortHits(kept)
		return page(kept, c.Offset, c.Limit), len(kept), nil
	}
	total, err := s.countCond(ctx, class, w)
	if err != nil || total <= c.Offset {
		return nil, total, err
	}
	if len(words) == 0 {
		objs, err := s.get(ctx, query{class: class, fields: fields, where: where, sort: unrankedSort(nil, tsProp, idProp),
			offset: c.Offset, limit: c.Limit})
		return toHits(objs, tsProp, idProp), total, err
	}
	// Ranked. Weaviate's BM25 with a limit may leave out hits that tie
	// with the last it returns, or return lower ones in their place
	// (measured on v1.35.2: of 33 hits with one score, a limit of 7 gave 4
	// of them and 3 lower), so Sift reads at least rankWindow candidates
	// — their scores, times and ids only — orders them itself, then reads
	// the records of the page.
	objs, err := s.get(ctx, query{class: class, fields: []string{tsProp, idProp, "_score", "_id"}, where: where, bm25: words,
		limit: min(max(need, rankWindow), maxResults)})
	if err != nil {
		return nil, 0, err
	}
	hits := toHits(objs, tsProp, idProp)
	sortHits(hits)
	hits = page(hits, c.Offset, c.Limit)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i], _ = h.o["_id"].(string)
	}
	recs, err := s.byObjectID(ctx, class, ids, "record")
	if err != nil {
		return nil, 0, err
	}
	kept := hits[:0]
	for _, h := range hits {
		id, _ := h.o["_id"].(string)
		if r, ok := recs[id]; ok { // one deleted meanwhile is left out
			h.o = r
			kept = append(kept, h)
		}
	}
	return kept, total, nil
}

// byObjectID reads fields of objects by their ids.
func (s *Store) byObjectID(ctx context.Context, class string, ids []string, fields ...string) (map[string]map[string]any, error) {
	out := make(map[string]map[string]any, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	objs, err := s.get(ctx, query{class: class, fields: append(fields, "_id"), limit: len(ids),
		where: filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(ids...)})
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

// rankWindow is how many candidates a ranked search reads at least.
const rankWindow = 1000

// unrankedSort orders a query without words newest first; BM25 queries
// are ordered by score.
func unrankedSort(words []string, tsProp, idProp string) []graphql.Sort {
	if len(words) > 0 {
		return nil
	}
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
