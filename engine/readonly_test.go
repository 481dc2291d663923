package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sift-search/sift/record"
)

// dirListing names every file under dir with its size and modification
// time, to show a reader changed nothing.
func dirListing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReadOnly: a read-only engine sees what the log and the snapshot hold,
// writes nothing (not even a torn tail's cut), refuses writes, and never
// shares its directory with a writer.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	for i := range 3 {
		if _, err := e.PutDocuments([]record.Document{{Title: fmt.Sprint("doc ", i), Content: fmt.Sprint("alpha document ", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutDocuments([]record.Document{{Title: "after the snapshot", Content: "only in the log"}}); err != nil {
		t.Fatal(err)
	}
	want := fingerprint(t, e)
	e.crash()

	// A torn tail: half a record after the last one.
	segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if len(segs) == 0 {
		t.Fatal("no log segment")
	}
	f, err := os.OpenFile(segs[len(segs)-1], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{9, 9, 9, 9, 9})
	f.Close()
	before := dirListing(t, dir)

	r := openDir(t, dir, func(o *Options) { o.ReadOnly = true })
	if got := fingerprint(t, r); got != want {
		t.Errorf("read-only view\n%s\nwant\n%s", got, want)
	}
	if _, err := r.PutDocuments([]record.Document{{Title: "x", Content: "y"}}); !errors.Is(err, record.ErrReadOnly) {
		t.Errorf("write to a read-only engine: %v", err)
	}
	if _, err := Open(Options{DataDir: dir, NoSync: true}); err == nil {
		t.Error("a writer opened the directory a reader holds")
	}
	r2 := openDir(t, dir, func(o *Options) { o.ReadOnly = true })
	r2.Close()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if after := dirListing(t, dir); after != before {
		t.Errorf("the reader changed the directory:\n%s\nwas\n%s", after, before)
	}

	w := openDir(t, dir) // the writer cuts the tail and goes on
	if got := fingerprint(t, w); got != want {
		t.Errorf("after the reader, the writer sees\n%s\nwant\n%s", got, want)
	}
	if _, err := Open(Options{DataDir: dir, ReadOnly: true}); err == nil {
		t.Error("a reader opened the directory a writer holds")
	}
	w.Close()

	if _, err := Open(Options{DataDir: t.TempDir(), ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "no Sift data") {
		t.Errorf("read-only open of an empty directory: %v", err)
	}
}
