package insights

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRunes bounds a normalized text: longer ones are cut to their first
// MaxRunes characters.
const MaxRunes = 200

// Normalize is how a query or question is kept: lower case, every run of
// spaces, line breaks and control characters one space, trimmed, cut to
// MaxRunes characters; bytes that are not UTF-8 become U+FFFD. Queries
// that differ only in those ways count as one. O(len(s)); a text already
// in that form is returned as it is, without allocating.
func Normalize(s string) string {
	if normal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(min(len(s), MaxRunes*utf8.UTFMax))
	n, space := 0, false
	for _, r := range s { // an invalid byte reads as utf8.RuneError
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = n > 0
			continue
		}
		if space {
			if n++; n > MaxRunes {
				break
			}
			b.WriteByte(' ')
			space = false
		}
		if n++; n > MaxRunes {
			break
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(b.String(), " ")
}

// normal reports whether s is short printable ASCII without capitals,
// leading, trailing or repeated spaces: already normalized.
func normal(s string) bool {
	if len(s) > MaxRunes || s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c >= 'A' && c <= 'Z' || c == ' ' && s[i-1] == ' ' {
			return false
		}
	}
	return true
}
