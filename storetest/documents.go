package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// testDocumentIdentity: a document's id derives from its source and key;
// the key defaults to the URL, else the title; slugs come from titles and
// are unique.
func testDocumentIdentity(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPutSource(t, s, record.Source{ID: "web", Name: "Web", Type: "web", Enabled: true})
	docs := mustPutDocuments(t, s,
		record.Document{Title: "Configuration reference", Content: "Set max_attempts in wren.yaml."},
		record.Document{SourceID: "web", URL: "https://example.com/a", Title: "Configuration reference", Content: "web page"},
		record.Document{Key: "other.md", Title: "Configuration   reference\n", Content: "another key", Format: record.FormatMarkdown},
	)
	want := []struct{ source, key string }{
		{record.UploadsSourceID, "Configuration reference"},
		{"web", "https://example.com/a"},
		{record.UploadsSourceID, "other.md"},
	}
	slugs := map[string]bool{}
	for i, d := range docs {
		if d.SourceID != want[i].source || d.Key != want[i].key || d.ID != record.DocumentID(want[i].source, want[i].key) {
			t.Errorf("doc %d: source %q key %q id %q", i, d.SourceID, d.Key, d.ID)
		}
		if !strings.HasPrefix(d.Slug, record.Slugify("Configuration reference")) || !record.ValidSlug(d.Slug) || slugs[d.Slug] {
			t.Errorf("doc %d: slug %q (taken %v)", i, d.Slug, slugs)
		}
		slugs[d.Slug] = true
		if d.CreatedAt.IsZero() || d.UpdatedAt.IsZero() {
			t.Errorf("doc %d: times %v %v", i, d.CreatedAt, d.UpdatedAt)
		}
	}
	if docs[0].Slug != record.Slugify("Configuration reference") {
		t.Errorf("first slug %q", docs[0].Slug)
	}
	if docs[0].Format != record.FormatText || docs[2].Format != record.FormatMarkdown || docs[2].Title != "Configuration reference" {
		t.Errorf("format %q %q, title %q", docs[0].Format, docs[2].Format, docs[2].Title)
	}
	for _, d := range docs {
		byID, ok := s.Document(d.ID)
		if !ok || byID.Slug != d.Slug || byID.Content != d.Content || byID.Title != d.Title || byID.URL != d.URL ||
			byID.Key != d.Key || byID.Format != d.Format || !byID.UpdatedAt.Equal(d.UpdatedAt) {
			t.Errorf("Document(%q): %v %+v, put %+v", d.ID, ok, byID, d)
		}
		if bySlug, ok := s.DocumentBySlug(d.Slug); !ok || bySlug.ID != d.ID {
			t.Errorf("DocumentBySlug(%q): %v %+v", d.Slug, ok, bySlug)
		}
	}
	if _, ok := s.Document(record.DocumentID("web", "nope")); ok {
		t.Error("unknown document found")
	}
	if _, ok := s.DocumentBySlug("nope"); ok {
		t.Error("unknown slug found")
	}
	// A batch naming one document twice stores the last.
	twice := mustPutDocuments(t, s,
		record.Document{SourceID: "web", Key: "k", Title: "First", Content: "first"},
		record.Document{SourceID: "web", Key: "k", Title: "Second", Content: "second"})
	if got, _ := s.Document(record.DocumentID("web", "k")); got.Content != "second" || len(s.SourceDocuments("web")) != 2 || len(twice) == 0 {
		t.Errorf("a batch naming one document twice: %+v, %d documents", got, len(s.SourceDocuments("web")))
	}
}

// testDocumentReplace: a put of the same source and key replaces the
// document, keeping its id, slug and creation time; its old text is no
// longer found.
func testDocumentReplace(t *testing.T, h Harness) {
	s := h.Open(t)
	first := mustPutDocuments(t, s, record.Document{Title: "Retries", Content: "Set max_attempts to limit retries.", CreatedAt: t0, UpdatedAt: t0})[0]
	again := mustPutDocuments(t, s, record.Document{Title: "Retries", Content: "Now about timezones.", UpdatedAt: t0.Add(time.Hour)})[0]
	if again.ID != first.ID || again.Slug != first.Slug || !again.CreatedAt.Equal(t0) || !again.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("replace: %+v, first %+v", again, first)
	}
	if r := search(t, s, query.SearchRequest{Query: "max_attempts", Private: true}); len(r.Documents) != 0 || r.TotalDocuments != 0 {
		t.Errorf("old text still found: %v", docKeys(r))
	}
	if r := search(t, s, query.SearchRequest{Query: "timezones", Private: true}); len(r.Documents) != 1 || r.Documents[0].ID != first.ID {
		t.Errorf("new text not found: %v", docKeys(r))
	}
	if _, total := s.Documents(0, 10, true); total != 1 {
		t.Errorf("%d documents after a replace", total)
	}
	// A new title on the same key keeps the slug.
	renamed := mustPutDocuments(t, s, record.Document{Key: "Retries", Title: "Backoff", Content: "x"})[0]
	if renamed.ID != first.ID || renamed.Slug != first.Slug {
		t.Errorf("retitled: %+v", renamed)
	}
	if got, _ := s.Document(first.ID); got.Title != "Backoff" {
		t.Errorf("retitled document reads %+v", got)
	}
}

// testDocumentsInvalid: documents without a title, URL or key, of an
// unknown source, or with invalid text are ErrInvalid and not stored.
func testDocumentsInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	for name, d := range map[string]record.Document{
		"no identity":          {Content: "x"},
		"blank title":          {Title: "   ", Content: "x"},
		"unknown source":       {SourceID: "nope", Title: "x"},
		"invalid UTF-8":        {Title: "x", Content: "\xff"},
		"control in url":       {Title: "x", URL: "https://a\n"},
		"invalid UTF-8 title":  {Title: "\xff"},
		"too long title":       {Title: strings.Repeat("x", record.MaxNameBytes+1)},
		"control char in url2": {Title: "x", URL: "a\x00b"},
	} {
		_, err := s.PutDocuments([]record.Document{{Title: "fine"}, d})
		wantErr(t, name, err, record.ErrInvalid)
	}
	if _, total := s.Documents(0, 10, true); total != 0 {
		t.Errorf("invalid batches stored %d documents", total)
	}
}

// testDocumentsPaging: Documents lists newest (UpdatedAt) first, ties by
// id, with the total; SourceDocuments lists one source's by key.
func testDocumentsPaging(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPutSource(t, s, record.Source{ID: "web", Name: "Web", Type: "web", Enabled: true})
	var in []record.Document
	for i := 0; i < 12; i++ {
		in = append(in, record.Document{SourceID: "web", Key: fmt.Sprintf("k%02d", (i*5)%12), Title: fmt.Sprint("Doc ", i),
			Content: "body", UpdatedAt: t0.Add(time.Duration(i%6) * time.Hour)})
	}
	mustPutDocuments(t, s, in...)
	all, total := s.Documents(0, 100, true)
	if total != 12 || len(all) != 12 {
		t.Fatalf("Documents: %d of %d", len(all), total)
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.UpdatedAt.Before(b.UpdatedAt) || a.UpdatedAt.Equal(b.UpdatedAt) && a.ID > b.ID {
			t.Errorf("order at %d: %v %s before %v %s", i, a.UpdatedAt, a.ID, b.UpdatedAt, b.ID)
		}
	}
	var paged []string
	for off := 0; off < 14; off += 5 {
		page, total := s.Documents(off, 5, true)
		if total != 12 {
			t.Errorf("total on page %d: %d", off, total)
		}
		for _, d := range page {
			paged = append(paged, d.ID)
		}
	}
	var ids []string
	for _, d := range all {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(paged, ids) {
		t.Errorf("pages %v, whole %v", paged, ids)
	}
	if page, total := s.Documents(50, 5, true); len(page) != 0 || total != 12 {
		t.Errorf("past the end: %d %d", len(page), total)
	}
	if page, _ := s.Documents(-3, 2, true); len(page) != 2 || page[0].ID != all[0].ID {
		t.Errorf("negative offset: %+v", page)
	}
	var keys []string
	for _, d := range s.SourceDocuments("web") {
		keys = append(keys, d.Key)
	}
	if !slices.IsSorted(keys) || len(keys) != 12 {
		t.Errorf("SourceDocuments keys %v", keys)
	}
	if got := s.SourceDocuments(record.UploadsSourceID); len(got) != 0 {
		t.Errorf("uploads holds %d", len(got))
	}
	if st := s.SourceStats("web", true); st.Documents != 12 {
		t.Errorf("stats %+v", st)
	}
}

// testDeleteDocument: a deleted document is gone by id, slug, list and
// search; deleting it again is ErrNotFound.
func testDeleteDocument(t *testing.T, h Harness) {
	s := h.Open(t)
	docs := mustPutDocuments(t, s,
		record.Document{Title: "Keep", Content: "backoff stays"},
		record.Document{Title: "Drop", Content: "backoff goes"})
	if err := s.DeleteDocument(docs[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Document(docs[1].ID); ok {
		t.Error("deleted document found by id")
	}
	if _, ok := s.DocumentBySlug(docs[1].Slug); ok {
		t.Error("deleted document found by slug")
	}
	if r := search(t, s, query.SearchRequest{Query: "backoff", Private: true}); !slices.Equal(docKeys(r), []string{"Keep"}) || r.TotalDocuments != 1 {
		t.Errorf("search after delete: %v %d", docKeys(r), r.TotalDocuments)
	}
	if list, total := s.Documents(0, 10, true); total != 1 || list[0].ID != docs[0].ID {
		t.Errorf("list after delete: %d", total)
	}
	wantErr(t, "delete again", s.DeleteDocument(docs[1].ID), record.ErrNotFound)
	wantErr(t, "delete unknown", s.DeleteDocument("nope"), record.ErrNotFound)
	// Its slug is free again.
	if again := mustPutDocuments(t, s, record.Document{Title: "Drop", Content: "back"}); again[0].Slug != docs[1].Slug {
		t.Errorf("slug after delete and put: %q, was %q", again[0].Slug, docs[1].Slug)
	}
}
