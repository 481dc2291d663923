package wvstore

import (
	"context"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/semantic"
)

// What Status reports is the cluster's: counts of chunks by embedder, the
// changes since the indexer's watermark, and the indexer's last error,
// which the indexer stores in Meta when it changes so that every process
// reports it. Status is read at most once a statusTTL.

const (
	indexerErrorKey = "semantic:error"
	statusTTL       = time.Second
)

// Status reports the state of semantic search: Embedder is the current
// embedder ("" before the built-in one is trained), Chunks the chunks,
// Vectors those with a vector of the current embedder, Skipped those it
// refused, Pending what the indexer has not done yet — changed channels
// and documents since its watermark, and chunks still to embed with the
// current embedder — and Error the indexer's last error.
func (x *Semantic) Status() semantic.Status {
	x.statusMu.Lock()
	defer x.statusMu.Unlock()
	if time.Since(x.statusAt) < statusTTL {
		return x.status
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := x.readStatus(ctx)
	if err != nil {
		st.Error = "status: " + err.Error()
	}
	x.status, x.statusAt = st, time.Now()
	return st
}

func (x *Semantic) readStatus(ctx context.Context) (semantic.Status, error) {
	st := semantic.Status{Index: "hnsw"}
	emb, err := x.current(ctx, false)
	if err != nil {
		return st, err
	}
	chunks := x.s.class("Chunk")
	if st.Chunks, err = x.s.count(ctx, chunks, nil); err != nil {
		return st, err
	}
	waiting := 0
	if emb != nil {
		st.Embedder = emb.Name()
		counts, err := x.s.countBy(ctx, chunks, "embedder", nil)
		if err != nil {
			return st, err
		}
		st.Vectors, st.Skipped = counts[st.Embedder], counts[refusedBy(st.Embedder)]
		waiting = st.Chunks - st.Vectors - st.Skipped
	}
	w, err := x.s.watermark(ctx)
	if err != nil {
		return st, err
	}
	changed, err := x.s.count(ctx, x.s.class("Change"),
		filters.Where().WithPath([]string{"at"}).WithOperator(filters.GreaterThanEqual).WithValueInt(w))
	if err != nil {
		return st, err
	}
	st.Pending = changed + waiting
	p, _, err := getProps(ctx, x.s.c, x.s.class("Meta"), metaID(x.s.opts.Namespace, indexerErrorKey))
	if err != nil {
		return st, err
	}
	st.Error, _ = p["value"].(string)
	return st, nil
}

// report stores the indexer's error (or its absence) in Meta when it
// changed.
func (x *Semantic) report(ctx context.Context, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if x.ix.reported != nil && *x.ix.reported == msg || ctx.Err() != nil {
		return
	}
	werr := x.s.upsert(ctx, []*models.Object{{Class: x.s.class("Meta"), ID: strfmt.UUID(metaID(x.s.opts.Namespace, indexerErrorKey)),
		Properties: map[string]any{"key": indexerErrorKey, "value": msg}}})
	if werr != nil {
		x.log.Warn("semantic indexer: store its status", "err", werr)
		return
	}
	x.ix.reported = &msg
}
