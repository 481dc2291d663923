package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MergeSpans returns the span of the first passage grown by the others
// that overlap it or what it has grown to: a section's result covers its
// overlapping passages among the candidates. Each span is {start, end}.
func MergeSpans(spans [][2]int) (start, end int) {
	start, end = spans[0][0], spans[0][1]
	for grown := true; grown; {
		grown = false
		for _, c := range spans[1:] {
			if c[0] <= end && c[1] >= start && (c[0] < start || c[1] > end) {
				start, end, grown = min(start, c[0]), max(end, c[1]), true
			}
		}
	}
	return start, end
}

// CutWords cuts s to at most n characters, at a word boundary when there is
// one in the last fifth, and reports whether it cut. n <= 0 does not cut.
func CutWords(s string, n int) (string, bool) {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	end := 0
	for i := 0; i < n; i++ {
		_, w := utf8.DecodeRuneInString(s[end:])
		end += w
	}
	cut := strings.LastIndexFunc(s[:end], unicode.IsSpace)
	if cut > end*4/5 {
		end = cut
	}
	return strings.TrimRightFunc(s[:end], unicode.IsSpace), true
}
