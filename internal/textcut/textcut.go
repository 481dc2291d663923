// Package textcut cuts UTF-8 text to a size in bytes without splitting a
// character.
package textcut

import "unicode/utf8"

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
