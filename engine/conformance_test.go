package engine_test

import (
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/storetest"
)

// dirEngine is an engine with the data dir it was opened on, so the
// suite can reopen it.
type dirEngine struct {
	*engine.Engine
	dir string
}

func openEngine(t *testing.T, dir string) *dirEngine {
	t.Helper()
	e, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &dirEngine{e, dir}
}

// The engine is a store the suite can run against.
var _ storetest.Store = (*engine.Engine)(nil)

// TestConformance runs the store's conformance suite against the engine,
// restarts included.
func TestConformance(t *testing.T) {
	storetest.RunHarness(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store { return openEngine(t, t.TempDir()) },
		Reopen: func(t *testing.T, s storetest.Store) storetest.Store {
			d := s.(*dirEngine)
			if err := d.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			return openEngine(t, d.dir)
		},
	})
}

// TestConformanceInMemory runs the suite against an engine without a
// data dir.
func TestConformanceInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		e, err := engine.Open(engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	})
}
