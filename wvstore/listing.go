package wvstore

import (
	"context"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
)

// listing is the objects of a class matching a filter in the order of a
// date property (oldest first, or newest first when desc), ties by an id
// property: a channel's messages, the documents, the hits of a search
// without ranked words. Pages of it are read by position.
type listing struct {
	class  string
	where  *filters.WhereBuilder
	ts, id string   // the date property, and the property ordering ties
	desc   bool     // newest first
	fields []string // what a page reads of each object
}

// order is the listing's sort.
func (l listing) order() []graphql.Sort {
	return []graphql.Sort{{Path: []string{l.ts}, Order: l.dir()}, {Path: []string{l.id}, Order: graphql.Asc}}
}

func (l listing) dir() graphql.SortOrder {
	if l.desc {
		return graphql.Desc
	}
	return graphql.Asc
}

// from is the filter of the objects at time t or later in the order.
func (l listing) from(t time.Time) *filters.WhereBuilder {
	if l.desc {
		return dateCmp(l.ts, filters.LessThanEqual, t)
	}
	return dateCmp(l.ts, filters.GreaterThanEqual, t)
}

// past is the filter of the objects later than time t in the order.
func (l listing) past(t time.Time) *filters.WhereBuilder {
	if l.desc {
		return dateCmp(l.ts, filters.LessThan, t)
	}
	return dateCmp(l.ts, filters.GreaterThan, t)
}

// listPage returns the objects of l at positions offset to offset+limit
// (fewer past the end). A page within the first maxResults objects is one
// query; a deeper one is reached by skipping (listPart), half of
// maxResults at a time for a longer page.
func (s *core) listPage(ctx context.Context, l listing, offset, limit int) ([]map[string]any, error) {
	var out []map[string]any
	step := max(maxResults/2, 1)
	for limit > 0 {
		n := min(limit, step)
		objs, err := s.listPart(ctx, l, offset, n)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		if len(objs) < n {
			break
		}
		offset, limit = offset+n, limit-n
	}
	return out, nil
}

// listPart is listPage for a limit of at most maxResults. While offset
// plus limit exceed maxResults it skips: it reads the times of the next
// maxResults objects (their time alone), takes the time t of the one at
// offset (or of the last), moves the listing's start to t and subtracts
// from offset the objects strictly before t; the objects at t stay inside
// the listing. Each skip leaves out at most maxResults objects, so a page
// at offset n costs about n/maxResults queries of times. When the objects
// at t begin the listing and reach too far to skip, tiedPage reads them.
func (s *core) listPart(ctx context.Context, l listing, offset, limit int) ([]map[string]any, error) {
	base := l.where
	for offset+limit > maxResults {
		t, before, ok, err := s.skip(ctx, l, offset)
		if err != nil || !ok {
			return nil, err
		}
		if before == 0 {
			return s.tiedPage(ctx, l, t, offset, limit)
		}
		offset -= before
		l.where = and(base, l.from(t))
	}
	return s.get(ctx, getQuery{class: l.class, fields: l.fields, where: l.where, sort: l.order(), offset: offset, limit: limit})
}

// skip reads the times of l's first maxResults objects and returns the
// time t of the one at offset (the last one read when offset is past
// them) and how many of them come before the first at t, at most offset;
// ok is false when l holds no more than offset objects.
func (s *core) skip(ctx context.Context, l listing, offset int) (t time.Time, before int, ok bool, err error) {
	objs, err := s.get(ctx, getQuery{class: l.class, fields: []string{l.ts}, where: l.where,
		sort: []graphql.Sort{{Path: []string{l.ts}, Order: l.dir()}}, limit: maxResults})
	if err != nil || len(objs) == 0 || offset >= len(objs) && len(objs) < maxResults {
		return time.Time{}, 0, false, err
	}
	at := min(offset, len(objs)-1)
	t = objTime(objs[at], l.ts)
	for before < at && !objTime(objs[before], l.ts).Equal(t) {
		before++
	}
	return t, before, true, nil
}

// tiedPage returns the page at offset of l whose objects at time t come
// first and are too many for an offset into them: their ids are read whole
// (getAll, ordered as Weaviate orders them), the page's objects among them
// read by object id, and a page reaching past them continues with the
// objects after t.
func (s *core) tiedPage(ctx context.Context, l listing, t time.Time, offset, limit int) ([]map[string]any, error) {
	tied, err := s.getAll(ctx, getQuery{class: l.class, fields: []string{l.id}, where: and(l.where, dateCmp(l.ts, filters.Equal, t)),
		sort: []graphql.Sort{{Path: []string{l.id}, Order: graphql.Asc}}})
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	end := min(offset+limit, len(tied))
	if offset < end {
		ids := make([]string, 0, end-offset)
		for _, o := range tied[offset:end] {
			id, _ := o["_id"].(string)
			ids = append(ids, id)
		}
		objs, err := s.byObjectID(ctx, l.class, ids, l.fields...)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if o, ok := objs[id]; ok { // one deleted meanwhile is left out
				out = append(out, o)
			}
		}
	}
	if rest := limit - max(end-offset, 0); rest > 0 {
		l.where = and(l.where, l.past(t))
		more, err := s.listPart(ctx, l, max(offset-len(tied), 0), rest)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// objTime is an object's date property.
func objTime(o map[string]any, prop string) time.Time {
	v, _ := o[prop].(string)
	return parseTime(v)
}
