package httpapi

import (
	"encoding/json"
	"html"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// markdownSyntax is what a snippet or a description of a Markdown
// document must not show.
var markdownSyntax = regexp.MustCompile("##|\\*\\*|`|\\||\\]\\(|~~")

// TestSnippetsArePlain: a search for words in a Markdown document's
// heading and table finds them marked in plain text, on the API and on the
// search page; the document's page describes it in plain text; the API's
// content stays the document as written.
func TestSnippetsArePlain(t *testing.T) {
	ts := pageSite(t)
	md := "# Retry settings\n\n## Backoff policy\n\nHow **retries** wait, see [the guide](guide.md#install).\n\n" +
		"| Key | Default |\n|-----|---------|\n| `max_attempts` | **3** |\n| ~~jitter~~ | 20% |\n"
	docs, err := ts.eng.PutDocuments([]record.Document{{Title: "Retry settings", Key: "retry.md", Format: record.FormatMarkdown, Content: md}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"backoff policy", "max_attempts", "jitter default"} {
		r := ts.get(t, "/api/search?q="+url.QueryEscape(q))
		var out struct {
			Documents []struct{ Content, Highlight string }
		}
		if err := json.Unmarshal(r.body, &out); err != nil || len(out.Documents) != 1 {
			t.Fatalf("%q: %v %s", q, err, r.body)
		}
		d := out.Documents[0]
		if !strings.Contains(d.Highlight, "<mark>") || markdownSyntax.MatchString(d.Highlight) || d.Content != md {
			t.Errorf("%q: highlight %q, content %q", q, d.Highlight, d.Content)
		}
		page := string(htmlGet(t, ts, "/?q="+url.QueryEscape(q)).body)
		i := strings.Index(page, `<li class="hit hit-doc">`)
		if i < 0 || !strings.Contains(page[i:], d.Highlight) {
			t.Errorf("%q: the search page lacks the highlight %q", q, d.Highlight)
		}
	}
	page := string(htmlGet(t, ts, "/d/"+docs[0].Slug).body)
	for _, meta := range []string{`<meta name="description" content="`, `<meta property="og:description" content="`} {
		i := strings.Index(page, meta)
		if i < 0 {
			t.Fatalf("no %s", meta)
		}
		desc, _, _ := strings.Cut(page[i+len(meta):], `"`)
		if want := "Retry settings Backoff policy How retries wait, see the guide. Key · Default max_attempts · 3 jitter · 20%"; desc != want {
			t.Errorf("%s\n got %q\nwant %q", meta, desc, want)
		}
	}
}

// TestSearchPageEmptyState: a search that finds nothing says what was
// searched with which filters, and links to wider searches: without each
// filter, the phrase as words, without the exclusion. What the user typed
// is escaped.
func TestSearchPageEmptyState(t *testing.T) {
	ts := pageSite(t)
	q := `"zebrafish <b>nowhere</b>" -answer after:2026-01-01`
	r := htmlGet(t, ts, "/?"+url.Values{"q": {q}, "source": {"chat"}, "channel": {"general"}}.Encode())
	page := string(r.body)
	inert(t, "empty search", r.body)
	if strings.Contains(page, "<b>nowhere</b>") {
		t.Error("the query is not escaped")
	}
	link := func(q string, params ...string) string {
		v := url.Values{"q": {q}}
		for i := 0; i < len(params); i += 2 {
			v.Set(params[i], params[i+1])
		}
		return `href="` + strings.NewReplacer("&", "&amp;", "+", "&#43;").Replace("/?"+v.Encode()) + `"`
	}
	for _, want := range []string{
		`No results for <q>&#34;zebrafish &lt;b&gt;nowhere&lt;/b&gt;&#34; -answer after:2026-01-01</q>`,
		`source: <strong>Team &lt;Chat&gt;</strong>`, `channel: <strong>#general</strong>`, `after: <strong>2026-01-01</strong>`,
		`Remove the filter source: Team &lt;Chat&gt;`, link(q, "channel", "general"),
		link(q, "source", "chat"),
		link(`"zebrafish <b>nowhere</b>" -answer`, "source", "chat", "channel", "general"),
		`as separate words`, link(`zebrafish <b>nowhere</b> -answer after:2026-01-01`, "source", "chat", "channel", "general"),
		`Stop excluding -answer`, link(`"zebrafish <b>nowhere</b>" after:2026-01-01`, "source", "chat", "channel", "general"),
		`<input type="hidden" name="channel" value="general">`, `<option value="chat" selected>`,
		`<a href="/sources">browse the sources</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the empty state lacks %s", want)
		}
	}
	// A phrase that is not there, as words, is.
	r = htmlGet(t, ts, "/?q=%22answer+zebrafish%22&source=chat")
	if want := link("answer zebrafish", "source", "chat"); !strings.Contains(string(r.body), want) {
		t.Errorf("no suggestion %s", want)
	}
	if p := string(htmlGet(t, ts, "/?q=answer+zebrafish&source=chat").body); !strings.Contains(p, "<mark>zebrafish</mark>") {
		t.Error("the suggestion finds nothing")
	}
}

// TestSearchPageLayout: messages and documents alternate in one list,
// each document with its source and date, tabs show one kind with its
// count, and the pages of results keep every filter.
func TestSearchPageLayout(t *testing.T) {
	ts := pageSite(t)
	page := string(htmlGet(t, ts, "/?q=zebrafish").body)
	msg, doc := strings.Index(page, `class="hit hit-msg"`), strings.Index(page, `class="hit hit-doc"`)
	if msg < 0 || doc < msg || strings.Count(page, `<ol class="hits">`) != 1 {
		t.Fatalf("hits: message at %d, document at %d", msg, doc)
	}
	tabs := regexp.MustCompile(`<a href="([^"]+)"( aria-current="page")?>(\w+) <span class="n">(\d+)</span></a>`).FindAllStringSubmatch(page, -1)
	if len(tabs) != 3 || tabs[0][3] != "All" || tabs[0][2] == "" || tabs[1][3] != "Messages" || tabs[2][3] != "Documents" {
		t.Fatalf("tabs %v", tabs)
	}
	for _, tab := range tabs[1:] {
		href := html.UnescapeString(tab[1])
		p := string(htmlGet(t, ts, href).body)
		kind := map[string]string{"Messages": "hit-msg", "Documents": "hit-doc"}[tab[3]]
		other := map[string]string{"Messages": "hit-doc", "Documents": "hit-msg"}[tab[3]]
		if !strings.Contains(p, `class="hit `+kind+`"`) || strings.Contains(p, `class="hit `+other+`"`) ||
			!strings.Contains(p, `aria-current="page">`+tab[3]) || strings.Count(p, `class="hit `+kind+`"`) != min(20, atoi(t, tab[4])) {
			t.Errorf("%s: not only %s, or not all of them", href, tab[3])
		}
	}
	if !regexp.MustCompile(`<span class="kind">Document</span> Uploads · docs.example · crawled <time datetime="[0-9T:Z-]+">\d{4}-\d\d-\d\d</time>`).MatchString(page[doc:]) {
		t.Errorf("a document hit without its source and date: %s", page[doc:min(len(page), doc+600)])
	}
	page = string(htmlGet(t, ts, "/?q=message&channel=general&from=user1").body)
	if !strings.Contains(page, `<a rel="next" href="/?channel=general&amp;from=user1&amp;offset=20&amp;q=message">`) {
		t.Error("the next page drops the filters")
	}
	if strings.Contains(page, `class="hits two"`) || !strings.Contains(page, "No document matches.") {
		t.Error("a search of one channel shows documents")
	}
}

// FuzzSplitQuery: the parts put back together are the same query to the
// engine, and leaving out a filter leaves out that filter.
func FuzzSplitQuery(f *testing.F) {
	for _, q := range []string{`retry "exit code" -docker -"dead letter" from:"Ana K" in:help`, `a"b c"d`, `"unclosed`, `- -x -"" from:`, "after:2026-01-01 before:2026-02-01T00:00:00Z x"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		want, err := query.ParseQuery(q)
		if err != nil {
			return
		}
		parts := query.SplitQuery(q)
		if got, err := query.ParseQuery(joinQuery(parts, -1, nil)); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parts %+v parse as %+v, %v; want %+v", q, parts, got, err, want)
		}
		filters := map[string]int{} // of each kind
		for _, p := range parts {
			if p.Kind == query.PartFilter {
				filters[filterLabel(p.Key)]++
			}
		}
		for i, p := range parts {
			if p.Kind != query.PartFilter {
				continue
			}
			got, err := query.ParseQuery(joinQuery(parts, i, nil))
			if err != nil || filters[filterLabel(p.Key)] == 1 && reflect.DeepEqual(got, want) {
				t.Fatalf("%q without %q: %+v, %v", q, p.Raw, got, err)
			}
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestHighlightsAreEscaped: the JSON API's highlights, which the search
// page's script inserts as HTML, hold no markup but <mark> around the
// words searched, however hostile the text they show.
func TestHighlightsAreEscaped(t *testing.T) {
	ts := pageSite(t)
	r := ts.get(t, "/api/search?q="+url.QueryEscape("alert xss onerror"))
	var out struct {
		Messages, Documents []struct{ Highlight string }
	}
	if err := json.Unmarshal(r.body, &out); err != nil || len(out.Messages) == 0 || len(out.Documents) == 0 {
		t.Fatalf("%v %s", err, r.body)
	}
	for i, h := range append(out.Messages, out.Documents...) {
		if i < len(out.Messages) && !strings.Contains(h.Highlight, "<mark>alert</mark>") {
			t.Errorf("hit %d: nothing marked in %q", i, h.Highlight)
		}
		if bare := strings.NewReplacer("<mark>", "", "</mark>", "").Replace(h.Highlight); strings.ContainsAny(bare, "<>") {
			t.Errorf("hit %d: markup in %q", i, h.Highlight)
		}
	}
	if h := out.Messages[0].Highlight; !strings.Contains(h, "&lt;script&gt;") || !strings.Contains(h, "&#39;") {
		t.Errorf("message highlight %q: the text is not escaped as written", h)
	}
}
