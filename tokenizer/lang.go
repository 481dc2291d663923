package tokenizer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	snowball "github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/turkish"
)

// English is the default analysis: the language of text that is not
// detected as another, and of every query word.
const English = "en"

// stemmers are the Snowball stemmers of the languages analysed besides
// English, by ISO 639-1 code. English keeps its own (kljensen/snowball's
// Porter2), which the index was tuned with.
var stemmers = map[string]func(*snowball.Env) bool{
	"da": danish.Stem, "de": german.Stem, "es": spanish.Stem, "fi": finnish.Stem,
	"fr": french.Stem, "hu": hungarian.Stem, "it": italian.Stem, "nl": dutch.Stem,
	"no": norwegian.Stem, "pt": portuguese.Stem, "ro": romanian.Stem, "ru": russian.Stem,
	"sv": swedish.Stem, "tr": turkish.Stem,
}

// Languages lists the languages analysed with their own stemmer and stop
// words, English first.
func Languages() []string { return slices.Clone(languages) }

var languages = []string{English, "da", "de", "es", "fi", "fr", "hu", "it", "nl", "no", "pt", "ro", "ru", "sv", "tr"}

// Stemmed reports whether lang is analysed with a stemmer of its own.
func Stemmed(lang string) bool { return lang == English || stemmers[lang] != nil }

// SetLanguage makes the analyzer analyse words as lang does (English for
// "" or a language without a stemmer) until the next call.
func (a *Analyzer) SetLanguage(lang string) {
	if stemmers[lang] == nil {
		lang = ""
	}
	a.lang = lang
}

// Language is the language the analyzer analyses words as: "" for English.
func (a *Analyzer) Language() string { return a.lang }

// TermIn returns the term one word (as written) is indexed under in lang,
// and whether it is one of lang's stop words.
func (a *Analyzer) TermIn(w, lang string) (term string, stop bool) {
	saved := a.lang
	a.SetLanguage(lang)
	t, _, f, ok := a.word(w)
	a.lang = saved
	return t, ok && f&Stop != 0
}

// wordIn analyses one word in a language other than English: lower-cased,
// checked against the language's stop words, stemmed with its accents
// (Snowball's stemmers read them), then folded.
func (a *Analyzer) wordIn(w string) (term, word string, f Flags, ok bool) {
	key := a.lang + "\x00" + w
	if s, hit := a.stems.get(key); hit {
		return a.cachedTerm(s)
	}
	lower := strings.ToLower(w)
	if elides[a.lang] {
		lower = elided(lower)
	}
	var out string
	switch folded := Fold(lower); {
	case len(folded) > a.opts.MaxTermBytes || folded == "":
		return "", "", 0, false
	case StopWordsFor(a.lang)[lower] || StopWordsFor(a.lang)[folded]:
		out = "\x01" + folded
	case !a.opts.Stem || !letters(lower):
		out = folded
	default:
		env := snowball.NewEnv(lower)
		stemmers[a.lang](env)
		if s := Fold(env.Current()); s != folded && s != "" {
			out = s + "\x00" + folded
		} else {
			out = folded
		}
	}
	a.stems.put(key, out)
	return a.cachedTerm(out)
}

// cachedTerm decodes wordIn's cache entry: "\x01term" for a stop word,
// "term\x00word" for a stem, "term" for a word that is its own term.
func (a *Analyzer) cachedTerm(s string) (term, word string, f Flags, ok bool) {
	if strings.HasPrefix(s, "\x01") {
		return s[1:], "", Stop, true
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i], s[i+1:], 0, true
	}
	return s, "", 0, true
}

// letters reports whether w is made of letters and marks only.
func letters(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && r != '\'' {
			return false
		}
	}
	return true
}

// isSegmented reports whether r belongs to a script written without spaces
// between words, or whose words carry particles (Hangul), that is indexed
// as character bigrams: Han, Hiragana, Katakana, Hangul and Thai.
func isSegmented(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai) || r == 0x30FC
}

// IsAnyStopWord reports whether the folded word w is a stop word of
// English or of any language analysed.
func IsAnyStopWord(w string) bool {
	if IsStopWord(w) {
		return true
	}
	for lang := range stemmers {
		if StopWordsFor(lang)[w] {
			return true
		}
	}
	return false
}

// elides are the languages whose articles and pronouns elide into the
// next word: l'aggiornamento, d'accord, qu'il.
var elides = map[string]bool{"fr": true, "it": true}

// elided strips an elided article or pronoun (at most four letters and an
// apostrophe) from the front of a lower-cased word.
func elided(w string) string {
	for i := 0; i < len(w) && i <= 5; i++ {
		if w[i] == '\'' {
			if i > 0 && i+1 < len(w) {
				return w[i+1:]
			}
			return w
		}
		if w[i] >= utf8.RuneSelf {
			if strings.HasPrefix(w[i:], "’") && i > 0 && i+3 < len(w) {
				return w[i+3:]
			}
			return w
		}
	}
	return w
}
