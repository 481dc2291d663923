package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// testEmptyStore: a new store holds the built-in uploads source, public
// and enabled, and nothing else.
func testEmptyStore(t *testing.T, h Harness) {
	s := h.Open(t)
	srcs := s.Sources()
	if len(srcs) != 1 || srcs[0].ID != record.UploadsSourceID {
		t.Fatalf("sources of an empty store: %+v", srcs)
	}
	up, ok := s.Source(record.UploadsSourceID)
	if !ok || !up.Enabled || up.Hidden() {
		t.Errorf("uploads source: %v %+v", ok, up)
	}
	if c := s.Counts(true); c.Channels != 0 || c.Messages != 0 || c.Documents != 0 || c.Sources != 1 {
		t.Errorf("counts of an empty store: %+v", c)
	}
	if docs, total := s.Documents(0, 10, true); len(docs) != 0 || total != 0 {
		t.Errorf("documents of an empty store: %d %+v", total, docs)
	}
	if chs := s.Channels("", true); len(chs) != 0 {
		t.Errorf("channels of an empty store: %+v", chs)
	}
	if _, ok := s.Source("nope"); ok {
		t.Error("an unknown source is found")
	}
}

func configJSON(t *testing.T, c map[string]any) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testPutSource: a put source reads back as given, stamped; a put of the
// same id replaces it and keeps its creation time; Sources is ordered by id.
func testPutSource(t *testing.T, h Harness) {
	s := h.Open(t)
	before := time.Now().Add(-time.Second)
	in := record.Source{ID: "acme", Name: "Acme Slack", Type: "slack", Enabled: true, Schedule: "1h",
		Config: map[string]any{"token": "xoxb-1", "n": 3.0, "list": []any{"a", "b"}}, Cursor: "c-1"}
	out := mustPutSource(t, s, in)
	if out.CreatedAt.Before(before) || out.UpdatedAt.Before(before) {
		t.Errorf("stamps: created %v updated %v", out.CreatedAt, out.UpdatedAt)
	}
	if out.Visibility != record.VisibilityPublic {
		t.Errorf("default visibility %q", out.Visibility)
	}
	got, ok := s.Source("acme")
	if !ok {
		t.Fatal("put source not found")
	}
	if got.Name != in.Name || got.Type != in.Type || !got.Enabled || got.Schedule != "1h" || got.Cursor != "c-1" ||
		configJSON(t, got.Config) != configJSON(t, in.Config) || !got.CreatedAt.Equal(out.CreatedAt) {
		t.Errorf("read back %+v, put %+v", got, out)
	}

	// A second put replaces the record and keeps the creation time.
	mustPutSource(t, s, record.Source{ID: "zeta", Name: "Zeta", Type: "web"})
	again := mustPutSource(t, s, record.Source{ID: "acme", Name: "Acme Renamed", Type: "slack", CreatedAt: t0})
	if !again.CreatedAt.Equal(out.CreatedAt) || again.UpdatedAt.Before(out.UpdatedAt) {
		t.Errorf("replaced: created %v (was %v), updated %v (was %v)", again.CreatedAt, out.CreatedAt, again.UpdatedAt, out.UpdatedAt)
	}
	if got, _ := s.Source("acme"); got.Name != "Acme Renamed" || got.Enabled || len(got.Config) != 0 || got.Cursor != "" {
		t.Errorf("replaced source reads %+v", got)
	}
	// A new source may bring its creation time.
	if c := mustPutSource(t, s, record.Source{ID: "old", Name: "Old", Type: "web", CreatedAt: t0}); !c.CreatedAt.Equal(t0) {
		t.Errorf("given creation time %v, stored %v", t0, c.CreatedAt)
	}
	var ids []string
	for _, src := range s.Sources() {
		ids = append(ids, src.ID)
	}
	if want := []string{"acme", "old", record.UploadsSourceID, "zeta"}; !slices.Equal(ids, want) {
		t.Errorf("Sources: %v, want %v", ids, want)
	}
}

// testPutSourceInvalid: malformed sources are ErrInvalid and not stored.
func testPutSourceInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	for name, src := range map[string]record.Source{
		"empty id":           {ID: "", Name: "X", Type: "web"},
		"upper-case id":      {ID: "Acme", Name: "X", Type: "web"},
		"id with a space":    {ID: "a b", Name: "X", Type: "web"},
		"id with a slash":    {ID: "a/b", Name: "X", Type: "web"},
		"long id":            {ID: strings.Repeat("a", 65), Name: "X", Type: "web"},
		"no name":            {ID: "x", Name: " ", Type: "web"},
		"no type":            {ID: "x", Name: "X"},
		"control in name":    {ID: "x", Name: "a\x00b", Type: "web"},
		"bad visibility":     {ID: "x", Name: "X", Type: "web", Visibility: "secret"},
		"bad channel vis":    {ID: "x", Name: "X", Type: "web", ChannelVisibility: map[string]string{"c": "open"}},
		"invalid UTF-8 name": {ID: "x", Name: "\xff", Type: "web"},
	} {
		if _, err := s.PutSource(src); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if len(s.Sources()) != 1 {
		t.Errorf("invalid sources were stored: %+v", s.Sources())
	}
	for _, id := range []string{"a", "a-b_c.d", "0", strings.Repeat("z", 64)} {
		if _, err := s.PutSource(record.Source{ID: id, Name: "X", Type: "web"}); err != nil {
			t.Errorf("valid id %q: %v", id, err)
		}
	}
}

// testUpdateSource: fn's changes are stored unless it fails; the id and
// creation time do not change.
func testUpdateSource(t *testing.T, h Harness) {
	s := h.Open(t)
	orig := mustPutSource(t, s, record.Source{ID: "acme", Name: "Acme", Type: "slack", Enabled: true, Config: map[string]any{"k": "v"}})
	out, err := s.UpdateSource("acme", func(src *record.Source) error {
		if src.Name != "Acme" || src.Config["k"] != "v" {
			t.Errorf("fn got %+v", src)
		}
		src.Name, src.Cursor = "Acme 2", "page-2"
		src.ID, src.CreatedAt = "other", t0 // ignored
		src.LastCrawl = &record.CrawlInfo{JobID: "j1", Status: "ok", StartedAt: t0, FinishedAt: t0.Add(time.Minute), Messages: 7}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "acme" || out.Name != "Acme 2" || !out.CreatedAt.Equal(orig.CreatedAt) {
		t.Errorf("update returned %+v", out)
	}
	got, _ := s.Source("acme")
	if got.Name != "Acme 2" || got.Cursor != "page-2" || got.LastCrawl == nil || got.LastCrawl.Messages != 7 ||
		!got.LastCrawl.StartedAt.Equal(t0) || got.Config["k"] != "v" {
		t.Errorf("stored %+v", got)
	}
	if _, ok := s.Source("other"); ok {
		t.Error("fn changed the id")
	}

	boom := errors.New("boom")
	if _, err := s.UpdateSource("acme", func(src *record.Source) error { src.Name = "lost"; return boom }); !errors.Is(err, boom) {
		t.Errorf("fn's error: %v", err)
	}
	if got, _ := s.Source("acme"); got.Name != "Acme 2" {
		t.Errorf("a failed update was stored: %q", got.Name)
	}
	_, err = s.UpdateSource("acme", func(src *record.Source) error { src.Name = ""; return nil })
	wantErr(t, "update to an empty name", err, record.ErrInvalid)
	_, err = s.UpdateSource("nope", func(*record.Source) error { t.Error("fn called for an unknown source"); return nil })
	wantErr(t, "update of an unknown source", err, record.ErrNotFound)
}

// testSourceCopies: what a read returns is the caller's to change.
func testSourceCopies(t *testing.T, h Harness) {
	s := h.Open(t)
	in := record.Source{ID: "acme", Name: "Acme", Type: "slack", Enabled: true, Config: map[string]any{"k": "v"},
		OptOuts: []string{"eve"}, ExcludedChannels: []string{"x"}, ChannelVisibility: map[string]string{"c": record.VisibilityPrivate}}
	mustPutSource(t, s, in)
	in.Config["k"], in.OptOuts[0] = "changed", "changed" // the caller's own values
	got, _ := s.Source("acme")
	got.Config["k"], got.OptOuts[0], got.ExcludedChannels[0] = "changed", "changed", "changed"
	got.ChannelVisibility["c"] = record.VisibilityPublic
	again, _ := s.Source("acme")
	if again.Config["k"] != "v" || again.OptOuts[0] != "eve" || again.ExcludedChannels[0] != "x" ||
		again.ChannelVisibility["c"] != record.VisibilityPrivate {
		t.Errorf("changing a read changed the store: %+v", again)
	}
	for _, src := range s.Sources() {
		if src.ID == "acme" {
			src.Config["k"] = "changed"
		}
	}
	if again, _ := s.Source("acme"); again.Config["k"] != "v" {
		t.Error("changing a Sources entry changed the store")
	}
}

// testDeleteSourceCascades: deleting a source deletes its channels,
// messages and documents everywhere they show, and nothing of another
// source; their slugs are free again.
func testDeleteSourceCascades(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, "ana: alpha one", "bo: alpha two")
	mustPutSource(t, s, record.Source{ID: "other", Name: "Other", Type: "discord", Enabled: true})
	mustPutChannels(t, s, record.Channel{SourceID: "other", ID: "o1", Name: "lounge"})
	mustPutMessages(t, s, record.Message{SourceID: "other", ChannelID: "o1", ID: "o-1", Author: "ana", Content: "alpha elsewhere", Timestamp: t0})
	docs := mustPutDocuments(t, s,
		record.Document{SourceID: "chat", Key: "a.md", Title: "Alpha doc", Content: "alpha"},
		record.Document{Key: "b.md", Title: "Alpha upload", Content: "alpha"})

	if err := s.DeleteSource("chat"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Source("chat"); ok {
		t.Error("deleted source found")
	}
	r := search(t, s, query.SearchRequest{Query: "alpha", Private: true})
	if got := msgIDs(r); !slices.Equal(got, []string{"o-1"}) || r.TotalMessages != 1 {
		t.Errorf("messages after delete: %v (total %d)", got, r.TotalMessages)
	}
	if got := docKeys(r); !slices.Equal(got, []string{"b.md"}) || r.TotalDocuments != 1 {
		t.Errorf("documents after delete: %v (total %d)", got, r.TotalDocuments)
	}
	for _, slug := range []string{"general", "help"} {
		if _, ok := s.ChannelBySlug(slug); ok {
			t.Errorf("channel %q survived", slug)
		}
	}
	if _, ok := s.ChannelByID("chat", "c1"); ok {
		t.Error("channel c1 survived by id")
	}
	if chs := s.Channels("", true); len(chs) != 1 || chs[0].ID != "o1" {
		t.Errorf("channels after delete: %+v", chs)
	}
	if _, ok := s.Document(docs[0].ID); ok {
		t.Error("the source's document survived")
	}
	if _, ok := s.DocumentBySlug(docs[0].Slug); ok {
		t.Error("the source's document slug survived")
	}
	if got := s.SourceDocuments("chat"); len(got) != 0 {
		t.Errorf("SourceDocuments after delete: %+v", got)
	}
	if st := s.SourceStats("chat", true); st != (record.SourceStats{}) {
		t.Errorf("stats after delete: %+v", st)
	}
	if c := s.Counts(true); c.Sources != 2 || c.Channels != 1 || c.Messages != 1 || c.Documents != 1 {
		t.Errorf("counts after delete: %+v", c)
	}
	if _, total := s.Documents(0, 10, true); total != 1 {
		t.Errorf("document list after delete: %d", total)
	}
	_, _, err := s.SourceChannels("chat")
	wantErr(t, "SourceChannels of a deleted source", err, record.ErrNotFound)

	// The same source again starts empty and gets the same slugs back.
	seedChat(t, s, "ana: beta")
	if c, ok := s.ChannelBySlug("general"); !ok || c.ID != "c1" {
		t.Errorf("slug not free again after delete: %v %+v", ok, c)
	}
	if st := s.SourceStats("chat", true); st.Channels != 2 || st.Messages != 1 || st.Documents != 0 {
		t.Errorf("stats of the recreated source: %+v", st)
	}
	if again := mustPutDocuments(t, s, record.Document{SourceID: "chat", Key: "a.md", Title: "Alpha doc", Content: "alpha"}); again[0].Slug != docs[0].Slug {
		t.Errorf("document slug not free again: %q, was %q", again[0].Slug, docs[0].Slug)
	}
}

// testDeleteSourceErrors: deleting an unknown source is ErrNotFound; the
// uploads source cannot be deleted.
func testDeleteSourceErrors(t *testing.T, h Harness) {
	s := h.Open(t)
	wantErr(t, "delete an unknown source", s.DeleteSource("nope"), record.ErrNotFound)
	wantErr(t, "delete uploads", s.DeleteSource(record.UploadsSourceID), record.ErrInvalid)
	if _, ok := s.Source(record.UploadsSourceID); !ok {
		t.Error("uploads source gone")
	}
	mustPutSource(t, s, record.Source{ID: "x", Name: "X", Type: "web"})
	if err := s.DeleteSource("x"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "delete twice", s.DeleteSource("x"), record.ErrNotFound)
}
