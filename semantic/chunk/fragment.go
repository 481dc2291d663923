package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text fragments (WICG "URL Fragment Text Directives") let a link scroll to
// and highlight a passage: #:~:text=[prefix-,]start[,end][,-suffix].

// TextFragment returns the directive locating content[start:end] — its
// first words, its last words, and, when those first words also occur
// earlier in content, the words before them as a prefix — or "" when the
// passage has no word to anchor on. Words are runs of letters and digits
// that the text holds separated by single spaces, so they read the same in
// the rendered page as in the source.
func TextFragment(content string, start, end int) string {
	words := plainWords(content, start, end)
	if len(words) == 0 {
		return ""
	}
	const n = 4
	first := run(content, words[:min(n, len(words))])
	var last string
	if len(words) > 2*n {
		last = run(content, words[len(words)-n:])
	}
	d := "text="
	if i := strings.Index(content, first); i >= 0 && i < words[0].start {
		if p := prefixBefore(content, words[0].start); p != "" {
			d += encodeDirective(p) + "-,"
		}
	}
	d += encodeDirective(first)
	if last != "" {
		d += "," + encodeDirective(last)
	}
	return "#:~:" + d
}

// prefixBefore returns the text of up to three words (with their
// punctuation) that end right before the whitespace preceding at, within
// one line, or "".
func prefixBefore(content string, at int) string {
	end := at
	for end > 0 && (content[end-1] == ' ' || content[end-1] == '\t') {
		end--
	}
	if end == at || end == 0 || content[end-1] == '\n' {
		return ""
	}
	start, words := end, 0
	for start > 0 && content[start-1] != '\n' && words < 3 {
		start--
		if content[start] == ' ' && start+1 < end && content[start+1] != ' ' {
			words++
			if words == 3 {
				start++
				break
			}
		}
	}
	// Only words the rendered page shows: Markdown marks ("##", "-", ">")
	// vanish in rendering, so the prefix stops at the first token without
	// a letter or digit, counting back from the start.
	fields := strings.Fields(content[start:end])
	keep := len(fields)
	for keep > 0 && strings.IndexFunc(fields[keep-1], func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
		keep--
	}
	return strings.Join(fields[keep:], " ")
}

type wordSpan struct{ start, end int }

// plainWords returns the maximal runs of letters and digits in
// content[start:end] that are followed, within one run of words, by a
// single space; a run breaks at anything else.
func plainWords(content string, start, end int) []wordSpan {
	var out []wordSpan
	i := start
	for i < end {
		r, w := decodeRuneAt(content, i)
		if !isWordRune(r) {
			i += w
			continue
		}
		j := i
		for j < end {
			r2, w2 := decodeRuneAt(content, j)
			if !isWordRune(r2) {
				break
			}
			j += w2
		}
		out = append(out, wordSpan{i, j})
		i = j
	}
	return out
}

// run returns the text from the first to the last of ws if they are
// separated by single spaces only; else the longest such leading run.
func run(content string, ws []wordSpan) string {
	endAt := ws[0].end
	for k := 1; k < len(ws); k++ {
		if content[endAt:ws[k].start] != " " {
			break
		}
		endAt = ws[k].end
	}
	return content[ws[0].start:endAt]
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func decodeRuneAt(s string, i int) (rune, int) {
	if i >= len(s) {
		return 0, 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// encodeDirective percent-encodes every byte but the spec's
// TextDirectiveExplicitChar set: A-Z a-z 0-9 and ! $ ' ( ) * + . / : ; = ? @ _ ~.
// Hyphens, commas, ampersands, spaces and percent signs are always encoded.
func encodeDirective(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("!$'()*+./:;=?@_~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
