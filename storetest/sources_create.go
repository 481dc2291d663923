package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

func mustCreateSource(t *testing.T, s Store, src record.Source) record.Source {
	t.Helper()
	out, err := s.CreateSource(src)
	if err != nil {
		t.Fatalf("CreateSource(%q, %q): %v", src.ID, src.Name, err)
	}
	return out
}

// testCreateSourceDerivesID: without an id, a source's id is the slug of
// its name (record.Slugify), or "source" when the name has none, and the
// first of it, it-2, it-3… that no source has; it stays within the id's
// limits. Invalid sources are ErrInvalid and not stored.
func testCreateSourceDerivesID(t *testing.T, h Harness) {
	s := h.Open(t)
	before := time.Now().Add(-time.Second)
	first := mustCreateSource(t, s, record.Source{Name: "Acme Discord", Type: "discord", Enabled: true, Config: map[string]any{"guildId": "1"}})
	if first.ID != "acme-discord" || first.CreatedAt.Before(before) || first.UpdatedAt.Before(before) || first.Visibility != record.VisibilityPublic {
		t.Errorf("created %+v", first)
	}
	if got, ok := s.Source("acme-discord"); !ok || got.Name != "Acme Discord" || got.Type != "discord" || !got.Enabled ||
		got.Config["guildId"] != "1" || !got.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("read back %v %+v", ok, got)
	}
	for _, want := range []string{"acme-discord-2", "acme-discord-3"} {
		if got := mustCreateSource(t, s, record.Source{Name: "Acme Discord", Type: "discord"}); got.ID != want {
			t.Errorf("the same name again: id %q, want %q", got.ID, want)
		}
	}
	if got, _ := s.Source("acme-discord"); got.Config["guildId"] != "1" {
		t.Errorf("a later creation changed the first source: %+v", got)
	}

	for _, c := range []struct{ name, want string }{
		{"Café", "cafe"},
		{"Café Help & FAQ", "cafe-help-faq"},
		{"  Wren -- Site!  ", "wren-site"},
		{"Uploads", record.UploadsSourceID + "-2"}, // the built-in source has the id
		{"!!!", "source"},
		{"東京", "source-2"},
	} {
		if got := mustCreateSource(t, s, record.Source{Name: c.name, Type: "web"}); got.ID != c.want {
			t.Errorf("name %q: id %q, want %q", c.name, got.ID, c.want)
		}
	}
	if record.Slugify("Café Help & FAQ") != "cafe-help-faq" {
		t.Errorf("Slugify and CreateSource disagree")
	}

	// Ids put with PutSource count as taken; a deleted source's id is free.
	mustPutSource(t, s, record.Source{ID: "docs", Name: "X", Type: "web"})
	if got := mustCreateSource(t, s, record.Source{Name: "Docs", Type: "web"}); got.ID != "docs-2" {
		t.Errorf("name of a put id: %q, want docs-2", got.ID)
	}
	if err := s.DeleteSource("acme-discord"); err != nil {
		t.Fatal(err)
	}
	if got := mustCreateSource(t, s, record.Source{Name: "Acme Discord", Type: "discord"}); got.ID != "acme-discord" {
		t.Errorf("after deleting acme-discord: id %q", got.ID)
	}

	// A long name gives a valid id, and so does the same name again.
	long := strings.Repeat("lengthy words ", 20)
	a := mustCreateSource(t, s, record.Source{Name: long, Type: "web"})
	b := mustCreateSource(t, s, record.Source{Name: long, Type: "web"})
	if !record.ValidSourceID(a.ID) || !record.ValidSourceID(b.ID) || !strings.HasPrefix(a.ID, "lengthy-words-") || b.ID != a.ID+"-2" {
		t.Errorf("ids of a long name: %q, %q", a.ID, b.ID)
	}

	n := len(s.Sources())
	for what, src := range map[string]record.Source{
		"no name":         {Type: "web"},
		"blank name":      {Name: "  ", Type: "web"},
		"no type":         {Name: "Acme"},
		"control in name": {Name: "a\x00b", Type: "web"},
		"bad visibility":  {Name: "Acme", Type: "web", Visibility: "secret"},
		"invalid id":      {ID: "Acme", Name: "Acme", Type: "web"},
	} {
		if _, err := s.CreateSource(src); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", what, err)
		}
	}
	if len(s.Sources()) != n {
		t.Errorf("invalid sources were stored: %d sources, was %d", len(s.Sources()), n)
	}

	if h.Reopen != nil {
		s = h.Reopen(t, s)
		if got := mustCreateSource(t, s, record.Source{Name: "Acme Discord", Type: "discord"}); got.ID != "acme-discord-4" {
			t.Errorf("after a reopen: id %q, want acme-discord-4", got.ID)
		}
	}
}

// testCreateSourceConflict: creating a source with an id that exists is
// ErrConflict and leaves the stored one as it was, whether that was
// created, put or built in.
func testCreateSourceConflict(t *testing.T, h Harness) {
	s := h.Open(t)
	orig := mustCreateSource(t, s, record.Source{ID: "acme", Name: "Acme", Type: "slack", Enabled: true, Config: map[string]any{"k": "v"}})
	if orig.ID != "acme" {
		t.Fatalf("a given id became %q", orig.ID)
	}
	mustPutSource(t, s, record.Source{ID: "put", Name: "Put", Type: "web"})
	for _, id := range []string{"acme", "put", record.UploadsSourceID} {
		_, err := s.CreateSource(record.Source{ID: id, Name: "Other", Type: "web"})
		wantErr(t, "create "+id+" again", err, record.ErrConflict)
		if err != nil && !strings.Contains(err.Error(), id) {
			t.Errorf("the conflict does not name the id: %v", err)
		}
	}
	got, _ := s.Source("acme")
	if got.Name != "Acme" || got.Type != "slack" || !got.Enabled || got.Config["k"] != "v" ||
		!got.CreatedAt.Equal(orig.CreatedAt) || !got.UpdatedAt.Equal(orig.UpdatedAt) {
		t.Errorf("a refused creation changed the source: %+v, was %+v", got, orig)
	}
	if up, _ := s.Source(record.UploadsSourceID); up.Name == "Other" {
		t.Error("a refused creation replaced the uploads source")
	}
	if len(s.Sources()) != 3 {
		t.Errorf("sources after refused creations: %+v", s.Sources())
	}
	// Once deleted, the id can be created again.
	if err := s.DeleteSource("acme"); err != nil {
		t.Fatal(err)
	}
	if again := mustCreateSource(t, s, record.Source{ID: "acme", Name: "Acme again", Type: "web"}); again.Name != "Acme again" {
		t.Errorf("recreated %+v", again)
	}
}

// testCreateSourceConcurrent: creations at the same time of the same
// name all succeed with distinct ids; of the same id, exactly one does.
func testCreateSourceConcurrent(t *testing.T, h Harness) {
	s := h.Open(t)
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			src, err := s.CreateSource(record.Source{Name: "Wren site", Type: "web", Config: map[string]any{"i": float64(i)}})
			ids[i], errs[i] = src.ID, err
		})
	}
	wg.Wait()
	want := []string{"wren-site"}
	for i := 2; i <= n; i++ {
		want = append(want, fmt.Sprintf("wren-site-%d", i))
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creation %d: %v", i, err)
		}
	}
	got := slices.Clone(ids)
	slices.Sort(got)
	if slices.Sort(want); !slices.Equal(got, want) {
		t.Errorf("concurrent creations of one name: ids %v, want %v", got, want)
	}
	for i, id := range ids { // each id holds the source of the call that got it
		if src, ok := s.Source(id); !ok || src.Config["i"] != float64(i) {
			t.Errorf("source %q: %v %+v, want the config of creation %d", id, ok, src, i)
		}
	}

	var created, conflicts int
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			_, err := s.CreateSource(record.Source{ID: "dup", Name: fmt.Sprint("Dup ", i), Type: "web"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				created++
			case errors.Is(err, record.ErrConflict):
				conflicts++
			default:
				t.Errorf("creation of dup: %v", err)
			}
		})
	}
	wg.Wait()
	if created != 1 || conflicts != n-1 {
		t.Errorf("concurrent creations of one id: %d created, %d conflicts", created, conflicts)
	}
}
