package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// Reading the change log a page at a time. A change's time ("at", unix
// microseconds) is past what GraphQL's 32-bit Int can carry — Weaviate
// answers null — so queries filter and sort by it (the cluster compares
// 64-bit values) and the times themselves are read object by object over
// REST. A full page's last time is where the next page starts; it is
// used only when the page read again after the times gives the same
// changes in the same order, so no change moved (was written again) while
// the times were read.

// pageAttempts bounds the reads of a page whose changes keep moving.
const pageAttempts = 3

// changesAfter returns the next changes after time after, oldest first:
// a page, completed with every change of the page's last time; when more
// may follow, full is set and next is that time, where the next page
// starts.
func (s *chunks) changesAfter(ctx context.Context, after int64) (page []change, next int64, full bool, err error) {
	var owners []string
	var times map[string]int64
	for attempt := 1; ; attempt++ {
		if owners, err = s.changePage(ctx, after); err != nil {
			return nil, 0, false, err
		}
		if times, err = s.changeTimes(ctx, owners); err != nil {
			return nil, 0, false, err
		}
		if len(owners) < changesPerPage {
			return withTimes(owners, times), 0, false, nil
		}
		again, err := s.changePage(ctx, after)
		if err != nil {
			return nil, 0, false, err
		}
		if slices.Equal(owners, again) {
			break
		}
		if attempt == pageAttempts {
			return nil, 0, false, fmt.Errorf("read the change log: changes kept moving while a page was read (%d times)", attempt)
		}
	}
	last, ok := times[owners[len(owners)-1]]
	if !ok { // deleted with its source meanwhile: read the page again next time
		return nil, after, true, nil
	}
	page = withTimes(owners, times)
	for len(page) > 0 && page[len(page)-1].at >= last {
		page = page[:len(page)-1]
	}
	objs, err := s.getAll(ctx, getQuery{class: s.class("Change"), fields: []string{"owner"},
		where: filters.Where().WithPath([]string{"at"}).WithOperator(filters.Equal).WithValueInt(last)})
	if err != nil {
		return nil, 0, false, err
	}
	same := make([]string, 0, len(objs))
	for _, o := range objs {
		if owner, _ := o["owner"].(string); owner != "" {
			same = append(same, owner)
		}
	}
	sameTimes, err := s.changeTimes(ctx, same)
	if err != nil {
		return nil, 0, false, err
	}
	return append(page, withTimes(same, sameTimes)...), last, true, nil
}

// changePage returns the owners of the changesPerPage oldest changes after
// time after, in the order of their times (then owners).
func (s *chunks) changePage(ctx context.Context, after int64) ([]string, error) {
	objs, err := s.get(ctx, getQuery{class: s.class("Change"), fields: []string{"owner"},
		where: filters.Where().WithPath([]string{"at"}).WithOperator(filters.GreaterThan).WithValueInt(after),
		sort:  []graphql.Sort{{Path: []string{"at"}, Order: graphql.Asc}, {Path: []string{"owner"}, Order: graphql.Asc}},
		limit: changesPerPage})
	if err != nil {
		return nil, fmt.Errorf("read the change log: %w", err)
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		owner, _ := o["owner"].(string)
		out = append(out, owner)
	}
	return out, nil
}

// changeTimes reads the times of owners' changes, a few at once; an owner
// whose change is gone (deleted with its source) has none.
func (s *chunks) changeTimes(ctx context.Context, owners []string) (map[string]int64, error) {
	out := make(map[string]int64, len(owners))
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for _, owner := range owners {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			p, ok, err := getProps(ctx, s.c, s.class("Change"), s.objID("change", owner))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				firstErr = cmp.Or(firstErr, fmt.Errorf("read the change log: %w", err))
			case ok:
				if at, isNum := p["at"].(float64); isNum {
					out[owner] = int64(at)
				} else {
					firstErr = cmp.Or(firstErr, fmt.Errorf("read the change log: change of %q has no time", owner))
				}
			}
		})
	}
	wg.Wait()
	return out, firstErr
}

// withTimes is the changes of owners that have a time, in order.
func withTimes(owners []string, times map[string]int64) []change {
	out := make([]change, 0, len(owners))
	for _, o := range owners {
		if at, ok := times[o]; ok {
			out = append(out, change{owner: o, at: at})
		}
	}
	return out
}

func (s *chunks) watermark(ctx context.Context) (int64, error) {
	p, ok, err := getProps(ctx, s.c, s.class("Meta"), metaID(s.opts.Namespace, watermarkKey))
	if err != nil || !ok {
		return 0, err
	}
	v, _ := p["value"].(string)
	w, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the semantic watermark %q: %w", v, err)
	}
	return w, nil
}

func (s *chunks) setWatermark(ctx context.Context, w int64) error {
	err := s.upsert(ctx, []*models.Object{{Class: s.class("Meta"), ID: strfmt.UUID(metaID(s.opts.Namespace, watermarkKey)),
		Properties: map[string]any{"key": watermarkKey, "value": strconv.FormatInt(w, 10)}}})
	if err != nil {
		return fmt.Errorf("store the semantic watermark: %w", err)
	}
	return nil
}
