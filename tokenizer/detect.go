package tokenizer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
)

// detectBytes is how much of a text language detection reads, and
// maxVoteWords how many of its words vote.
const (
	detectBytes  = 2048
	maxVoteWords = 96
)

// detectLangs are whatlanggo's names of the languages analysed, Latin
// script first, by ISO 639-1 code.
var detectLangs = map[whatlanggo.Lang]string{
	whatlanggo.Eng: English, whatlanggo.Dan: "da", whatlanggo.Deu: "de", whatlanggo.Spa: "es",
	whatlanggo.Fin: "fi", whatlanggo.Fra: "fr", whatlanggo.Hun: "hu", whatlanggo.Ita: "it",
	whatlanggo.Nld: "nl", whatlanggo.Nob: "no", whatlanggo.Por: "pt", whatlanggo.Ron: "ro",
	whatlanggo.Swe: "sv", whatlanggo.Tur: "tr",
}

// signatureLetters are letters of one or two of the languages analysed
// alone, each worth a vote for them (once per text, whatever their count).
var signatureLetters = func() map[rune]uint16 {
	bit := func(langs ...string) (b uint16) {
		for _, l := range langs {
			b |= 1 << slices.Index(languages, l)
		}
		return b
	}
	return map[rune]uint16{
		'ı': bit("tr"), 'ğ': bit("tr"), 'ő': bit("hu"), 'ű': bit("hu"), 'ș': bit("ro"), 'ț': bit("ro"),
		'ă': bit("ro"), 'ã': bit("pt"), 'õ': bit("pt"), 'ß': bit("de"), 'ñ': bit("es"),
		'ø': bit("da", "no"), 'æ': bit("da", "no"),
	}
}()

// stopVotes maps a lower-cased word to the languages (bits in the order of
// Languages()) it is a stop word of.
var stopVotes = func() map[string]uint16 {
	m := map[string]uint16{}
	for i, lang := range languages {
		if lang == English {
			for w := range stopWords {
				m[w] |= 1 << i
			}
			continue
		}
		for w := range StopWordsFor(lang) {
			m[w] |= 1 << i
		}
	}
	return m
}()

// Detect returns the language text is written in, as an ISO 639-1 code of
// Languages(), or "" for English and for text whose language is not
// analysed with a stemmer of its own (it gets the default analysis).
//
// Script first: Cyrillic text is Russian unless a detector is sure it is
// another Cyrillic language; other scripts have no stemmer. Latin text is
// voted on by its stop words — in each language's list — which settles
// most text at the cost of a map lookup per word; a text the vote leaves
// open, and long enough to judge, goes to whatlanggo's trigram detector
// (restricted to the languages analysed), whose answer counts when it is
// reliable. Anything else is English, the default. Only the first 2 KiB
// are read.
func Detect(text string) string {
	if len(text) > detectBytes {
		cut := detectBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	latin, cyrillic := 0, 0
	var signs uint16
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r|0x20 && r|0x20 <= 'z' {
				latin++
			}
		case unicode.Is(unicode.Latin, r):
			latin++
			signs |= signatureLetters[unicode.ToLower(r)]
		case unicode.Is(unicode.Cyrillic, r):
			cyrillic++
		}
	}
	switch {
	case cyrillic > latin:
		info := whatlanggo.Detect(text)
		if info.Lang == whatlanggo.Rus || !info.IsReliable() {
			return "ru"
		}
		return ""
	case latin < 3:
		return ""
	}
	lang, ok, leaders := voteStopWords(text, signs)
	if ok {
		return lang
	}
	if latin < 32 || len(leaders) == 0 {
		return ""
	}
	// The trigram detector decides among the leaders and English: its cost
	// grows with the languages it weighs (about 8 µs each).
	allow := map[whatlanggo.Lang]bool{whatlanggo.Eng: true}
	for _, l := range leaders {
		allow[whatlangOf[l]] = true
	}
	info := whatlanggo.DetectWithOptions(text, whatlanggo.Options{Whitelist: allow})
	if lang = detectLangs[info.Lang]; lang == English || !slices.Contains(leaders, lang) {
		return ""
	}
	return lang
}

// whatlangOf is detectLangs inverted.
var whatlangOf = func() map[string]whatlanggo.Lang {
	m := map[string]whatlanggo.Lang{}
	for l, code := range detectLangs {
		m[code] = l
	}
	return m
}()

// voteStopWords counts the stop words of each language in text. It settles
// on English when English has more than any other, and on another language
// when it has at least two and more than any other. Words of one letter
// do not vote; signs are the languages whose signature letters the text
// holds, a vote each.
//
// Left open, it returns the languages that lead the vote (with at least
// one), among which the trigram detector's answer is taken even when it is
// unsure of it.
func voteStopWords(text string, signs uint16) (lang string, ok bool, leaders []string) {
	langs := languages
	var votes [16]int
	for i := range langs {
		if signs&(1<<i) != 0 {
			votes[i]++
		}
	}
	words := 0
	for i := 0; i < len(text); {
		// The next word: letters and apostrophes.
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if unicode.IsLetter(r) {
				break
			}
			i += n
		}
		start, lower := i, true
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if !('a' <= c|0x20 && c|0x20 <= 'z') && c != '\'' {
					break
				}
				lower = lower && c >= 'a'
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) && r != '’' {
				break
			}
			lower = false
			i += n
		}
		w := text[start:i]
		if words++; words > maxVoteWords {
			break
		}
		if len(w) < 2 {
			continue // a, e, i, o, y…: a stop word in too many languages
		}
		lw := w
		if !lower {
			lw = strings.ToLower(w)
		}
		bits := stopVotes[lw]
		for i := 0; bits != 0; i, bits = i+1, bits>>1 {
			if bits&1 != 0 {
				votes[i]++
			}
		}
	}
	// The other language with the most votes, and the runner-up.
	best, second := 1, 2
	if votes[second] > votes[best] {
		best, second = second, best
	}
	for i := 3; i < len(langs); i++ {
		switch {
		case votes[i] > votes[best]:
			best, second = i, best
		case votes[i] > votes[second]:
			second = i
		}
	}
	switch {
	case votes[0] > 0 && votes[0] > votes[best]:
		return "", true, nil // English
	case votes[best] < 2 || votes[best] == votes[second] || votes[best] == votes[0]:
		if votes[best] > 0 {
			for i, l := range langs {
				if votes[i] == votes[best] {
					leaders = append(leaders, l)
				}
			}
		}
		return "", false, leaders
	}
	return langs[best], true, nil
}
