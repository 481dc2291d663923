package wvstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
)

// Queries of the chunk collection: BM25 over the analysed words, the
// nearest vectors, and reads by object id, each returning what it asks of
// the object's additional fields (score, distance, vector) parsed.

// chunkQuery is a Get over the Chunk collection.
type chunkQuery struct {
	fields []string // properties
	where  *filters.WhereBuilder
	bm25   []string  // rank by BM25 over "terms"
	near   []float32 // rank by nearness to this vector
	limit  int
	vector bool // read each object's vector
}

// chunkHit is an object a chunk query returned.
type chunkHit struct {
	id       string
	props    map[string]any
	score    float32   // BM25, with bm25
	distance float32   // cosine distance, with near
	vector   []float32 // with vector; nil when the object has none
}

func (h *chunkHit) str(prop string) string {
	v, _ := h.props[prop].(string)
	return v
}

func (s *chunks) chunkGet(ctx context.Context, q chunkQuery) ([]chunkHit, error) {
	class := s.class("Chunk")
	fs := make([]graphql.Field, 0, len(q.fields)+1)
	for _, f := range q.fields {
		fs = append(fs, graphql.Field{Name: f})
	}
	extra := []graphql.Field{{Name: "id"}}
	if len(q.bm25) > 0 {
		extra = append(extra, graphql.Field{Name: "score"})
	}
	if q.near != nil {
		extra = append(extra, graphql.Field{Name: "distance"})
	}
	if q.vector {
		extra = append(extra, graphql.Field{Name: "vector"})
	}
	fs = append(fs, graphql.Field{Name: "_additional", Fields: extra})
	b := s.c.GraphQL().Get().WithClassName(class).WithFields(fs...)
	if s.opts.Replication > 1 {
		b = b.WithConsistencyLevel(replication.ConsistencyLevel.QUORUM)
	}
	if q.where != nil {
		b = b.WithWhere(q.where)
	}
	if len(q.bm25) > 0 {
		b = b.WithBM25(s.c.GraphQL().Bm25ArgBuilder().WithQuery(joinWords(q.bm25)).WithProperties("terms"))
	}
	if q.near != nil {
		b = b.WithNearVector(s.c.GraphQL().NearVectorArgBuilder().WithVector(q.near))
	}
	if q.limit > 0 {
		b = b.WithLimit(q.limit)
	}
	res, err := b.Do(ctx)
	if err == nil && len(res.Errors) > 0 {
		err = errors.New(res.Errors[0].Message)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", class, err)
	}
	objs := getObjects(res, class)
	out := make([]chunkHit, 0, len(objs))
	for _, o := range objs {
		h := chunkHit{props: o}
		add, _ := o["_additional"].(map[string]any)
		delete(o, "_additional")
		h.id, _ = add["id"].(string)
		h.score = number(add["score"])
		h.distance = number(add["distance"])
		if vs, ok := add["vector"].([]any); ok && len(vs) > 0 {
			h.vector = make([]float32, len(vs))
			for i, x := range vs {
				h.vector[i] = number(x)
			}
		}
		out = append(out, h)
	}
	return out, nil
}

// number reads a GraphQL number, which BM25 scores come as a string.
func number(v any) float32 {
	switch x := v.(type) {
	case float64:
		return float32(x)
	case string:
		f, _ := strconv.ParseFloat(x, 32)
		return float32(f)
	}
	return 0
}

// idIn is the filter of the objects among ids.
func idIn(ids []string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(ids...)
}

// chunksByID reads chunk objects by id, in parts.
func (s *chunks) chunksByID(ctx context.Context, ids []string, fields []string, vector bool) (map[string]chunkHit, error) {
	out := make(map[string]chunkHit, len(ids))
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		hits, err := s.chunkGet(ctx, chunkQuery{fields: fields, where: idIn(part), limit: len(part), vector: vector})
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			out[h.id] = h
		}
	}
	return out, nil
}

// keysetAll reads every object q matches in the order of key's property
// (then q.sort), a page at a time from the last value read, so that no
// query reaches past the cluster's QUERY_MAXIMUM_RESULTS as offsets would:
// a page's last value is read whole by a query of its own.
func (s *chunks) keysetAll(ctx context.Context, q getQuery, k keyProp) ([]map[string]any, error) {
	page := keysetPage
	base := q.where
	q.fields = append(slices.Clone(q.fields), k.name)
	q.sort = append([]graphql.Sort{{Path: []string{k.name}, Order: graphql.Asc}}, q.sort...)
	q.limit = page
	var out []map[string]any
	for {
		objs, err := s.get(ctx, q)
		if err != nil || len(objs) < page {
			return append(out, objs...), err
		}
		last := objs[len(objs)-1][k.name]
		n := len(objs)
		for n > 0 && objs[n-1][k.name] == last {
			n--
		}
		same, err := s.getAll(ctx, getQuery{class: q.class, fields: q.fields, where: and(base, k.cmp(filters.Equal, last)), sort: q.sort})
		if err != nil {
			return nil, err
		}
		out = append(append(out, objs[:n]...), same...)
		q.where = and(base, k.cmp(filters.GreaterThan, last))
	}
}

// keysetPage is how many objects a keysetAll query reads; a variable for
// tests.
var keysetPage = 1000

// keyProp is a property keysetAll orders by, and how to compare with a
// value read.
type keyProp struct {
	name string
	cmp  func(op filters.WhereOperator, v any) *filters.WhereBuilder
}

var dateKey = keyProp{name: "ts", cmp: func(op filters.WhereOperator, v any) *filters.WhereBuilder {
	s, _ := v.(string)
	t, _ := time.Parse(time.RFC3339Nano, s)
	return dateCmp("ts", op, t)
}}

func intKey(name string) keyProp {
	return keyProp{name: name, cmp: func(op filters.WhereOperator, v any) *filters.WhereBuilder {
		f, _ := v.(float64)
		return filters.Where().WithPath([]string{name}).WithOperator(op).WithValueInt(int64(f))
	}}
}
