package httpapi

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// TestTyposThroughTheAPI: a misspelt word finds what it was meant for and
// the answer names the correction; typos=false turns it off; the search
// page says what it included; the parameter is validated.
func TestTyposThroughTheAPI(t *testing.T) {
	ts := pageSite(t)
	if _, err := ts.eng.PutDocuments([]record.Document{
		{Title: "Webhooks", Key: "webhooks.md", Content: "Sign every webhook request with the shared secret."},
		{Title: "Licence", Key: "licence.md", Content: "The licence is Apache 2.0, see the NOTICE file."},
	}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Documents   []struct{ Title, Highlight string }
		Corrections []query.Correction
	}
	search := func(q string) answer {
		t.Helper()
		r := ts.get(t, "/api/search?"+q)
		var out answer
		if r.status != 200 || json.Unmarshal(r.body, &out) != nil {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		return out
	}
	for q, want := range map[string]string{"webhok": "Webhooks", "license": "Licence", "licence": "Licence", "sign webhok requests": "Webhooks"} {
		out := search("q=" + url.QueryEscape(q))
		if len(out.Documents) == 0 || out.Documents[0].Title != want {
			t.Errorf("%q: %+v", q, out)
			continue
		}
		if !strings.Contains(out.Documents[0].Highlight, "<mark>") {
			t.Errorf("%q: nothing marked in %q", q, out.Documents[0].Highlight)
		}
	}
	out := search("q=webhok")
	if len(out.Corrections) != 1 || out.Corrections[0].Word != "webhok" || out.Corrections[0].Matches[0] != "webhook" {
		t.Errorf("corrections: %+v", out.Corrections)
	}
	if out := search("q=licence"); out.Corrections != nil {
		t.Errorf("a word found as written is not corrected: %+v", out.Corrections)
	}
	if out := search("q=webhok&typos=false"); len(out.Documents) != 0 || out.Corrections != nil {
		t.Errorf("typos=false: %+v", out)
	}
	for _, q := range []string{"q=%22webhok%22", "q=webhok2"} { // phrases and words with digits are taken as written
		if out := search(q); len(out.Documents) != 0 {
			t.Errorf("%s: %+v", q, out)
		}
	}
	if r := ts.get(t, "/api/search?q=webhok&typos=perhaps"); r.status != 400 || !strings.Contains(string(r.body), "typos must be true or false") {
		t.Errorf("typos=perhaps: %d %s", r.status, r.body)
	}
	page := string(htmlGet(t, ts, "/?q=webhok").body)
	if !strings.Contains(page, "Including results for <strong>webhook</strong> (for <q>webhok</q>)") || !strings.Contains(page, "typos=false") {
		t.Errorf("the search page does not say what it included:\n%s", page)
	}
	if page := string(htmlGet(t, ts, "/?q=webhok&typos=false").body); strings.Contains(page, "Including results") || !strings.Contains(page, `name="typos" value="false"`) {
		t.Errorf("typos=false on the page: corrected, or not kept by the form")
	}
}

// TestUploadLanguage: an upload's declared language (JSON field, an HTML
// file's lang) decides its analysis; a language that is no tag is a 400.
func TestUploadLanguage(t *testing.T) {
	ts := pageSite(t)
	up := func(body string) resp {
		return ts.do(t, "POST", "/api/documents", strings.NewReader(body), "Content-Type", "application/json", "Authorization", "Bearer "+testKey)
	}
	if r := up(`{"title":"Verbindungen","content":"Datenbankverbindungen","language":"de-DE"}`); r.status != 200 && r.status != 201 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	if r := up(`{"title":"Seite","content":"<html lang=\"de\"><p>Zeitüberschreitungen</p></html>","format":"html"}`); r.status != 200 && r.status != 201 {
		t.Fatalf("html upload: %d %s", r.status, r.body)
	}
	wantError(t, up(`{"title":"x","content":"y","language":"not a tag"}`), 400, "language")
	for _, q := range []string{"Datenbankverbindung", "Zeituberschreitung"} {
		r := ts.get(t, "/api/search?typos=false&q="+q)
		var out struct{ Documents []struct{ Title string } }
		if json.Unmarshal(r.body, &out) != nil || len(out.Documents) != 1 {
			t.Errorf("%s: %s", q, r.body)
		}
	}
}
