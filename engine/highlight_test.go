package engine

import (
	"html"
	"strings"
	"testing"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// TestMarkdownHighlightIsPlain: a Markdown document's snippet is cut from
// its text, not its syntax, and follows a new version of the document.
func TestMarkdownHighlightIsPlain(t *testing.T) {
	e := openMem(t)
	md := "# Installing Heron\n\n## Raspberry Pi\n\nUse **apt** and `heron-cli`; see [the guide](guide.md#pi).\n\n" +
		"| Board | Heron support |\n|---|---|\n| Pi 4 | **full** |\n| Pi Zero | `partial` |\n"
	put := func(content string) {
		t.Helper()
		if _, err := e.PutDocuments([]record.Document{{Title: "Installing", Format: record.FormatMarkdown, Content: content}}); err != nil {
			t.Fatal(err)
		}
	}
	put(md)
	for _, q := range []string{"raspberry", "heron support", "guide", "partial"} {
		for range 2 { // the second answer comes from the cache
			r := search(t, e, query.SearchRequest{Query: q})
			if len(r.Documents) != 1 {
				t.Fatalf("%q: %d documents", q, len(r.Documents))
			}
			h := markHTML(r.Documents[0].Highlight)
			if !strings.Contains(h, "<mark>") || strings.ContainsAny(h, "#*`|[]") || strings.Contains(h, "guide.md") {
				t.Errorf("%q: highlight %q", q, h)
			}
			if r.Documents[0].Content != md {
				t.Errorf("%q: content changed: %q", q, r.Documents[0].Content)
			}
		}
	}
	put("## Raspberry Pi\n\nNow with **swift** support.")
	r := search(t, e, query.SearchRequest{Query: "raspberry"})
	if h := markHTML(r.Documents[0].Highlight); h != "<mark>Raspberry</mark> Pi\nNow with swift support." {
		t.Errorf("after an update: highlight %q", h)
	}
}

func TestPlainCacheBound(t *testing.T) {
	c := newPlainCache(100)
	docs := make([]*record.Document, 5)
	for i := range docs {
		docs[i] = &record.Document{Format: record.FormatMarkdown, Content: "**" + strings.Repeat("x", 40) + "**"}
		if got := c.text(docs[i]); got != strings.Repeat("x", 40) {
			t.Fatalf("text %q", got)
		}
	}
	if c.size > 100 || c.order.Len() != 2 || len(c.byDoc) != 2 {
		t.Errorf("size %d, %d entries, %d keys", c.size, c.order.Len(), len(c.byDoc))
	}
	text := &record.Document{Format: record.FormatText, Content: "**as is**"}
	if got := c.text(text); got != "**as is**" {
		t.Errorf("plain text document: %q", got)
	}
}

// TestMessageHighlightIsPlain: a chat message's snippet shows its text
// without the platform's markers, the API's content keeps them.
func TestMessageHighlightIsPlain(t *testing.T) {
	e := openMem(t)
	msg := "ana: The **retry** delay is `min(backoff, max_backoff)`; see [the docs](https://x.example/retries):\n```yaml\nretry: 3\n```"
	seed(t, e, msg)
	r := search(t, e, query.SearchRequest{Query: "retry backoff"})
	want := "The <mark>retry</mark> delay is min(<mark>backoff</mark>, max_<mark>backoff</mark>); see the docs:\n<mark>retry</mark>: 3"
	if len(r.Messages) != 1 || markHTML(r.Messages[0].Highlight) != want {
		t.Fatalf("highlight\n got  %v\n want %s", r.Messages, want)
	}
	if _, text, _ := strings.Cut(msg, ": "); r.Messages[0].Content != text {
		t.Errorf("content %q", r.Messages[0].Content)
	}
}

// markHTML renders a snippet as the JSON API does.
func markHTML(s query.Snippet) string { return s.Render(html.EscapeString, "<mark>", "</mark>") }
