package wvstore

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/storetest"
)

// TestConformance runs the store's conformance suite (engine/storetest)
// against a 3-node cluster at replication factor 3: each test gets a
// namespace of its own, opened through the nodes in turn; a reopened
// store is a new process's view of the same collections.
func TestConformance(t *testing.T) {
	cl := weaviatetest.Start(t, 3)
	var n atomic.Int64
	open := func(t *testing.T, ns string, node int) *Store {
		s, err := Open(context.Background(), Options{URL: cl.Nodes[node%3].URL(), Namespace: ns, Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store {
			i := int(n.Add(1))
			ns := fmt.Sprint("C", i)
			s := open(t, ns, i)
			t.Cleanup(func() { dropNamespace(t, s) })
			return s
		},
		Reopen: func(t *testing.T, s storetest.Store) storetest.Store {
			old := s.(*Store)
			return open(t, old.opts.Namespace, int(n.Add(1)))
		},
	})
}

// dropNamespace deletes a store's collections and aliases.
func dropNamespace(t *testing.T, s *Store) {
	ctx := context.Background()
	sch, err := s.c.Schema().Getter().Do(ctx)
	if err != nil {
		t.Logf("drop %s: %v", s.opts.Namespace, err)
		return
	}
	for _, cl := range sch.Classes {
		if strings.HasPrefix(cl.Class, s.opts.Namespace) && isOurs(cl.Class, s.opts.Namespace) {
			s.c.Schema().ClassDeleter().WithClassName(cl.Class).Do(ctx)
		}
	}
}

// isOurs tells a namespace's collections from another's that shares its
// prefix (C1 and C12).
func isOurs(class, ns string) bool {
	rest := class[len(ns):]
	return rest != "" && rest[0] >= 'A' && rest[0] <= 'Z'
}
