// Package chunk cuts records into the passages semantic search ranks, the
// same way in every store: documents into passages under their headings
// (SplitDocument, SectionStart), a channel's messages into conversation
// windows (Windows), and the text a hit shows — a section's merged span
// (MergeSpans), its text fragment link (TextFragment) and a cut at a word
// (CutWords). It imports no store.
package chunk

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Document chunking bounds, in bytes.
const (
	MaxBytes     = 1200 // a chunk's target size
	OverlapBytes = 200  // how far a chunk reaches back into the previous one
)

// Span is a passage of a document: bytes [Start, End) of its content, and
// the Heading it falls under.
type Span struct {
	Start, End int
	Heading    string
	Section    bool // starts with its heading: no overlap into the previous section
}

// block is a paragraph, list, code block or heading of a document.
type block struct {
	start, end int
	heading    bool
}

// splitBlocks cuts text into blocks at blank lines, keeping fenced code
// blocks whole; a Markdown heading line is a block of its own.
func splitBlocks(text string) []block {
	var out []block
	start, fence := -1, false
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += pos
		}
		line := strings.TrimSpace(text[pos:end])
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			if start < 0 {
				start = pos
			}
			fence = !fence
		case fence:
		case line == "":
			if start >= 0 {
				out = append(out, block{start: start, end: pos})
				start = -1
			}
		case IsHeading(line):
			if start >= 0 {
				out = append(out, block{start: start, end: pos})
				start = -1
			}
			out = append(out, block{start: pos, end: end, heading: true})
		default:
			if start < 0 {
				start = pos
			}
		}
		pos = end + 1
	}
	if start >= 0 {
		out = append(out, block{start: start, end: len(text)})
	}
	return out
}

// IsHeading reports whether line, trimmed, is a Markdown heading.
func IsHeading(line string) bool {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && n < len(line) && line[n] == ' '
}

// SplitDocument cuts a document into chunks of about MaxBytes: a
// heading starts a new chunk, paragraphs are packed together, a paragraph
// too long for one chunk is cut at sentence ends (else at spaces), and each
// chunk that does not start a section reaches back up to OverlapBytes
// into the one before, from a sentence or word boundary, so text cut at a
// boundary is whole in one of them. A heading with nothing under it (a
// title right above its first section) joins the next heading's chunk, or
// is left out at the end: a heading alone answers nothing.
func SplitDocument(text string) []Span {
	var out []Span
	heading := ""
	cur := Span{Start: -1}
	body := false // cur holds more than its heading
	flush := func() {
		if body && strings.TrimSpace(text[cur.Start:cur.End]) != "" {
			out = append(out, cur)
		}
		cur, body = Span{Start: -1}, false
	}
	for _, b := range splitBlocks(text) {
		if b.heading {
			heading = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(text[b.start:b.end]), "#"))
			if cur.Start >= 0 && !body {
				cur.End, cur.Heading = b.end, heading
				continue
			}
			flush()
			cur = Span{Start: b.start, End: b.end, Heading: heading, Section: true}
			continue
		}
		start := b.start
		if body && b.end-cur.Start > MaxBytes && cur.End-cur.Start < MaxBytes/3 {
			// A short chunk (a heading and the line introducing a list,
			// say) takes the head of a block too long to join it whole,
			// rather than stand alone.
			limit := cur.Start + MaxBytes
			for limit > start && !utf8.RuneStart(text[limit]) {
				limit--
			}
			cut := lastBoundary(text[start:limit], true)
			if cut <= 0 {
				cut = lastBoundary(text[start:limit], false)
			}
			if cut > 0 {
				cur.End, start = start+cut, start+cut
				flush()
			}
		}
		for _, piece := range cutLong(text, start, b.end) {
			if body && piece.end-cur.Start > MaxBytes {
				flush()
			}
			if cur.Start < 0 {
				cur = Span{Start: piece.start, Heading: heading}
			}
			cur.End, body = piece.end, true
		}
	}
	flush()
	for i := 1; i < len(out); i++ {
		if !out[i].Section {
			out[i].Start = overlapStart(text, out[i-1].Start, out[i].Start)
		}
	}
	return out
}

// cutLong splits [start, end) into pieces of at most MaxBytes, at
// sentence ends when it can, else at spaces, else anywhere between runes.
func cutLong(text string, start, end int) []block {
	var out []block
	for end-start > MaxBytes {
		limit := start + MaxBytes
		for limit > start && !utf8.RuneStart(text[limit]) {
			limit--
		}
		cut := lastBoundary(text[start:limit], true)
		if cut <= 0 {
			cut = lastBoundary(text[start:limit], false)
		}
		if cut <= 0 {
			cut = limit - start
		}
		out = append(out, block{start: start, end: start + cut})
		start += cut
	}
	return append(out, block{start: start, end: end})
}

// lastBoundary returns the offset just after the last sentence end (". ",
// "? ", "! " or a newline) of s, or, if sentences is false, after its last
// space; 0 when there is none past the first quarter.
func lastBoundary(s string, sentences bool) int {
	for i := len(s) - 1; i > len(s)/4; i-- {
		c := s[i]
		if sentences {
			if c == '\n' || (c == ' ' && i > 0 && strings.ContainsRune(".?!", rune(s[i-1]))) {
				return i + 1
			}
		} else if c == ' ' || c == '\n' {
			return i + 1
		}
	}
	return 0
}

// overlapStart moves a chunk's start back into the previous chunk by up to
// OverlapBytes, to the start of a sentence or word.
func overlapStart(text string, prevStart, start int) int {
	lo := max(prevStart, start-OverlapBytes)
	if lo >= start {
		return start
	}
	back := text[lo:start]
	if i := strings.Index(back, ". "); i >= 0 && i+2 < len(back) {
		return lo + i + 2
	}
	if i := strings.IndexFunc(back, unicode.IsSpace); i >= 0 {
		_, w := utf8.DecodeRuneInString(back[i:])
		return lo + i + w
	}
	return start
}

// HeadingsOnly reports whether text holds nothing but headings: no chunk
// made now is such, but an index made before may hold one.
func HeadingsOnly(text string) bool {
	for _, b := range splitBlocks(text) {
		if !b.heading {
			return false
		}
	}
	return true
}

// SectionStart returns where the section of the passage starting at start
// begins: at the last of the document's passages (spans, as start and end
// offsets into content), the passage itself or one before it, that opens
// with a heading; 0 when none does.
func SectionStart(content string, start int, spans iter.Seq2[int, int]) int {
	at := 0
	for s, e := range spans {
		if s <= start && s > at && opensWithHeading(content[s:e]) {
			at = s
		}
	}
	return at
}

// SectionStarts returns SectionStart for each of a document's passages.
func SectionStarts(content string, spans []Span) []int {
	all := func(yield func(int, int) bool) {
		for _, sp := range spans {
			if !yield(sp.Start, sp.End) {
				return
			}
		}
	}
	out := make([]int, len(spans))
	for i, sp := range spans {
		out[i] = SectionStart(content, sp.Start, all)
	}
	return out
}

// opensWithHeading reports whether text's first line is a Markdown heading.
func opensWithHeading(text string) bool {
	line, _, _ := strings.Cut(text, "\n")
	return IsHeading(strings.TrimSpace(line))
}
