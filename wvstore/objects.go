package wvstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// How records are written and read in bulk. Writes wait for every replica
// (consistency ALL), so a search on any node finds what a write
// acknowledged; when a node is down they fall back to QUORUM, and the
// cluster's asynchronous repair brings the node up to date when it
// returns. Batches are upserts with deterministic ids, so a retried batch
// changes nothing.

// batchSize is how many objects one batch request writes.
const batchSize = 200

// batchBytes bounds the bytes of one batch request, well below Weaviate's
// GRPC_MAX_MESSAGE_SIZE (100 MB by default): a batch of big documents is
// split further; an object larger than it goes alone. A variable for tests.
var batchBytes = 16 << 20

// batches splits objs into batches of at most batchSize objects and, but
// for one object alone, batchBytes bytes.
func batches(objs []*models.Object) iter.Seq[[]*models.Object] {
	return func(yield func([]*models.Object) bool) {
		start, bytes := 0, 0
		for i, o := range objs {
			n := objectBytes(o)
			if i > start && (i-start == batchSize || bytes+n > batchBytes) {
				if !yield(objs[start:i]) {
					return
				}
				start, bytes = i, 0
			}
			bytes += n
		}
		if start < len(objs) {
			yield(objs[start:])
		}
	}
}

// objectBytes estimates an object's size on the wire: its text, vector and
// a little for each other property.
func objectBytes(o *models.Object) int {
	n := 64 + 4*len(o.Vector)
	props, _ := o.Properties.(map[string]any)
	for k, v := range props {
		n += len(k) + 8
		if str, ok := v.(string); ok {
			n += len(str)
		}
	}
	return n
}

// maxResults is the most objects a query reaches: its offset plus its
// limit never exceed it (get refuses a query that would). It is Weaviate's
// default QUERY_MAXIMUM_RESULTS, so Sift needs no setting of the cluster
// (docs/weaviate.md); a variable so that a test can match a node started
// with a smaller one.
var maxResults = 10_000

// perQuery is n bounded by maxResults: how many objects a query of a read
// that wants n at a time takes.
func perQuery(n int) int { return max(min(n, maxResults), 1) }

// objID derives a record's object id from its kind and key parts.
func (s *core) objID(kind string, parts ...string) string {
	key := "sift:" + s.opts.Namespace + ":" + kind
	for _, p := range parts {
		key += "\x00" + p
	}
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(key)).String()
}

func (s *core) class(suffix string) string { return s.opts.Namespace + suffix }

// upsert writes objects in batches.
func (s *core) upsert(ctx context.Context, objs []*models.Object) error {
	for part := range batches(objs) {
		err := s.upsertBatch(ctx, part, replication.ConsistencyLevel.ALL)
		// A node down, or two writers of one object meeting in a read
		// repair: the batch is idempotent, so it is written again.
		for attempt := 1; err != nil && attempt < 4 && ctx.Err() == nil; attempt++ {
			backoff(attempt)
			err = s.upsertBatch(ctx, part, replication.ConsistencyLevel.QUORUM)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *core) upsertBatch(ctx context.Context, objs []*models.Object, level string) error {
	res, err := s.c.Batch().ObjectsBatcher().WithObjects(objs...).WithConsistencyLevel(level).Do(ctx)
	if err != nil {
		return fmt.Errorf("write %d objects: %w", len(objs), err)
	}
	for _, r := range res {
		if r.Result != nil && r.Result.Errors != nil && len(r.Result.Errors.Error) > 0 {
			return fmt.Errorf("write %s %s: %s", r.Class, r.ID, r.Result.Errors.Error[0].Message)
		}
	}
	return nil
}

// deleteWhere deletes every object of class matching where and returns how
// many it deleted.
func (s *core) deleteWhere(ctx context.Context, class string, where *filters.WhereBuilder) (int, error) {
	total := 0
	for {
		n, err := s.deleteWhereOnce(ctx, class, where, replication.ConsistencyLevel.ALL)
		if err != nil {
			n, err = s.deleteWhereOnce(ctx, class, where, replication.ConsistencyLevel.QUORUM)
		}
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

func (s *core) deleteWhereOnce(ctx context.Context, class string, where *filters.WhereBuilder, level string) (int, error) {
	res, err := s.c.Batch().ObjectsBatchDeleter().WithClassName(class).WithWhere(where).WithConsistencyLevel(level).
		WithOutput("minimal").Do(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete from %s: %w", class, err)
	}
	if res.Results == nil {
		return 0, nil
	}
	if res.Results.Failed > 0 {
		return int(res.Results.Successful), fmt.Errorf("delete from %s: %d objects failed", class, res.Results.Failed)
	}
	return int(res.Results.Successful), nil
}

// deleteObject deletes one object; one already gone is fine.
func (s *core) deleteObject(ctx context.Context, class, id string) error {
	err := s.c.Data().Deleter().WithClassName(class).WithID(id).WithConsistencyLevel(replication.ConsistencyLevel.ALL).Do(ctx)
	if err != nil && !notFound(err) {
		err = s.c.Data().Deleter().WithClassName(class).WithID(id).WithConsistencyLevel(replication.ConsistencyLevel.QUORUM).Do(ctx)
	}
	if err != nil && !notFound(err) {
		return fmt.Errorf("delete %s %s: %w", class, id, err)
	}
	return nil
}

// getQuery is a Get over one class.
type getQuery struct {
	class  string
	fields []string // properties; "_id", "_score" for the additional ones
	where  *filters.WhereBuilder
	sort   []graphql.Sort
	bm25   []string // query words, over "terms"
	limit  int
	offset int
	after  string // cursor paging (no where, sort or bm25)
}

// get runs q and returns its objects' properties, with those it sorts by;
// "_id" and "_score" hold the object id and the BM25 score as strings. A
// query whose offset plus limit exceed maxResults is an error, whatever
// the cluster allows.
func (s *core) get(ctx context.Context, q getQuery) ([]map[string]any, error) {
	if q.offset+q.limit > maxResults {
		return nil, fmt.Errorf("query %s: offset %d and limit %d reach past %d objects", q.class, q.offset, q.limit, maxResults)
	}
	// Weaviate merges a sorted query's shards by the properties read:
	// one it sorts by and does not read leaves the merge in the wrong
	// order (v1.35.2, WEAVIATE_SHARDS above 1), so they are read.
	for _, o := range q.sort {
		q.fields = withField(q.fields, o.Path[0])
	}
	var fs []graphql.Field
	var extra []graphql.Field
	for _, f := range q.fields {
		switch f {
		case "_id":
			extra = append(extra, graphql.Field{Name: "id"})
		case "_score":
			extra = append(extra, graphql.Field{Name: "score"})
		default:
			fs = append(fs, graphql.Field{Name: f})
		}
	}
	if len(extra) > 0 {
		fs = append(fs, graphql.Field{Name: "_additional", Fields: extra})
	}
	b := s.c.GraphQL().Get().WithClassName(q.class).WithFields(fs...)
	// No consistency level: a query at QUORUM leaves out objects whose
	// replicas it finds at odds while a node is down (seen in
	// TestClusterNodeKilledDuringImport), where a query on one replica
	// finds them. Writes wait for every replica unless one is down, so a
	// replica queried holds what was acknowledged, except a node just back
	// and not yet repaired.
	if q.where != nil {
		b = b.WithWhere(q.where)
	}
	if len(q.sort) > 0 {
		b = b.WithSort(q.sort...)
	}
	if len(q.bm25) > 0 {
		b = b.WithBM25(s.c.GraphQL().Bm25ArgBuilder().WithQuery(joinWords(q.bm25)).WithProperties("terms"))
	}
	if q.limit > 0 {
		b = b.WithLimit(q.limit)
	}
	if q.offset > 0 {
		b = b.WithOffset(q.offset)
	}
	if q.after != "" {
		b = b.WithAfter(q.after)
	}
	res, err := b.Do(ctx)
	if err == nil && len(res.Errors) > 0 {
		err = errors.New(res.Errors[0].Message)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q.class, err)
	}
	objs := getObjects(res, q.class)
	for _, o := range objs {
		if add, ok := o["_additional"].(map[string]any); ok {
			if id, ok := add["id"].(string); ok {
				o["_id"] = id
			}
			switch v := add["score"].(type) {
			case string:
				o["_score"] = v
			case float64:
				o["_score"] = strconv.FormatFloat(v, 'g', -1, 64)
			}
			delete(o, "_additional")
		}
	}
	return objs, nil
}

// count returns how many objects of class match where.
func (s *core) count(ctx context.Context, class string, where *filters.WhereBuilder) (int, error) {
	o, err := s.aggregate(ctx, class, where, graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}})
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", class, err)
	}
	meta, _ := o["meta"].(map[string]any)
	n, _ := meta["count"].(float64)
	return int(n), nil
}

// aggregate runs an Aggregate of fields over the objects of class matching
// where and returns its one group (empty when there is none).
func (s *core) aggregate(ctx context.Context, class string, where *filters.WhereBuilder, fields ...graphql.Field) (map[string]any, error) {
	b := s.c.GraphQL().Aggregate().WithClassName(class).WithFields(fields...)
	if where != nil {
		b = b.WithWhere(where)
	}
	res, err := b.Do(ctx)
	if err == nil && len(res.Errors) > 0 {
		err = errors.New(res.Errors[0].Message)
	}
	if err != nil {
		return nil, err
	}
	agg, _ := res.Data["Aggregate"].(map[string]any)
	list, _ := agg[class].([]any)
	if len(list) == 0 {
		return map[string]any{}, nil
	}
	o, _ := list[0].(map[string]any)
	return o, nil
}

// countBy returns how many objects of class match where, by the value of
// prop.
func (s *core) countBy(ctx context.Context, class, prop string, where *filters.WhereBuilder) (map[string]int, error) {
	b := s.c.GraphQL().Aggregate().WithClassName(class).WithGroupBy(prop).WithFields(
		graphql.Field{Name: "groupedBy", Fields: []graphql.Field{{Name: "value"}}},
		graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}})
	if where != nil {
		b = b.WithWhere(where)
	}
	res, err := b.Do(ctx)
	if err == nil && len(res.Errors) > 0 {
		err = errors.New(res.Errors[0].Message)
	}
	if err != nil {
		return nil, fmt.Errorf("count %s by %s: %w", class, prop, err)
	}
	agg, _ := res.Data["Aggregate"].(map[string]any)
	list, _ := agg[class].([]any)
	out := map[string]int{}
	for _, x := range list {
		o, _ := x.(map[string]any)
		g, _ := o["groupedBy"].(map[string]any)
		v, _ := g["value"].(string)
		meta, _ := o["meta"].(map[string]any)
		n, _ := meta["count"].(float64)
		out[v] = int(n)
	}
	return out, nil
}

// decodeRecord decodes an object's "record" into v.
func decodeRecord(o map[string]any, v any) error {
	rec, _ := o["record"].(string)
	if err := json.Unmarshal([]byte(rec), v); err != nil {
		return fmt.Errorf("a damaged record: %w", err)
	}
	return nil
}

func encodeRecord(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: a record that JSON cannot encode: %v", err))
	}
	return string(b)
}

// Filters.

func and(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	var ops []*filters.WhereBuilder
	for _, w := range ws {
		if w != nil {
			ops = append(ops, w)
		}
	}
	switch len(ops) {
	case 0:
		return nil
	case 1:
		return ops[0]
	}
	return filters.Where().WithOperator(filters.And).WithOperands(ops)
}

func or(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	if len(ws) == 1 {
		return ws[0]
	}
	return filters.Where().WithOperator(filters.Or).WithOperands(ws)
}

func not(w *filters.WhereBuilder) *filters.WhereBuilder {
	return filters.Where().WithOperator(filters.Not).WithOperands([]*filters.WhereBuilder{w})
}

// anyText is prop holding any of vs (one of them, for a field; any of
// the words, for the analysed words).
func anyText(prop string, vs []string) *filters.WhereBuilder {
	if len(vs) == 1 {
		return eqText(prop, vs[0])
	}
	return filters.Where().WithPath([]string{prop}).WithOperator(filters.ContainsAny).WithValueText(vs...)
}

// allText is the analysed words holding every one of vs.
func allText(prop string, vs []string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{prop}).WithOperator(filters.ContainsAll).WithValueText(vs...)
}

func dateCmp(prop string, op filters.WhereOperator, t time.Time) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{prop}).WithOperator(op).WithValueDate(t)
}

func joinWords(ws []string) string {
	n := 0
	for _, w := range ws {
		n += len(w) + 1
	}
	b := make([]byte, 0, n)
	for i, w := range ws {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, w...)
	}
	return string(b)
}

func props(o *models.Object) map[string]any {
	m, _ := o.Properties.(map[string]any)
	return m
}
