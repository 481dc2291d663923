package engine

import (
	"html"
	"strings"
	"unicode/utf8"
)

// highlightChars is the length of a search hit's snippet, in bytes.
const highlightChars = 240

// highlightScan bounds how much of a hit's text is searched for matches, so
// a page of hits on megabyte documents costs milliseconds, not seconds. A
// match further in is not highlighted: the snippet shows the beginning.
const highlightScan = 64 << 10

type span struct{ start, end int }

// highlight returns a snippet of text around its densest cluster of terms
// from marks, as HTML: escaped text with <mark> around each match and "…"
// where the text was cut. It is at most about maxBytes of text.
func (a *analyzer) highlight(text string, marks map[string]bool, maxBytes int) string {
	scan := text
	if len(scan) > highlightScan {
		scan = scan[:highlightScan]
		if i := strings.LastIndexAny(scan, " \n\t"); i > 0 {
			scan = scan[:i] // a word cut in two would not match
		}
	}
	a.toks = a.Append(a.toks[:0], scan, 0)
	var spans []span
	for _, t := range a.toks {
		if !marks[t.Term] {
			continue
		}
		s := span{int(t.Start), int(t.End)}
		if n := len(spans); n > 0 && s.start <= spans[n-1].end {
			spans[n-1].end = max(spans[n-1].end, s.end)
			continue
		}
		spans = append(spans, s)
	}
	lo, hi := 0, len(text)
	if len(text) > maxBytes {
		lo, hi = window(text, spans, maxBytes)
	}
	var b strings.Builder
	if lo > 0 {
		b.WriteString("…")
	}
	at := lo
	for _, s := range spans {
		if s.start < lo || s.end > hi {
			continue
		}
		b.WriteString(html.EscapeString(text[at:s.start]))
		b.WriteString("<mark>")
		b.WriteString(html.EscapeString(text[s.start:s.end]))
		b.WriteString("</mark>")
		at = s.end
	}
	b.WriteString(html.EscapeString(text[at:hi]))
	if hi < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

// window picks the maxBytes-long stretch of text holding the most spans,
// starting a little before the first of them, cut at spaces.
func window(text string, spans []span, maxBytes int) (int, int) {
	best, bestN := 0, 0
	for i := range spans {
		n := 0
		for j := i; j < len(spans) && spans[j].end <= spans[i].start+maxBytes; j++ {
			n++
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	lo := 0
	if bestN > 0 {
		lo = max(spans[best].start-maxBytes/5, 0)
	}
	hi := min(lo+maxBytes, len(text))
	if lo > 0 {
		if i := strings.IndexAny(text[lo:hi], " \n\t"); i >= 0 && (bestN == 0 || lo+i < spans[best].start) {
			lo += i + 1
		}
	}
	if hi < len(text) {
		if i := strings.LastIndexAny(text[lo:hi], " \n\t"); i > 0 && (bestN == 0 || lo+i >= spans[best].end) {
			hi = lo + i
		}
	}
	for lo < len(text) && !utf8.RuneStart(text[lo]) {
		lo++
	}
	for hi < len(text) && hi > lo && !utf8.RuneStart(text[hi]) {
		hi--
	}
	return lo, hi
}
