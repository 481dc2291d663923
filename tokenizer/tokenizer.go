package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Flags describe how a token came about.
type Flags uint8

const (
	// Stop marks an English function word: indexed so phrases match, ignored
	// for ranking unless a query holds nothing else.
	Stop Flags = 1 << iota
	// Whole marks a compound kept whole: getUserById, snake_case_name,
	// pkg.Func, path/to/file.go. It shares its position with its first Part.
	Whole
	// Part marks one word of a compound, at consecutive positions.
	Part
	// CJK marks a character bigram (or a lone character) of Han, Hiragana,
	// Katakana, Hangul or Thai text: scripts written without spaces between
	// words, or (Hangul) with particles attached to them, so a word is found
	// inside a longer run.
	CJK
)

// Token is one term occurrence.
type Token struct {
	Term  string // folded; stemmed for ordinary words and compound parts
	Word  string // the folded word Term is a stem of; empty when Term is the word
	Start int32  // byte offset of the occurrence in the text
	End   int32
	Pos   uint32 // word position, for phrase queries
	Flags Flags
}

// Options tune an Analyzer.
type Options struct {
	Stem          bool // English stemming (Snowball/Porter2) of Latin-script words
	MaxTermBytes  int  // longer terms are not indexed (base64 blobs and the like)
	StemCacheSize int  // slots of the per-analyzer stem and fold caches
}

// DefaultOptions are the options the engine indexes and searches with.
func DefaultOptions() Options {
	return Options{Stem: true, MaxTermBytes: 128, StemCacheSize: 1 << 17}
}

// Analyzer turns text into tokens. It keeps caches, so it is not safe for
// concurrent use: give each goroutine its own (they are cheap).
type Analyzer struct {
	opts  Options
	stems *cache // folded word -> term
	folds *cache // word -> folded form, for words that change
	buf   []byte
	parts []span
	lang  string // "" for English; else a key of stemmers (SetLanguage)
}

type span struct{ start, end int }

// New returns an Analyzer with the given options.
func New(opts Options) *Analyzer {
	if opts.MaxTermBytes <= 0 {
		opts.MaxTermBytes = DefaultOptions().MaxTermBytes
	}
	if opts.StemCacheSize <= 0 {
		opts.StemCacheSize = DefaultOptions().StemCacheSize
	}
	return &Analyzer{opts: opts, stems: newCache(opts.StemCacheSize), folds: newCache(opts.StemCacheSize / 4)}
}

// Append appends the tokens of text to dst, numbering positions from
// firstPos, and returns the extended slice. Invalid UTF-8 separates words.
func (a *Analyzer) Append(dst []Token, text string, firstPos uint32) []Token {
	pos := firstPos
	for i := 0; i < len(text); {
		r, w := decodeRune(text, i)
		switch classOf(r) {
		case clsWord:
			end := scanCompound(text, i)
			dst, pos = a.emitCompound(dst, text, i, end, pos)
			i = end
		case clsCJK:
			end := i
			for end < len(text) {
				r2, w2 := decodeRune(text, end)
				if classOf(r2) != clsCJK {
					break
				}
				end += w2
			}
			dst, pos = emitCJK(dst, text, i, end, pos)
			i = end
		default:
			i += w
		}
	}
	return dst
}

// NextPos returns the position after the last token of toks, or firstPos
// when there are none: where the next field's tokens may start.
func NextPos(toks []Token, firstPos uint32) uint32 {
	if len(toks) == 0 {
		return firstPos
	}
	return toks[len(toks)-1].Pos + 1
}

// emitCompound emits the word text[start:end], which may be a compound of
// parts joined by punctuation or written in camelCase.
func (a *Analyzer) emitCompound(dst []Token, text string, start, end int, pos uint32) ([]Token, uint32) {
	parts := splitParts(a.parts[:0], text, start, end)
	a.parts = parts
	if len(parts) == 0 {
		return dst, pos
	}
	if len(parts) == 1 && parts[0].start == start && parts[0].end == end {
		if t, w, f, ok := a.word(text[start:end]); ok {
			dst = append(dst, Token{Term: t, Word: w, Start: int32(start), End: int32(end), Pos: pos, Flags: f})
		}
		return dst, pos + 1
	}
	if codeLike(text[start:end], parts) {
		if whole := a.fold(text[start:end]); len(whole) <= a.opts.MaxTermBytes {
			dst = append(dst, Token{Term: whole, Start: int32(start), End: int32(end), Pos: pos, Flags: Whole})
		}
	}
	for i, p := range parts {
		if t, w, f, ok := a.word(text[p.start:p.end]); ok {
			dst = append(dst, Token{Term: t, Word: w, Start: int32(p.start), End: int32(p.end), Pos: pos + uint32(i), Flags: f | Part})
		}
	}
	return dst, pos + uint32(len(parts))
}

// word folds, stop-checks and stems one word; word is the folded form when
// the term is a stem of it.
func (a *Analyzer) word(w string) (term, word string, f Flags, ok bool) {
	if a.lang != "" {
		return a.wordIn(w)
	}
	folded := a.fold(w)
	if len(folded) > a.opts.MaxTermBytes || folded == "" {
		return "", "", 0, false
	}
	if IsStopWord(folded) {
		return folded, "", Stop, true
	}
	if s := a.stem(folded); s != folded {
		return s, folded, 0, true
	}
	return folded, "", 0, true
}

// fold returns the folded form of w, without allocating when w is already
// folded ASCII or its folded form is cached.
func (a *Analyzer) fold(w string) string {
	clean := true
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			clean = false
			break
		}
	}
	if clean {
		return w
	}
	if s, ok := a.folds.get(w); ok {
		return s
	}
	a.buf = appendFold(a.buf[:0], w)
	s := string(a.buf)
	a.folds.put(w, s)
	return s
}

// stem returns the English stem of a folded word, through the cache.
func (a *Analyzer) stem(w string) string {
	if !a.opts.Stem || len(w) < 3 || !stemmable(w) {
		return w
	}
	if s, ok := a.stems.get(w); ok {
		return s
	}
	s := english.Stem(w, true)
	a.stems.put(w, s)
	return s
}

// stemmable reports whether w is an ASCII word of letters (and apostrophes),
// the only input the English stemmer is meant for.
func stemmable(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && c != '\'' {
			return false
		}
	}
	return true
}

// emitCJK emits overlapping character bigrams of a CJK run; a run of one
// character is emitted as itself.
func emitCJK(dst []Token, text string, start, end int, pos uint32) ([]Token, uint32) {
	if _, w := decodeRune(text, start); start+w >= end {
		return append(dst, Token{Term: text[start:end], Start: int32(start), End: int32(end), Pos: pos, Flags: CJK}), pos + 1
	}
	for i := start; i < end; {
		_, w1 := decodeRune(text, i)
		j := i + w1
		if j >= end {
			break
		}
		_, w2 := decodeRune(text, j)
		dst = append(dst, Token{Term: text[i : j+w2], Start: int32(i), End: int32(j + w2), Pos: pos, Flags: CJK})
		pos++
		i = j
	}
	return dst, pos
}

type class uint8

const (
	clsSep class = iota
	clsWord
	clsCJK
)

var asciiClass = func() (t [utf8.RuneSelf]class) {
	for c := 0; c < utf8.RuneSelf; c++ {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			t[c] = clsWord
		}
	}
	return t
}()

func classOf(r rune) class {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case r == utf8.RuneError:
		return clsSep
	case isSegmented(r):
		return clsCJK
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
		return clsWord
	}
	return clsSep
}

// isJoiner reports whether r may join two words into a compound.
func isJoiner(r rune) bool {
	switch r {
	case '.', '/', '-', ':', '@', '\\':
		return true
	}
	return false
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == 'ʼ' }

func decodeRune(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// scanCompound returns the end of the compound that starts with the word
// character at text[start]: words joined by single joiners (or "::"), with
// apostrophes inside words (don't, user's).
func scanCompound(text string, start int) int {
	i := start
	for {
		for i < len(text) {
			r, w := decodeRune(text, i)
			if classOf(r) == clsWord {
				i += w
				continue
			}
			if isApostrophe(r) && i+w < len(text) {
				if r2, _ := decodeRune(text, i+w); classOf(r2) == clsWord && unicode.IsLetter(r2) {
					i += w
					continue
				}
			}
			break
		}
		if i >= len(text) {
			return i
		}
		r, w := decodeRune(text, i)
		if !isJoiner(r) {
			return i
		}
		j := i + w
		if r == ':' && j < len(text) && text[j] == ':' {
			j++
		}
		if j >= len(text) {
			return i
		}
		if r2, _ := decodeRune(text, j); classOf(r2) != clsWord {
			return i
		}
		i = j
	}
}

// codeLike reports whether the compound w with the given parts is worth
// indexing whole: an identifier, path, address or dotted name. Hyphenated
// prose ("high-speed", "state-of-the-art", 2016-01-31) and abbreviations
// (e.g., U.S.) are not: their whole form would only add a rare term that
// outranks the same words written apart.
func codeLike(w string, parts []span) bool {
	switch {
	case strings.ContainsAny(w, "_@\\:"):
		return true
	case len(parts) > strings.Count(w, "-")+strings.Count(w, ".")+strings.Count(w, "/")+1:
		return true // a camelCase boundary split a part
	case !strings.ContainsAny(w, "./"):
		return false
	}
	for _, p := range parts {
		if p.end-p.start < 2 {
			return false
		}
	}
	return true
}

// splitParts splits the compound text[start:end] into words at joiners,
// underscores and camelCase boundaries (getUserById → get User By Id,
// HTTPServer → HTTP Server). Letter-digit changes do not split (utf8, ipv6).
func splitParts(dst []span, text string, start, end int) []span {
	partStart := -1
	var prev, prevPrev rune
	flush := func(at int) {
		if partStart >= 0 && at > partStart {
			dst = append(dst, span{partStart, at})
		}
		partStart = -1
	}
	for i := start; i < end; {
		r, w := decodeRune(text, i)
		if isJoiner(r) || r == '_' {
			flush(i)
			prev, prevPrev = 0, 0
			i += w
			continue
		}
		if partStart < 0 {
			partStart = i
		} else if unicode.IsUpper(r) && unicode.IsLower(prev) {
			flush(i)
			partStart = i
		} else if unicode.IsLower(r) && unicode.IsUpper(prev) && unicode.IsUpper(prevPrev) {
			// HTTPServer: the boundary falls before the last capital.
			_, pw := utf8.DecodeLastRuneInString(text[:i])
			flush(i - pw)
			partStart = i - pw
		}
		prevPrev, prev = prev, r
		i += w
	}
	flush(end)
	return dst
}
