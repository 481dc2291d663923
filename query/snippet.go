package query

import "strings"

// Snippet is a stretch of a hit's plain text around its densest matches:
// the text, the matches as byte spans of it, and whether the text was cut
// before or after. Each presenter renders it its own way (Render): the
// JSON API and the pages as escaped HTML with <mark>, the agents' tools as
// plain text with **matches**.
type Snippet struct {
	Text  string
	Marks []Span // in order, not touching, within Text
	// Before and After say that the whole text goes on before or after
	// the snippet (rendered "…").
	Before, After bool
}

// Span is the bytes [Start, End) of a Snippet's text.
type Span struct{ Start, End int }

// Ellipsis marks where a snippet's text was cut.
const Ellipsis = "…"

// Render writes the snippet with open and end around each match and
// Ellipsis where the text was cut, passing the text (not the marks)
// through escape when it is not nil.
func (s Snippet) Render(escape func(string) string, open, end string) string {
	if escape == nil {
		escape = func(t string) string { return t }
	}
	var b strings.Builder
	b.Grow(len(s.Text) + len(s.Marks)*(len(open)+len(end)) + 2*len(Ellipsis))
	if s.Before {
		b.WriteString(Ellipsis)
	}
	at := 0
	for _, m := range s.Marks {
		if m.Start < at || m.End > len(s.Text) || m.Start >= m.End {
			continue // not a span of this text: never written
		}
		b.WriteString(escape(s.Text[at:m.Start]))
		b.WriteString(open)
		b.WriteString(escape(s.Text[m.Start:m.End]))
		b.WriteString(end)
		at = m.End
	}
	b.WriteString(escape(s.Text[at:]))
	if s.After {
		b.WriteString(Ellipsis)
	}
	return b.String()
}

// Plain is the snippet's text with Ellipsis where it was cut, nothing
// marked.
func (s Snippet) Plain() string { return s.Render(nil, "", "") }

// IsZero reports whether the snippet holds nothing.
func (s Snippet) IsZero() bool { return s.Text == "" && !s.Before && !s.After }
