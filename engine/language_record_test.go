package engine

import (
	"testing"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// A document's declared language is kept by the log and by snapshots, and
// decides its analysis: a German word's other form finds a document that
// declares German even when its text is too short to tell.
func TestDeclaredLanguage(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	if _, err := e.PutDocuments([]record.Document{{Title: "Verbindungen", Key: "k", Content: "Datenbankverbindungen", Language: "de-DE"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutDocuments([]record.Document{{Title: "x", Content: "y", Language: "not a tag"}}); err == nil {
		t.Fatal("a language that is no tag was accepted")
	}
	check := func(when string) {
		t.Helper()
		docs, _ := e.Documents(0, 10, true)
		if len(docs) != 1 || docs[0].Language != "de" {
			t.Fatalf("%s: %+v", when, docs)
		}
		// Detection alone would take this title and body for English.
		if r := search(t, e, query.SearchRequest{Query: "Datenbankverbindung", Limit: 5, Private: true, NoTypos: true}); len(r.Documents) != 1 {
			t.Fatalf("%s: the German stem does not find it: %+v", when, r)
		}
	}
	check("written")
	e.Close()
	e = openDir(t, dir)
	check("replayed from the log")
	if err := e.Snapshot(); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = openDir(t, dir)
	check("loaded from a snapshot")
	e.Close()
}
