package httpapi

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/record"
)

// sourceActions is what the console offers for each source, on the
// dashboard's row of it and on its page.
type sourceActions struct{ crawl, test, imp, upload bool }

// rowActions reads the actions of source id's row of the dashboard.
func rowActions(t *testing.T, dashboard, id string) sourceActions {
	t.Helper()
	row := regexp.MustCompile(`(?s)<tr><th scope="row"><a href="/dashboard/sources/` + regexp.QuoteMeta(id) + `">.*?</tr>`).FindString(dashboard)
	if row == "" {
		t.Fatalf("no dashboard row for %s", id)
	}
	return sourceActions{
		crawl:  strings.Contains(row, `action="/dashboard/sources/`+id+`/crawl"`),
		test:   strings.Contains(row, `action="/dashboard/sources/`+id+`/test"`),
		imp:    strings.Contains(row, `href="/dashboard/sources/`+id+`#h-import"`),
		upload: strings.Contains(row, `href="#h-upload"`),
	}
}

// pageActions reads the actions of source id's page.
func pageActions(page, id string) sourceActions {
	return sourceActions{
		crawl:  strings.Contains(page, `action="/dashboard/sources/`+id+`/crawl"`),
		test:   strings.Contains(page, `action="/dashboard/sources/`+id+`/test"`),
		imp:    strings.Contains(page, `action="/dashboard/sources/`+id+`/import"`),
		upload: strings.Contains(page, `href="/dashboard#h-upload"`),
	}
}

// TestConsoleKindActions: the console offers each source the actions of
// its kind: a source that can be crawled (a web site, a platform with its
// token) is crawled and tested, one that takes export files is imported,
// an upload source is fed by uploads. A crafted crawl or test of a source
// it does not apply to is refused, by the console and by the JSON API,
// and leaves the source exactly as it was: no "Last crawl: error" when
// nothing was attempted.
func TestConsoleKindActions(t *testing.T) {
	ts := start(t)
	if err := demo.Load(ts.eng, nil); err != nil { // the demo's import-only discord and its upload source
		t.Fatal(err)
	}
	for _, src := range []record.Source{
		{ID: "web", Type: "web", Config: map[string]any{"urls": []any{site(t).URL + "/"}, "allowPrivate": true, "delayMs": 0.0}},
		{ID: "bot", Type: "discord", Config: map[string]any{"token": "bot-token", "guildId": "81384788765712384"}},
		{ID: "gh", Type: "github", Config: map[string]any{"repo": "wren/wren"}},
		{ID: "sl", Type: "slack", Config: map[string]any{}},
		{ID: "tg", Type: "telegram", Config: map[string]any{}, Schedule: "1h"},
	} {
		src.Name, src.Enabled = src.ID, true
		if _, err := ts.eng.PutSource(src); err != nil {
			t.Fatal(err)
		}
	}
	o := newOperator(t, ts)
	crawled := sourceActions{crawl: true, test: true}
	both := sourceActions{crawl: true, test: true, imp: true}
	imported := sourceActions{imp: true}
	uploaded := sourceActions{upload: true}
	want := map[string]sourceActions{
		"web": crawled, "gh": crawled, "bot": both,
		demo.ChatSource: imported, "sl": imported, "tg": imported,
		demo.DocsSource: uploaded, record.UploadsSourceID: uploaded,
	}
	dashboard := o.get("/dashboard")
	for id, w := range want {
		// The dashboard's row has no test button: tests are on the
		// source's page.
		wrow := w
		wrow.test = false
		if got := rowActions(t, dashboard, id); got != wrow {
			t.Errorf("dashboard row of %s: %+v, want %+v", id, got, wrow)
		}
		page := o.get("/dashboard/sources/" + id)
		if got := pageActions(page, id); got != w {
			t.Errorf("page of %s: %+v, want %+v", id, got, w)
		}
		if !w.crawl && strings.Contains(page, "manual crawls") {
			t.Errorf("page of %s speaks of crawls", id)
		}
	}
	// A platform source without its token says what crawls would need.
	if page := o.get("/dashboard/sources/" + demo.ChatSource); !strings.Contains(page, "Not crawled: config.token is needed") {
		t.Error("the import-only discord source does not say why it is not crawled")
	}

	// Crafted requests: refused, with the source untouched.
	for _, id := range []string{demo.ChatSource, "sl", "tg", demo.DocsSource, record.UploadsSourceID} {
		before, _ := ts.eng.Source(id)
		seq := ts.eng.Seq()
		for _, act := range []struct {
			path   string
			fields []string
			word   string
		}{
			{"/crawl", nil, "Crawl refused"},
			{"/crawl", []string{"full", "1"}, "Crawl refused"},
			{"/test", nil, "Test refused"},
		} {
			r := o.form("/dashboard/sources/"+id+act.path, act.fields...)
			o.failed(r, http.StatusBadRequest, act.word, "cannot be crawled")
			if w := want[id]; w.imp && !strings.Contains(flashText(r.body), "import one below") {
				t.Errorf("%s %s: the refusal does not point to the import: %q", id, act.path, flashText(r.body))
			}
			if !strings.Contains(string(r.body), "<h1>"+htmlEscape(before.Name)+"</h1>") {
				t.Errorf("%s %s: the refusal is not on the source's page", id, act.path)
			}
		}
		wantError(t, ts.do(t, "POST", "/api/sources/"+id+"/crawl", nil, bearer...), http.StatusBadRequest, "cannot be crawled")
		wantError(t, ts.do(t, "POST", "/api/sources/"+id+"/crawl?full=true", nil, bearer...), http.StatusBadRequest, "cannot be crawled")
		if m := ts.do(t, "POST", "/api/sources/"+id+"/test", nil, bearer...).json(t); m["ok"] != false || !strings.Contains(m["error"].(string), "cannot be crawled") {
			t.Errorf("API test of %s: %v", id, m)
		}
		after, _ := ts.eng.Source(id)
		if !reflect.DeepEqual(before, after) || ts.eng.Seq() != seq || after.LastCrawl != nil {
			t.Errorf("%s changed:\nbefore %+v\nafter  %+v", id, before, after)
		}
		if page := o.get("/dashboard/sources/" + id); strings.Contains(page, "Last crawl:") {
			t.Errorf("%s: the page shows a last crawl", id)
		}
	}
	if r := rowActions(t, o.get("/dashboard"), demo.ChatSource); r != imported {
		t.Errorf("after the refusals, the dashboard row of %s: %+v", demo.ChatSource, r)
	}

	// What applies still works: a crawl of the web source.
	o.done(o.form("/dashboard/sources/web/crawl"), "Crawl finished", "2 documents")
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
