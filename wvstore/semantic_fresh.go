package wvstore

import (
	"context"
	"fmt"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
)

// Read-your-writes on the cluster (docs/weaviate.md "Semantic search on the
// cluster"): a search waits, up to SemanticOptions.FreshWait, until the
// chunks reflect every write acknowledged before it, wherever the indexer
// runs. The indexer's watermark is when its last complete pass started: a
// change visible by then is indexed. A change is visible at most
// changeOverlap after the time it holds (the mark is written right after
// it is stamped; the indexer rests on the same bound). So the chunks are
// fresh for a search starting at t when the watermark is at least t, or
// when no change holds a time later than the watermark less
// changeOverlap — the common case, checked with two small reads: the
// watermark and one change. Otherwise the search wakes the indexer (when
// it runs in this process) and reads the watermark again every
// freshPoll. The nodes' clocks are taken to agree within a fraction of
// changeOverlap, as the indexer takes them to.

// freshPoll is how often a waiting search reads the watermark again.
const freshPoll = 50 * time.Millisecond

// catchUp waits until the chunks reflect every write acknowledged before
// the call, at most wait, and reports whether they do.
func (x *Semantic) catchUp(ctx context.Context, wait time.Duration) bool {
	t := time.Now().UnixMicro()
	deadline := time.Now().Add(wait)
	for {
		if ok, err := x.reached(ctx, t); err == nil && ok {
			return true
		} else if err != nil {
			x.log.Warn("semantic search: the indexer's progress could not be read", "err", err)
		}
		if !time.Now().Before(deadline) {
			return false
		}
		x.wakeIndexer()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(freshPoll):
		}
	}
}

// reached reports whether every change visible at time t (unix micros) is
// indexed.
func (x *Semantic) reached(ctx context.Context, t int64) (bool, error) {
	w, err := x.s.watermark(ctx)
	if err != nil || w >= t {
		return err == nil, err
	}
	later, err := x.s.changedAfter(ctx, w-changeOverlap.Microseconds())
	return err == nil && !later, err
}

// changedAfter reports whether a change holds a time after at.
func (s *chunks) changedAfter(ctx context.Context, at int64) (bool, error) {
	objs, err := s.get(ctx, getQuery{class: s.class("Change"), fields: []string{"owner"},
		where: filters.Where().WithPath([]string{"at"}).WithOperator(filters.GreaterThan).WithValueInt(at), limit: 1})
	if err != nil {
		return false, fmt.Errorf("read the change log: %w", err)
	}
	return len(objs) > 0, nil
}

// wakeIndexer cuts the indexer's rest short, when it runs in this process.
func (x *Semantic) wakeIndexer() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}
