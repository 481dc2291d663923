package wvstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"
)

// getProps reads an object's properties at consistency QUORUM; ok is false
// when there is no such object.
func getProps(ctx context.Context, c *weaviate.Client, class, id string) (props map[string]any, ok bool, err error) {
	var objs []*models.Object
	// A read that repairs a replica while a writer changes the object
	// fails (seen on v1.39.0 when sources are created at once).
	err = retryRepair(func() error {
		objs, err = c.Data().ObjectsGetter().WithClassName(class).WithID(id).
			WithConsistencyLevel(replication.ConsistencyLevel.QUORUM).Do(ctx)
		return err
	})
	if notFound(err) || err == nil && len(objs) == 0 {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s %s: %w", class, id, err)
	}
	props, _ = objs[0].Properties.(map[string]any)
	return props, true, nil
}

// createObject creates an object at consistency QUORUM; existed reports
// that one of the id was there already (and is left as it is).
func createObject(ctx context.Context, c *weaviate.Client, class, id string, props map[string]any) (existed bool, err error) {
	// Two writers of the same object at once may meet in a replica's read
	// repair; the write is idempotent, so it is tried again.
	err = retryRepair(func() error {
		_, err := c.Data().Creator().WithClassName(class).WithID(id).
			WithConsistencyLevel(replication.ConsistencyLevel.QUORUM).WithProperties(props).Do(ctx)
		return err
	})
	if alreadyExists(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s %s: %w", class, id, err)
	}
	return false, nil
}

// eqText is the filter prop == v.
func eqText(prop, v string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{prop}).WithOperator(filters.Equal).WithValueText(v)
}

// getObjects returns the objects of class in a GraphQL Get answer.
func getObjects(res *models.GraphQLResponse, class string) []map[string]any {
	get, _ := res.Data["Get"].(map[string]any)
	list, _ := get[class].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, o := range list {
		if m, ok := o.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// retryRepair runs fn, up to 8 times with a backoff while it fails on a
// repair conflict, and returns its last error.
func retryRepair(fn func() error) error {
	var err error
	for attempt := range 8 {
		backoff(attempt)
		if err = fn(); !repairConflict(err) {
			return err
		}
	}
	return err
}

// repairConflict reports a write or QUORUM read that met another writer's
// change in a replica's read repair: "… changed during repair: conflict"
// (v1.35.2), or "… changed during repair, …" without the word (v1.39.0).
func repairConflict(err error) bool {
	var wce *fault.WeaviateClientError
	return errors.As(err, &wce) && wce.StatusCode == 500 &&
		(strings.Contains(wce.Msg, "conflict") || strings.Contains(wce.Msg, "changed during repair"))
}
