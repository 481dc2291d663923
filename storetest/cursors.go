package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/sift-search/sift/record"
)

// testCursorRecords: a crawl cursor is a record of its own: set, read back
// (also as the source's Cursor), kept across a restart, not a write of the
// source's record, and deleted with its source.
func testCursorRecords(t *testing.T, h Harness) {
	s := h.Open(t)
	src := mustPutSource(t, s, record.Source{ID: "acme", Name: "Acme", Type: "slack"})
	if c, err := s.Cursor("acme"); err != nil || c != "" {
		t.Errorf("cursor before the first: %q, %v", c, err)
	}
	if err := s.SetCursor("acme", "page-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCursor("acme", "page-2"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Cursor("acme"); err != nil || c != "page-2" {
		t.Errorf("cursor %q, %v; want page-2", c, err)
	}
	got, _ := s.Source("acme")
	if got.Cursor != "page-2" || got.Version != src.Version {
		t.Errorf("source reads cursor %q version %d; want page-2 and version %d", got.Cursor, got.Version, src.Version)
	}
	// A write of the source record that does not change the cursor keeps it.
	if _, err := s.UpdateSource("acme", func(x *record.Source) error { x.Name = "Acme 2"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSourceIf(record.Source{ID: "acme", Name: "Acme 3", Type: "slack", Cursor: "ignored"}, src.Version+1); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Cursor("acme"); c != "page-2" {
		t.Errorf("cursor after source writes: %q", c)
	}
	if err := s.SetCursor("nope", "x"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("SetCursor of an unknown source: %v", err)
	}
	if _, err := s.Cursor("nope"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("Cursor of an unknown source: %v", err)
	}

	if h.Reopen != nil {
		s = h.Reopen(t, s)
		if c, err := s.Cursor("acme"); err != nil || c != "page-2" {
			t.Errorf("reopened: cursor %q, %v", c, err)
		}
		if snap, ok := s.(Snapshotter); ok {
			if err := s.SetCursor("acme", "page-3"); err != nil {
				t.Fatal(err)
			}
			if err := snap.Snapshot(); err != nil {
				t.Fatal(err)
			}
			s = h.Reopen(t, s)
			if c, _ := s.Cursor("acme"); c != "page-3" {
				t.Errorf("reopened after a snapshot: cursor %q", c)
			}
		}
	}

	if err := s.DeleteSource("acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cursor("acme"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("cursor of a deleted source: %v", err)
	}
	mustPutSource(t, s, record.Source{ID: "acme", Name: "Acme again", Type: "slack"})
	if c, err := s.Cursor("acme"); err != nil || c != "" {
		t.Errorf("a source made again under the id has cursor %q, %v", c, err)
	}
	if h.Reopen != nil {
		s = h.Reopen(t, s)
		if c, err := s.Cursor("acme"); err != nil || c != "" {
			t.Errorf("reopened: the deleted cursor is back: %q, %v", c, err)
		}
	}
}

// testSourceVersionCAS: every write of a source adds to its version; a
// PutSourceIf on a stale version is ErrConflict and changes nothing; and
// UpdateSource from many goroutines loses no update.
func testSourceVersionCAS(t *testing.T, h Harness) {
	s := h.Open(t)
	v1 := mustPutSource(t, s, record.Source{ID: "acme", Name: "Acme", Type: "slack", Config: map[string]any{"n": 0.0}})
	v2, err := s.UpdateSource("acme", func(x *record.Source) error { x.Name = "Acme 2"; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version <= v1.Version {
		t.Errorf("versions %d then %d: not growing", v1.Version, v2.Version)
	}
	v3, err := s.PutSourceIf(record.Source{ID: "acme", Name: "Acme 3", Type: "slack", Config: map[string]any{"n": 0.0}}, v2.Version)
	if err != nil {
		t.Fatal(err)
	}
	if v3.Version <= v2.Version {
		t.Errorf("versions %d then %d: not growing", v2.Version, v3.Version)
	}
	if got, _ := s.Source("acme"); got.Version != v3.Version || got.Name != "Acme 3" {
		t.Errorf("stored version %d name %q, want %d Acme 3", got.Version, got.Name, v3.Version)
	}

	// Stale: nothing changes.
	if _, err := s.PutSourceIf(record.Source{ID: "acme", Name: "Stale", Type: "slack"}, v2.Version); !errors.Is(err, record.ErrConflict) {
		t.Errorf("stale PutSourceIf: %v, want ErrConflict", err)
	}
	if got, _ := s.Source("acme"); got.Version != v3.Version || got.Name != "Acme 3" {
		t.Errorf("a stale PutSourceIf changed the source: version %d name %q", got.Version, got.Name)
	}
	// Version 0 creates only what does not exist.
	if _, err := s.PutSourceIf(record.Source{ID: "acme", Name: "New", Type: "slack"}, 0); !errors.Is(err, record.ErrConflict) {
		t.Errorf("PutSourceIf at version 0 of an existing source: %v, want ErrConflict", err)
	}
	if n, err := s.PutSourceIf(record.Source{ID: "fresh", Name: "Fresh", Type: "web"}, 0); err != nil || n.Version == 0 {
		t.Errorf("PutSourceIf creating: version %d, %v", n.Version, err)
	}

	// Concurrent read-modify-writes through UpdateSource.
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.UpdateSource("acme", func(x *record.Source) error {
				n, _ := x.Config["n"].(float64)
				x.Config["n"] = n + 1
				return nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent UpdateSource: %v", err)
		}
	}
	got, _ := s.Source("acme")
	if got.Config["n"] != float64(workers) {
		t.Errorf("counter %v after %d concurrent increments", got.Config["n"], workers)
	}
	if got.Version != v3.Version+workers {
		t.Errorf("version %d after %d updates from %d", got.Version, workers, v3.Version)
	}
	if h.Reopen != nil {
		s = h.Reopen(t, s)
		if again, _ := s.Source("acme"); again.Version != got.Version {
			t.Errorf("reopened: version %d, was %d", again.Version, got.Version)
		}
	}
}
