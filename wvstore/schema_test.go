package wvstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/internal/weaviatetest"
)

// TestMigrateConcurrently: Sift processes starting at once against an
// empty cluster all succeed, and leave one set of collections with every
// property and the schema version recorded; a namespace keeps instances
// apart; a newer recorded version and a foreign collection are refused.
func TestMigrateConcurrently(t *testing.T) {
	cl := weaviatetest.Start(t, 1)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftA"})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	s, err := Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftA"})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := s.c.Schema().Getter().Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]*models.Class{}
	for _, c := range schema.Classes {
		classes[c.Class] = c
	}
	for _, col := range collections {
		c := classes["SiftA"+col.suffix]
		if c == nil {
			t.Fatalf("collection SiftA%s missing", col.suffix)
		}
		if len(c.Properties) != len(col.props) {
			t.Errorf("SiftA%s: %d properties, want %d", col.suffix, len(c.Properties), len(col.props))
		}
		if c.InvertedIndexConfig.Bm25.K1 != 1.2 || c.InvertedIndexConfig.Bm25.B != 0.75 {
			t.Errorf("SiftA%s: BM25 %+v", col.suffix, c.InvertedIndexConfig.Bm25)
		}
	}
	// Another namespace is another instance.
	if _, err := Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftB"}); err != nil {
		t.Fatal(err)
	}
	// A newer schema version is refused.
	id := metaID("SiftA", "schema")
	err = s.c.Data().Updater().WithClassName("SiftAMeta").WithID(id).WithMerge().
		WithProperties(map[string]any{"value": fmt.Sprint(SchemaVersion + 1)}).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftA"}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("newer schema: %v", err)
	}
	// A collection of the same name with another shape is refused.
	err = s.c.Schema().ClassCreator().WithClass(&models.Class{Class: "SiftCSource", Vectorizer: "none",
		Properties: []*models.Property{{Name: "sourceId", DataType: []string{"int"}}}}).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftC"}); err == nil || !strings.Contains(err.Error(), "sourceId") {
		t.Fatalf("foreign collection: %v", err)
	}
	if _, err := Open(ctx, Options{URL: "localhost:8080"}); err == nil {
		t.Fatal("a URL without a scheme accepted")
	}
}
