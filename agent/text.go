package agent

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/sift-search/sift/query"
)

// maxSnippetChars bounds a snippet made from a hit's content when it has no
// highlight.
const maxSnippetChars = 300

// Snippet is the plain text of a search hit's highlight, the matches
// marked **like this**; with no highlight, the start of content.
func Snippet(h query.Snippet, content string) string {
	if !h.IsZero() {
		return h.Render(nil, "**", "**")
	}
	return contentStart(content)
}

var markTags = strings.NewReplacer("<mark>", "**", "</mark>", "**")

// SnippetOfHTML is Snippet of a highlight as the JSON API writes it
// (escaped text with <mark> around matches), for clients of the API.
func SnippetOfHTML(highlight, content string) string {
	if highlight != "" {
		return html.UnescapeString(markTags.Replace(highlight))
	}
	return contentStart(content)
}

// contentStart is content, or its start cut after maxSnippetChars.
func contentStart(content string) string {
	if utf8.RuneCountInString(content) <= maxSnippetChars {
		return content
	}
	n := 0
	for i := range content {
		if n == maxSnippetChars {
			return strings.TrimSpace(content[:i]) + " …"
		}
		n++
	}
	return content
}
