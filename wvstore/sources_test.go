package wvstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/record"
)

// TestSources: the memory store's source semantics on a 3-node cluster at
// replication 3: versions, compare-and-set, no update lost among writers
// on three nodes, cursors as records of their own, deletion and
// re-creation with versions that keep rising, ids derived and unique.
func TestSources(t *testing.T) {
	cl := weaviatetest.Start(t, 3)
	ctx := context.Background()
	var stores []*Store
	for _, n := range cl.Nodes {
		s, err := Open(ctx, Options{URL: n.URL(), Namespace: "SiftT", Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	s := stores[0]
	if src, ok := s.Source(record.UploadsSourceID); !ok || src.Type != "upload" {
		t.Fatalf("the uploads source: %+v %v", src, ok)
	}
	a, err := s.PutSource(record.Source{ID: "acme", Name: "Acme", Type: "slack", Cursor: "c0", Config: map[string]any{"n": 0.0}})
	if err != nil || a.Version == 0 || a.Cursor != "c0" || a.CreatedAt.IsZero() {
		t.Fatalf("put: %+v %v", a, err)
	}
	if got, ok := stores[1].Source("acme"); !ok || got.Version != a.Version || got.Name != "Acme" || got.Cursor != "c0" {
		t.Fatalf("read through another node: %+v %v", got, ok)
	}
	if _, err := s.PutSourceIf(record.Source{ID: "acme", Name: "Stale", Type: "slack"}, a.Version-1); !errors.Is(err, record.ErrConflict) {
		t.Fatalf("stale PutSourceIf: %v", err)
	}
	b, err := s.PutSourceIf(record.Source{ID: "acme", Name: "Acme 2", Type: "slack", Cursor: "ignored"}, a.Version)
	if err != nil || b.Version != a.Version+1 || b.Cursor != "c0" || !b.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("PutSourceIf: %+v %v", b, err)
	}
	if _, err := s.CreateSource(record.Source{ID: "acme", Name: "Again", Type: "slack"}); !errors.Is(err, record.ErrConflict) {
		t.Fatalf("CreateSource of an existing id: %v", err)
	}
	// Writers on three nodes each add to a counter: no update is lost.
	const perWriter = 4
	var wg sync.WaitGroup
	for _, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				if _, err := st.UpdateSource("acme", func(x *record.Source) error {
					n, _ := x.Config["n"].(float64) // PutSourceIf above left no config
					if x.Config == nil {
						x.Config = map[string]any{}
					}
					x.Config["n"] = n + 1
					return nil
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, _ := s.Source("acme")
	if n := got.Config["n"].(float64); n != 3*perWriter || got.Version != b.Version+3*perWriter {
		t.Fatalf("after concurrent updates: n=%v version %d (from %d)", n, got.Version, b.Version)
	}
	// Cursors.
	if err := stores[2].SetCursor("acme", "c1"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Cursor("acme"); err != nil || c != "c1" {
		t.Fatalf("cursor %q %v", c, err)
	}
	if after, _ := s.Source("acme"); after.Version != got.Version {
		t.Fatalf("a cursor moved the version: %d -> %d", got.Version, after.Version)
	}
	if err := s.SetCursor("nope", "x"); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("cursor of an unknown source: %v", err)
	}
	// Deletion and re-creation: versions keep rising, the cursor is gone.
	if err := s.DeleteSource("acme"); err != nil {
		t.Fatal(err)
	}
	if _, ok := stores[1].Source("acme"); ok {
		t.Fatal("a deleted source is read")
	}
	if _, err := s.UpdateSource("acme", func(*record.Source) error { return nil }); !errors.Is(err, record.ErrNotFound) {
		t.Fatalf("update of a deleted source: %v", err)
	}
	if err := s.DeleteSource(record.UploadsSourceID); !errors.Is(err, record.ErrInvalid) {
		t.Fatalf("deleting uploads: %v", err)
	}
	re, err := s.CreateSource(record.Source{ID: "acme", Name: "Acme again", Type: "slack"})
	if err != nil || re.Version <= got.Version || re.Cursor != "" {
		t.Fatalf("re-created: %+v %v (old version %d)", re, err, got.Version)
	}
	if _, err := s.PutSourceIf(record.Source{ID: "acme", Name: "x", Type: "slack"}, got.Version); !errors.Is(err, record.ErrConflict) {
		t.Fatalf("a CAS read before the deletion landed on the new source: %v", err)
	}
	// Derived ids, unique even when created at once on three nodes.
	ids := make([]string, len(stores))
	for i, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src, err := st.CreateSource(record.Source{Name: "Café Chat", Type: "discord"})
			if err != nil {
				t.Error(err)
			}
			ids[i] = src.ID
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("derived ids %v: a duplicate", ids)
		}
		seen[id] = true
	}
	if !seen["cafe-chat"] {
		t.Fatalf("derived ids %v", ids)
	}
	all := s.Sources()
	var names []string
	for _, x := range all {
		names = append(names, x.ID)
	}
	if fmt.Sprint(names) != fmt.Sprint([]string{"acme", "cafe-chat", "cafe-chat-2", "cafe-chat-3", record.UploadsSourceID}) {
		t.Fatalf("sources %v", names)
	}
	// The listing pages through the version objects.
	defer func(p int) { sourcePage = p }(sourcePage)
	sourcePage = 4
	var paged []string
	for _, x := range stores[2].Sources() {
		paged = append(paged, x.ID)
	}
	if fmt.Sprint(paged) != fmt.Sprint(names) {
		t.Fatalf("paged listing %v, want %v", paged, names)
	}
}
