package tokenizer

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTableLo..foldTableHi is the rune range whose case and accent folding is
// precomputed: Latin-1 Supplement, Latin Extended-A/B, IPA, Greek and Cyrillic.
const (
	foldTableLo = 0x00C0
	foldTableHi = 0x04FF
)

// foldTable maps a rune of the table range to its folded form (lower case,
// diacritics removed). Entries of more than one rune (ß → ss) live in foldMulti.
var (
	foldTable [foldTableHi - foldTableLo + 1]rune
	foldMulti = map[rune]string{
		'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe",
		'þ': "th", 'Þ': "th", 'ĳ': "ij", 'Ĳ': "ij",
	}
	foldSingle = map[rune]rune{
		'ø': 'o', 'Ø': 'o', 'đ': 'd', 'Đ': 'd', 'ð': 'd', 'Ð': 'd',
		'ł': 'l', 'Ł': 'l', 'ı': 'i', 'ħ': 'h', 'Ħ': 'h', 'ŧ': 't', 'Ŧ': 't',
		'ς': 'σ', // final sigma folds like the ordinary one
	}
)

func init() {
	for r := rune(foldTableLo); r <= foldTableHi; r++ {
		foldTable[r-foldTableLo] = computeFold(r)
	}
}

// computeFold lower-cases r and strips the combining marks of its canonical
// decomposition, so é, É and e + U+0301 all fold to e.
func computeFold(r rune) rune {
	if f, ok := foldSingle[r]; ok {
		return f
	}
	lr := unicode.ToLower(r)
	if f, ok := foldSingle[lr]; ok {
		return f
	}
	var buf [16]byte
	n := utf8.EncodeRune(buf[:], lr)
	d := norm.NFD.Append(nil, buf[:n]...)
	base, size := utf8.DecodeRune(d)
	for _, m := range string(d[size:]) {
		if !unicode.Is(unicode.Mn, m) {
			return lr
		}
	}
	return base
}

// appendFolded appends the folded form of r to dst. prevAccentable reports
// whether the previous rune of the word was Latin, Greek or Cyrillic, in which
// case a combining mark r is dropped (it is an accent in decomposed input).
func appendFolded(dst []byte, r rune, prevAccentable bool) []byte {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, byte(r))
	case r == '’' || r == 'ʼ':
		return append(dst, '\'')
	case prevAccentable && unicode.Is(unicode.Mn, r):
		return dst
	case r >= foldTableLo && r <= foldTableHi:
		if s, ok := foldMulti[r]; ok {
			return append(dst, s...)
		}
		return utf8.AppendRune(dst, foldTable[r-foldTableLo])
	case r >= 0x1E00 && r <= 0x1EFF: // Latin Extended Additional (Vietnamese)
		return utf8.AppendRune(dst, computeFold(r))
	default:
		return utf8.AppendRune(dst, unicode.ToLower(r))
	}
}

// accentable reports whether combining marks after r are accents to fold away.
func accentable(r rune) bool {
	return r < 0x0500 || (r >= 0x1E00 && r <= 0x1FFF)
}

// Fold returns s lower-cased with the diacritics of Latin, Greek and Cyrillic
// letters removed and typographic apostrophes made plain. It allocates only
// when s changes.
func Fold(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return string(appendFold(make([]byte, 0, len(s)), s))
}

func appendFold(dst []byte, s string) []byte {
	prev := true
	for _, r := range s {
		dst = appendFolded(dst, r, prev)
		if !unicode.Is(unicode.Mn, r) {
			prev = accentable(r)
		}
	}
	return dst
}
