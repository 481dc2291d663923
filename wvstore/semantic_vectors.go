package wvstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"

	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/semantic/fusion"
)

// The vector side of a search: the query's vector (with HyDE, a
// hypothetical answer's or the feedback of the best lexical hits added),
// the VectorDepth chunks nearest it among those with a vector of the
// current embedder, and the cosines of the lexical candidates, which the
// nearest may not include. When vectors cannot take part (no embedder yet,
// the query cannot be embedded, a vector query fails) the search ranks by
// words alone, as the memory index does.

// vectorQuery is the vector side of one search. Its steps run one at a
// time but for nearest and cosines, which may run together.
type vectorQuery struct {
	x             *Semantic
	emb           embed.Embedder
	name          string
	where         *filters.WhereBuilder // the search's, and the current embedder
	qv            []float32
	near, lexical []chunkHit
	nearErr       error
	lexErr        error
}

// vectorQuery returns the vector side of a search, or nil when there is
// no embedder yet or query embedding is paused after a failure.
func (x *Semantic) vectorQuery(ctx context.Context, where *filters.WhereBuilder) *vectorQuery {
	emb, err := x.current(ctx, false)
	if err != nil {
		x.log.Warn("semantic search: no embedding model; ranking by words", "err", err)
		return nil
	}
	if emb == nil || x.emb.Paused() {
		return nil
	}
	name := emb.Name()
	return &vectorQuery{x: x, emb: emb, name: name, where: and(where, eqText("embedder", name))}
}

// embed computes the query's vector and reports whether there is one to
// compare: a failure pauses query embedding for a while.
func (v *vectorQuery) embed(ctx context.Context, text string, hyde bool, feedback []float32) bool {
	qv, err := v.x.emb.QueryVector(ctx, v.emb, text, hyde, feedback)
	if err != nil {
		if ctx.Err() == nil && v.x.emb.Pause() {
			v.x.log.Warn("semantic search: the query could not be embedded; ranking by words alone for a while", "err", err)
		}
		return false
	}
	if !slices.ContainsFunc(qv, func(f float32) bool { return f != 0 }) {
		return false // nothing to compare: a query of stop words
	}
	v.qv = qv
	return true
}

// nearest reads the chunks nearest the query's vector.
func (v *vectorQuery) nearest(ctx context.Context) {
	v.near, v.nearErr = v.x.s.chunkGet(ctx, chunkQuery{fields: chunkLight, where: v.where, near: v.qv, limit: fusion.VectorDepth})
}

// cosines reads the lexical candidates' distances to the query's vector:
// the same query restricted to them, an exact search of so few.
func (v *vectorQuery) cosines(ctx context.Context, lex []*candidate) {
	ids := make([]string, len(lex))
	for i, c := range lex {
		ids[i] = c.id
	}
	v.lexical, v.lexErr = v.x.s.chunkGet(ctx, chunkQuery{fields: chunkLight, where: and(v.where, idIn(ids)), near: v.qv, limit: len(ids)})
}

// merge adds the nearest chunks to cands and gives every candidate with a
// vector its cosine; it reports whether vectors took part.
func (v *vectorQuery) merge(cands map[string]*candidate) bool {
	if v.qv == nil || v.near == nil && v.nearErr == nil {
		return false
	}
	if err := cmp.Or(v.nearErr, v.lexErr); err != nil {
		v.x.log.Warn("semantic search: the vector query failed; ranking by words", "err", err)
		return false
	}
	if len(v.near) == 0 {
		return false
	}
	for _, hs := range [][]chunkHit{v.near, v.lexical} {
		for i := range hs {
			h := &hs[i]
			c := cands[h.id]
			if c == nil {
				c = newCandidate(h)
				cands[h.id] = c
			}
			// Weaviate's cosine distance of unit vectors is 1 − their dot
			// product (TestSemantic/Meaning checks it against Sift's).
			c.cos, c.hasV = 1-h.distance, true
		}
	}
	return true
}

// feedback is the mean vector of the best lexical hits' vectors of the
// current embedder.
func (x *Semantic) feedback(ctx context.Context, name string, lex []*candidate) ([]float32, error) {
	top := lex[:min(len(lex), 5)]
	if len(top) == 0 {
		return nil, nil
	}
	ids := make([]string, len(top))
	for i, c := range top {
		ids[i] = c.id
	}
	got, err := x.s.chunksByID(ctx, ids, []string{"embedder"}, true)
	if err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(top))
	for i, id := range ids {
		if h, ok := got[id]; ok && h.str("embedder") == name {
			vecs[i] = h.vector
		}
	}
	return fusion.Feedback(vecs), nil
}
