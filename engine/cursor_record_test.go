package engine

import (
	"testing"

	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// TestSourceRecordCursorMigration: a source record written before versions
// and cursor records carries the crawl cursor, which applying it stores
// (set or cleared); a newer record stores its cursor field only when it
// says so, and keeps its version.
func TestSourceRecordCursorMigration(t *testing.T) {
	eng, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	replay := func(o op) {
		t.Helper()
		var e bin.Enc
		if err := o.encode(&e); err != nil {
			t.Fatal(err)
		}
		payload := e.B
		if o.kind == opPutSource && o.source.Version == 0 {
			// As written before: the record ends after the last import.
			e.B = e.B[:0]
			if err := encodeSource(&e, &o.source); err != nil {
				t.Fatal(err)
			}
			payload = e.B
		}
		got, err := decodeOp(o.kind, payload)
		if err != nil {
			t.Fatal(err)
		}
		eng.writeMu.Lock()
		eng.apply(&got)
		eng.writeMu.Unlock()
	}
	src := record.Source{ID: "s", Name: "S", Type: "web"}
	old := src
	old.Cursor = "old-cursor"
	replay(op{kind: opPutSource, source: old})
	if c, err := eng.Cursor("s"); err != nil || c != "old-cursor" {
		t.Fatalf("old record's cursor: %q, %v", c, err)
	}
	if s, _ := eng.Source("s"); s.Version != 0 {
		t.Errorf("old record's version %d, want 0", s.Version)
	}
	replay(op{kind: opPutCursor, id: "s", cursor: "new-cursor"})
	newer := src
	newer.Version, newer.Cursor = 5, "ignored"
	replay(op{kind: opPutSource, source: newer})
	if c, _ := eng.Cursor("s"); c != "new-cursor" {
		t.Errorf("a record without its cursor flag changed the cursor to %q", c)
	}
	if s, _ := eng.Source("s"); s.Version != 5 {
		t.Errorf("version %d, want 5", s.Version)
	}
	newer.Version, newer.Cursor = 6, "set"
	replay(op{kind: opPutSource, source: newer, cursorOK: true})
	if c, _ := eng.Cursor("s"); c != "set" {
		t.Errorf("a record with its cursor flag: cursor %q", c)
	}
	old.Cursor = "" // an old record without a cursor clears it, as it did
	replay(op{kind: opPutSource, source: old})
	if c, _ := eng.Cursor("s"); c != "" {
		t.Errorf("old record without a cursor left %q", c)
	}
	replay(op{kind: opDeleteSource, id: "s"})
	replay(op{kind: opPutCursor, id: "s", cursor: "orphan"}) // skipped: no such source
	if _, err := eng.Cursor("s"); err == nil {
		t.Error("a cursor record of a deleted source made it exist")
	}
}

// TestUpdateSourceAcrossRecreate: an update that read a source before it
// was deleted and created again never lands on the new one; it reads the
// new source and applies its change there.
func TestUpdateSourceAcrossRecreate(t *testing.T) {
	e := openDir(t, t.TempDir())
	defer e.Close()
	if _, err := e.CreateSource(record.Source{ID: "x", Name: "Old", Type: "web", Visibility: record.VisibilityPublic}); err != nil {
		t.Fatal(err)
	}
	first := true
	got, err := e.UpdateSource("x", func(s *record.Source) error {
		if first {
			first = false
			if err := e.DeleteSource("x"); err != nil {
				return err
			}
			if _, err := e.CreateSource(record.Source{ID: "x", Name: "New", Type: "web", Visibility: record.VisibilityPrivate}); err != nil {
				return err
			}
		}
		s.Schedule = "1h"
		return nil
	})
	if err != nil || got.Name != "New" || got.Visibility != record.VisibilityPrivate || got.Schedule != "1h" {
		t.Fatalf("update across a re-creation: %+v, %v", got, err)
	}
}
