package analysis

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/query"
)

// HighlightChars is the length of a search hit's snippet, in bytes.
const HighlightChars = 240

// HighlightScan bounds how much of a hit's text is searched for matches, so
// a page of hits on megabyte documents costs milliseconds, not seconds. A
// match further in is not highlighted: the snippet shows the beginning.
const HighlightScan = 64 << 10

type span struct{ start, end int }

// cellSep is what separates table cells in plain text, without its spaces.
var cellSep = strings.TrimSpace(mdtext.CellSep)

// Highlight returns a snippet of text around its densest cluster of terms
// from marks, with each match as a span: at most about maxBytes of text.
func (a *Analyzer) Highlight(text string, marks map[string]bool, maxBytes int) query.Snippet {
	scan := text
	if len(scan) > HighlightScan {
		scan = scan[:HighlightScan]
		if i := strings.LastIndexAny(scan, " \n\t"); i > 0 {
			scan = scan[:i] // a word cut in two would not match
		}
	}
	spans := a.matchSpans(scan, marks)
	lo, hi := 0, len(text)
	if len(text) > maxBytes {
		lo, hi = window(text, spans, maxBytes)
	}
	snip := query.Snippet{Text: text[lo:hi], Before: lo > 0, After: hi < len(text)}
	// The spans are in order and apart, so those within [lo, hi) are a run.
	i := 0
	for i < len(spans) && spans[i].start < lo {
		i++
	}
	j := i
	for j < len(spans) && spans[j].end <= hi {
		j++
	}
	if j > i {
		snip.Marks = make([]query.Span, j-i)
		for k, s := range spans[i:j] {
			snip.Marks[k] = query.Span{Start: s.start - lo, End: s.end - lo}
		}
	}
	return snip
}

// matchSpans returns the byte spans of text whose terms are in marks,
// merged where they touch, in order. Analysing a whole document for a
// snippet was most of a search's cost, so it analyses only the
// whitespace-separated stretches that may hold a match: those containing,
// in any ASCII case, the first bytes of a marked term as its word may
// begin (see needles) where a word or a part of one may start (not inside a
// run of small letters), those with an apostrophe, which analysis drops, and
// those with bytes beyond ASCII, which folding may change. Tokens never
// span whitespace, so the spans are those of the whole text's analysis.
func (a *Analyzer) matchSpans(text string, marks map[string]bool) []span {
	needles, ok := needles(marks)
	if !ok {
		return a.spansIn(text, 0, marks, nil) // a term beyond ASCII: analyse everything
	}
	// The stretches to analyse, as (start, end) pairs in text.
	var chunks [][2]int
	add := func(i int) int {
		lo, hi := i, i
		for lo > 0 && !isSpace(text[lo-1]) {
			lo--
		}
		for hi < len(text) && !isSpace(text[hi]) {
			hi++
		}
		if text[lo:hi] != cellSep { // the separator of plain tables' cells holds no term
			chunks = append(chunks, [2]int{lo, hi})
		}
		return hi
	}
	var wide int // the first byte beyond ASCII, or -1
	a.lower, wide = lowerASCII(a.lower[:0], text)
	lower := a.lower
	for _, n := range needles {
		for at := 0; at < len(lower); {
			i := bytes.Index(lower[at:], n)
			if i < 0 {
				break
			}
			if p := at + i; p > 0 && isLower(text[p-1]) && isLower(text[p]) {
				at = p + 1 // inside a run of small letters ("secret"): no word starts there
				continue
			}
			at = add(at + i)
		}
	}
	for at := 0; at < len(lower); {
		i := bytes.IndexByte(lower[at:], '\'')
		if i < 0 {
			break
		}
		at = add(at + i)
	}
	for at := wide; at >= 0 && at < len(lower); {
		if at+8 <= len(lower) && binary.LittleEndian.Uint64(lower[at:])&highBits == 0 {
			at += 8
			continue
		}
		if lower[at] >= utf8.RuneSelf {
			at = add(at)
		}
		at++
	}
	slices.SortFunc(chunks, func(x, y [2]int) int { return x[0] - y[0] })
	var spans []span
	last := -1
	for _, c := range chunks {
		if c[0] <= last {
			continue // the same stretch again
		}
		spans = a.spansIn(text[c[0]:c[1]], c[0], marks, spans)
		last = c[0]
	}
	return spans
}

// Bytes of a uint64, repeated: the high bit of each, and each byte's value.
const (
	highBits = 0x8080808080808080
	ones     = 0x0101010101010101
)

// lowerASCII appends text to dst with ASCII letters lowered, other bytes
// as they are, eight bytes at a time, and returns where in it the first
// byte beyond ASCII is, or the start of its eight (-1: none).
func lowerASCII(dst []byte, text string) ([]byte, int) {
	dst = append(dst, text...)
	b := dst[len(dst)-len(text):]
	wide := -1
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w&highBits != 0 && wide < 0 {
			wide = i
		}
		h := w &^ highBits                  // each byte's low seven bits
		geA := h + (0x80-'A')*ones          // high bit: byte >= 'A'
		gtZ := h + (0x80-'Z'-1)*ones        // high bit: byte > 'Z'
		upper := geA &^ gtZ &^ w & highBits // ASCII upper-case letters
		binary.LittleEndian.PutUint64(b[i:], w|upper>>2)
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf && wide < 0 {
			wide = i
		}
		if c-'A' < 26 {
			b[i] = c + 'a' - 'A'
		}
	}
	return dst, wide
}

// needles returns the beginnings the words of marked terms may have: a
// term but its last byte, up to six bytes and at least three (the stemmer
// rewrites a word's end, and of the stem it leaves only the last byte may
// differ from the word: "make" of "making"; TestMatchSpansOnRealText
// checks it on two collections), where
// an 'i' or 'y' after the first may stand
// for either (the stemmer writes "try" as "tri", "skies" as "sky"), and
// "dy", "ly", "ty" for "die", "lie", "tie" (of "dying"…, the stemmer's
// exceptions). ok is false when a term is not ASCII.
func needles(marks map[string]bool) (out [][]byte, ok bool) {
	for t := range marks {
		k := 3
		if len(t) > 4 {
			k = min(len(t)-1, 6)
		}
		n := []byte(t[:min(len(t), k)])
		for _, c := range n {
			if c >= utf8.RuneSelf {
				return nil, false
			}
		}
		variants := [][]byte{n}
		for i := 1; i < len(n); i++ {
			if n[i] != 'i' && n[i] != 'y' {
				continue
			}
			for _, v := range variants[:len(variants):len(variants)] {
				w := slices.Clone(v)
				w[i] = 'i' + 'y' - v[i]
				variants = append(variants, w)
			}
		}
		if t == "die" || t == "lie" || t == "tie" {
			variants = append(variants, []byte{t[0], 'y'})
		}
		out = append(out, variants...)
	}
	return out, true
}

// spansIn appends the spans of the marked terms of text, which starts at
// byte off of the whole, merging with the last span where they touch.
func (a *Analyzer) spansIn(text string, off int, marks map[string]bool, spans []span) []span {
	a.toks = a.Append(a.toks[:0], text, 0)
	for _, t := range a.toks {
		if !marks[t.Term] {
			continue
		}
		s := span{off + int(t.Start), off + int(t.End)}
		if n := len(spans); n > 0 && s.start <= spans[n-1].end {
			spans[n-1].end = max(spans[n-1].end, s.end)
			continue
		}
		spans = append(spans, s)
	}
	return spans
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
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
	if lo > 0 && strings.HasPrefix(text[lo:], cellSep+" ") {
		lo += len(cellSep) + 1 // a table cell's separator does not start a snippet
	}
	for lo < len(text) && !utf8.RuneStart(text[lo]) {
		lo++
	}
	for hi < len(text) && hi > lo && !utf8.RuneStart(text[hi]) {
		hi--
	}
	return lo, max(lo, hi) // text that is no UTF-8 may leave nothing
}
