package wvstore

import (
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"
)

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
