package query

import (
	"html"
	"testing"
)

func TestSnippetRender(t *testing.T) {
	s := Snippet{Text: "a <b> & needle, needles", Marks: []Span{{8, 14}, {16, 23}}, Before: true}
	if got, want := s.Render(html.EscapeString, "<mark>", "</mark>"), "…a &lt;b&gt; &amp; <mark>needle</mark>, <mark>needles</mark>"; got != want {
		t.Errorf("HTML %q, want %q", got, want)
	}
	if got, want := s.Render(nil, "**", "**"), "…a <b> & **needle**, **needles**"; got != want {
		t.Errorf("bold %q, want %q", got, want)
	}
	s.After = true
	if got, want := s.Plain(), "…a <b> & needle, needles…"; got != want {
		t.Errorf("plain %q, want %q", got, want)
	}
	if !(Snippet{}).IsZero() || s.IsZero() {
		t.Error("IsZero")
	}
}

// FuzzSnippetRender: marks that are not spans of the text, out of order or
// overlapping, are left out, never a panic, and the text is all there.
func FuzzSnippetRender(f *testing.F) {
	f.Add("needle in a haystack", 0, 6, 3, 40)
	f.Add("", 1, 0, -5, 2)
	f.Fuzz(func(t *testing.T, text string, a, b, c, d int) {
		s := Snippet{Text: text, Marks: []Span{{a, b}, {c, d}}}
		if got := s.Render(nil, "", ""); got != text {
			t.Fatalf("rendered %q of %q", got, text)
		}
	})
}
