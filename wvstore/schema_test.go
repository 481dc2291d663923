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
	"github.com/sift-search/sift/record"
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
	if !s.pairs {
		t.Error("a new cluster: phrases not filtered by pairs")
	}
	// A cluster of schema version 2 (no pairs' key) is raised to this
	// version and keeps filtering phrases by their words: its records
	// lack their pairs.
	if err := s.c.Data().Deleter().WithClassName("SiftAMeta").WithID(metaID("SiftA", pairsMetaKey)).Do(ctx); err != nil {
		t.Fatal(err)
	}
	err = s.c.Data().Updater().WithClassName("SiftAMeta").WithID(metaID("SiftA", "schema")).WithMerge().
		WithProperties(map[string]any{"value": "2"}).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // raised, then at this version
		raised, err := Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftA"})
		if err != nil {
			t.Fatal(err)
		}
		if raised.pairs {
			t.Fatal("a cluster raised from version 2 filters phrases by pairs its records lack")
		}
	}
	// A cluster made without pairs keeps that choice, whatever a later
	// process asks for; its writes carry none.
	for _, no := range []bool{true, false} {
		d, err := Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftD", NoPhrasePairs: no})
		if err != nil {
			t.Fatal(err)
		}
		if d.pairs {
			t.Fatalf("a cluster made without pairs: NoPhrasePairs %v gives pairs", no)
		}
		if _, ok := props(d.messageObject(&record.Message{Content: "to the point"}))["pairs"]; ok {
			t.Fatal("a cluster without pairs writes them")
		}
	}
	if _, ok := props(s.messageObject(&record.Message{Content: "to the point"}))["pairs"]; !ok {
		t.Fatal("a cluster with pairs does not write them")
	}
	// Processes making a cluster at once with different choices agree
	// on the first one's.
	mixed := make([]*Store, 4)
	for i := range mixed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mixed[i], errs[i] = Open(ctx, Options{URL: cl.Nodes[0].URL(), Namespace: "SiftE", NoPhrasePairs: i%2 == 1})
		}()
	}
	wg.Wait()
	for i, m := range mixed {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if m.pairs != mixed[0].pairs {
			t.Fatalf("processes made one cluster and disagree on its pairs: %v, %v", mixed[0].pairs, m.pairs)
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
