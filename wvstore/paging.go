package wvstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
)

// Reads longer than one query. Weaviate refuses a query whose offset plus
// limit exceed its QUERY_MAXIMUM_RESULTS (10,000 by default), so no read
// pages by offset past maxResults: a whole read pages by key (Weaviate's
// cursor, or the object id), and a page deep in a listing is reached by
// skipping on the listing's time.

// getAll returns every object of q.class matching q.where, in q.sort order
// as Weaviate sorts (text ignoring case; the sort's properties are read
// too). Without where or sort it pages with Weaviate's cursor, q.limit a
// query (default 1,000); else by object id — ordered by id, each query
// from past the last id read, maxResults a query, since each query sorts
// every match left — and sorts in memory.
func (s *core) getAll(ctx context.Context, q getQuery) ([]map[string]any, error) {
	if q.where == nil && len(q.sort) == 0 {
		return s.cursorAll(ctx, q)
	}
	order := q.sort
	for _, o := range order {
		q.fields = withField(q.fields, o.Path[0])
	}
	out, err := s.idKeysetAll(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(order) > 0 {
		slices.SortStableFunc(out, func(a, b map[string]any) int { return compareObjects(a, b, order) })
	}
	return out, nil
}

// cursorAll reads every object of q.class with Weaviate's cursor (no
// where, no sort): no bound on how many.
func (s *core) cursorAll(ctx context.Context, q getQuery) ([]map[string]any, error) {
	q.limit = perQuery(cmp.Or(q.limit, 1000))
	return s.pages(ctx, q, func(q *getQuery, last string) { q.after = last })
}

// idKeysetAll reads every object matching q.where, maxResults a query in
// object id order, each query's filter starting past the last id read
// (Weaviate filters the id as text, comparing bytes: the order of the
// lowercase UUIDs it sorts by).
func (s *core) idKeysetAll(ctx context.Context, q getQuery) ([]map[string]any, error) {
	base := q.where
	q.sort = []graphql.Sort{{Path: []string{"_id"}, Order: graphql.Asc}}
	q.limit, q.offset = maxResults, 0
	return s.pages(ctx, q, func(q *getQuery, last string) {
		q.where = and(base, filters.Where().WithPath([]string{"id"}).WithOperator(filters.GreaterThan).WithValueText(last))
	})
}

// pages reads q, then the queries next makes of it from the last object id
// read, until a page comes back short.
func (s *core) pages(ctx context.Context, q getQuery, next func(q *getQuery, last string)) ([]map[string]any, error) {
	q.fields = withField(q.fields, "_id")
	var out []map[string]any
	for {
		objs, err := s.get(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		if len(objs) < q.limit {
			return out, nil
		}
		last, _ := objs[len(objs)-1]["_id"].(string)
		next(&q, last)
	}
}

// withField is fields with f, added when missing.
func withField(fields []string, f string) []string {
	if slices.Contains(fields, f) {
		return fields
	}
	return append(slices.Clone(fields), f)
}

// compareObjects orders a before b as Weaviate's sort by order does:
// dates by time, numbers by value, text ignoring case (its sorter's
// comparator); objects it would tie (text equal but for case) by their
// bytes, then their object ids.
func compareObjects(a, b map[string]any, order []graphql.Sort) int {
	for _, o := range order {
		p := o.Path[0]
		c := compareValues(a[p], b[p], isDate(p))
		if o.Order == graphql.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	for _, o := range order {
		x, _ := a[o.Path[0]].(string)
		y, _ := b[o.Path[0]].(string)
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	x, _ := a["_id"].(string)
	y, _ := b["_id"].(string)
	return strings.Compare(x, y)
}

// compareValues compares two property values as GraphQL returns them; a
// missing value comes first.
func compareValues(x, y any, date bool) int {
	switch x := x.(type) {
	case float64:
		y, ok := y.(float64)
		if !ok {
			return 1
		}
		return cmp.Compare(x, y)
	case string:
		y, ok := y.(string)
		if !ok {
			return 1
		}
		if date {
			return parseTime(x).Compare(parseTime(y))
		}
		return foldCompare(x, y)
	}
	if y == nil {
		return 0
	}
	return -1
}

// foldCompare compares text as Weaviate's sort does: equal if equal but
// for case, else in the order of the lowercase forms.
func foldCompare(a, b string) int {
	if strings.EqualFold(a, b) {
		return 0
	}
	return strings.Compare(strings.ToLower(a), strings.ToLower(b))
}

// isDate reports whether a property of Sift's collections is a date.
func isDate(name string) bool {
	for _, c := range collections {
		for _, p := range c.props {
			if p.name == name {
				return p.dataType == "date"
			}
		}
	}
	return false
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
