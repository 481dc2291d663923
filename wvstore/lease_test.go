package wvstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/weaviatetest"
)

// TestLease: of processes on three nodes asking at once, exactly one holds
// the lease; it keeps it by renewing; when it stops (as a killed process
// does), another takes the next term after the time to live, and the old
// holder, back, does not.
func TestLease(t *testing.T) {
	cl := weaviatetest.Start(t, 3)
	ctx := context.Background()
	const ttl = 3 * time.Second
	var leases []*Lease
	for i, n := range cl.Nodes {
		s, err := Open(ctx, Options{URL: n.URL(), Namespace: "SiftL", Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, s.Lease("crawl", fmt.Sprint("process-", i), ttl))
	}
	held := make([]bool, len(leases))
	var wg sync.WaitGroup
	for i, l := range leases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, _, err := l.Acquire(ctx)
			if err != nil {
				t.Error(err)
			}
			held[i] = h
		}()
	}
	wg.Wait()
	holder := -1
	for i, h := range held {
		if h {
			if holder >= 0 {
				t.Fatalf("processes %d and %d both hold the lease", holder, i)
			}
			holder = i
		}
	}
	if holder < 0 {
		t.Fatal("nobody holds the lease")
	}
	other := (holder + 1) % len(leases)
	// The holder renews; the others keep being refused.
	for range 3 {
		time.Sleep(ttl / 3)
		if h, _, err := leases[holder].Acquire(ctx); err != nil || !h {
			t.Fatalf("renewal: %v %v", h, err)
		}
		if h, _, err := leases[other].Acquire(ctx); err != nil || h {
			t.Fatalf("another process took a lease being renewed: %v %v", h, err)
		}
	}
	// The holder stops; after the time to live another takes the next term.
	deadline := time.Now().Add(4 * ttl)
	for {
		h, _, err := leases[other].Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lease was not taken over")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if h, _, err := leases[holder].Acquire(ctx); err != nil || h {
		t.Fatalf("the old holder, back, holds the lease: %v %v", h, err)
	}
}
