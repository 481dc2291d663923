package wvstore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sift-search/sift/internal/weaviatetest"
)

// TestSteps: of writers racing for a step through different nodes of a
// 3-node cluster, exactly one takes it, and every other learns the
// winner's intent; a dropped step can be taken again.
func TestSteps(t *testing.T) {
	cl := weaviatetest.Start(t, 3)
	ctx := context.Background()
	var stores []*Store
	for _, n := range cl.Nodes {
		s, err := Open(ctx, Options{URL: n.URL(), Namespace: "SiftS", Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	for trial := range 10 {
		key := fmt.Sprint("source/acme/from/", trial)
		var wg sync.WaitGroup
		won := make([]bool, len(stores))
		seen := make([]string, len(stores))
		errs := make([]error, len(stores))
		for i, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var theirs []byte
				won[i], theirs, errs[i] = s.takeStep(ctx, key, []byte(fmt.Sprint("intent of writer ", i)))
				seen[i] = string(theirs)
			}()
		}
		wg.Wait()
		winner := -1
		for i := range stores {
			if errs[i] != nil {
				t.Fatalf("trial %d, writer %d: %v", trial, i, errs[i])
			}
			if won[i] {
				if winner >= 0 {
					t.Fatalf("trial %d: writers %d and %d both took the step", trial, winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			t.Fatalf("trial %d: nobody took the step", trial)
		}
		for i := range stores {
			if want := fmt.Sprint("intent of writer ", winner); seen[i] != want {
				t.Errorf("trial %d, writer %d sees %q, want %q", trial, i, seen[i], want)
			}
		}
	}
	s := stores[0]
	if intent, err := s.stepIntent(ctx, "never taken"); err != nil || intent != nil {
		t.Fatalf("a step never taken: %q, %v", intent, err)
	}
	if err := s.dropStep(ctx, "source/acme/from/0"); err != nil {
		t.Fatal(err)
	}
	if err := s.dropStep(ctx, "source/acme/from/0"); err != nil {
		t.Fatalf("dropping a dropped step: %v", err)
	}
	if won, _, err := stores[1].takeStep(ctx, "source/acme/from/0", []byte("again")); err != nil || !won {
		t.Fatalf("a dropped step taken again: %v %v", won, err)
	}
}
