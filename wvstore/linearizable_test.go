package wvstore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/data/replication"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/sift-search/sift/internal/weaviatetest"
)

// TestClassCreationIsLinearizable is the ground the store's compare-and-set
// stands on (docs/weaviate.md): of three concurrent creators of one
// collection, one per node of a 3-node cluster, exactly one succeeds, every
// time — schema changes go through Weaviate's Raft. It also logs how the
// other candidates fared (object creation at consistency ALL, tenant and
// property creation), which are not (measured 2026-11-26: object creation
// let 2 or 3 succeed in 38 of 40 trials; tenant creation is idempotent).
func TestClassCreationIsLinearizable(t *testing.T) {
	cl := weaviatetest.Start(t, 3)
	ctx := context.Background()
	var clients []*weaviate.Client
	for _, n := range cl.Nodes {
		c, err := weaviate.NewClient(weaviate.Config{Host: n.URL()[len("http://"):], Scheme: "http"})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	c := clients[0]
	if err := c.Schema().ClassCreator().WithClass(&models.Class{Class: "ProbeObj", Vectorizer: "none",
		ReplicationConfig: &models.ReplicationConfig{Factor: 3},
		Properties:        []*models.Property{{Name: "who", DataType: []string{"text"}}}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Schema().ClassCreator().WithClass(&models.Class{Class: "ProbeLocks", Vectorizer: "none",
		ReplicationConfig:  &models.ReplicationConfig{Factor: 3},
		MultiTenancyConfig: &models.MultiTenancyConfig{Enabled: true},
		Properties:         []*models.Property{{Name: "who", DataType: []string{"text"}}}}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	objWins, tenWins, classWins, propWins := map[int]int{}, map[int]int{}, map[int]int{}, map[int]int{}
	trials := 40
	if testing.Short() {
		trials = 10
	}
	for trial := range trials {
		var wg sync.WaitGroup
		var mu sync.Mutex
		ow, tw, cw, pw := 0, 0, 0, 0
		id := metaID("probe", fmt.Sprint(trial))
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.Data().Creator().WithClassName("ProbeObj").WithID(id).WithConsistencyLevel(replication.ConsistencyLevel.ALL).
					WithProperties(map[string]any{"who": fmt.Sprint(i)}).Do(ctx)
				err2 := c.Schema().TenantsCreator().WithClassName("ProbeLocks").WithTenants(models.Tenant{Name: fmt.Sprint("t", trial)}).Do(ctx)
				err3 := c.Schema().ClassCreator().WithClass(&models.Class{Class: fmt.Sprint("ProbeLock", trial), Vectorizer: "none",
					Properties: []*models.Property{{Name: "who", DataType: []string{"text"}}}}).Do(ctx)
				err4 := c.Schema().PropertyCreator().WithClassName("ProbeObj").WithProperty(&models.Property{Name: fmt.Sprint("p", trial), DataType: []string{"text"}}).Do(ctx)
				mu.Lock()
				if err3 == nil {
					cw++
				}
				if err4 == nil {
					pw++
				}
				if err == nil {
					ow++
				}
				if err2 == nil {
					tw++
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		objWins[ow]++
		tenWins[tw]++
		classWins[cw]++
		propWins[pw]++
	}
	t.Logf("successes per trial -> trials: class creation %v; property creation %v", classWins, propWins)
	if classWins[1] != trials {
		t.Errorf("class creation: %v (successes per trial -> trials), want exactly one success in every trial", classWins)
	}
	t.Logf("object creation, successes per trial -> trials: %v", objWins)
	t.Logf("tenant creation, successes per trial -> trials: %v", tenWins)
}
