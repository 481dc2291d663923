package agent

import (
	"html"
	"strings"
	"unicode/utf8"
)

// maxSnippetChars bounds a snippet made from a hit's content when it has no
// highlight.
const maxSnippetChars = 300

var markTags = strings.NewReplacer("<mark>", "**", "</mark>", "**")

// Snippet is the plain text of a search hit's highlight (HTML: escaped
// text with <mark> around matches), the matches marked **like this**; with
// no highlight, the start of content.
func Snippet(highlight, content string) string {
	if highlight != "" {
		return html.UnescapeString(markTags.Replace(highlight))
	}
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
