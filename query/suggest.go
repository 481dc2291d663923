package query

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/tokenizer"
)

// Suggestions complete what a caller is typing into a search box: the last
// word of the query from the words of the index, most frequent first, and
// the titles of channels and documents that a word of theirs starts with
// the query's last words. Every store draws them from what the caller may
// see only, and merges and ranks them with these functions.

// Kinds of Suggestion.
const (
	SuggestWord     = "word"
	SuggestChannel  = "channel"
	SuggestDocument = "document"
)

// Bounds of a SuggestRequest.
const (
	MaxSuggestions       = 8
	MaxSuggestQueryBytes = 256
)

// suggestPhraseWords is how many of the query's last words a title may be
// matched by.
const suggestPhraseWords = 4

// SuggestRequest asks for completions of Query, the text typed so far.
type SuggestRequest struct {
	Query string
	Limit int // 1..MaxSuggestions; 0 means MaxSuggestions
	// Private includes what callers without credentials may not see.
	Private bool
}

// Suggestion is one completion: the query with its last word completed
// (SuggestWord), or a channel's name or a document's title.
type Suggestion struct {
	Text   string
	Kind   string
	Slug   string // of the channel or document
	Source string // the name of the channel's or document's source
	// Count is, for a word, the messages plus documents the caller may see
	// that hold it.
	Count int
}

// SuggestQuery is a query cut for completion.
type SuggestQuery struct {
	// Head is the query up to the word being typed, as written; a word
	// completion is Head followed by the word.
	Head string
	// Word is the word being typed, folded; "" when the query ends with a
	// space or the last word is a filter (channel:…) or has no letter or
	// digit.
	Word string
	// Phrases are the query's last words, folded and normalised as
	// NormTitle does, longest first: titles are matched by them.
	Phrases []string
}

// ParseSuggest cuts q for completion.
func ParseSuggest(q string) SuggestQuery {
	var sq SuggestQuery
	end := strings.TrimRightFunc(q, unicode.IsSpace)
	if end == "" {
		return sq
	}
	start := 0
	if i := strings.LastIndexFunc(end, unicode.IsSpace); i >= 0 {
		_, n := utf8.DecodeRuneInString(end[i:])
		start = i + n
	}
	last := strings.TrimLeftFunc(end[start:], func(r rune) bool { return !wordRune(r) })
	if len(end) == len(q) && last != "" && !strings.ContainsRune(last, ':') {
		sq.Head, sq.Word = q[:len(end)-len(last)], tokenizer.Fold(last)
	}
	norm := NormTitle(q)
	words := strings.Fields(norm)
	trail := ""
	if strings.HasSuffix(norm, " ") {
		trail = " "
	}
	for i := max(0, len(words)-suggestPhraseWords); i < len(words); i++ {
		sq.Phrases = append(sq.Phrases, strings.Join(words[i:], " ")+trail)
	}
	return sq
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// NormTitle folds s (tokenizer.Fold) and turns each run of characters
// that are neither letters nor digits into one space, dropping a leading
// one: "Webhooks: a Guide!" → "webhooks a guide ".
func NormTitle(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	sep := false
	for _, r := range tokenizer.Fold(s) {
		if wordRune(r) {
			if sep && b.Len() > 0 {
				b.WriteByte(' ')
			}
			sep = false
			b.WriteRune(r)
		} else {
			sep = true
		}
	}
	if sep && b.Len() > 0 {
		b.WriteByte(' ')
	}
	return b.String()
}

// TitleKeys returns the keys a title is found by: its normalised form
// (with a final space) from each of its first words on; the first is the
// whole title.
func TitleKeys(title string) []string {
	norm := NormTitle(title)
	if norm == "" {
		return nil
	}
	if !strings.HasSuffix(norm, " ") {
		norm += " "
	}
	keys := []string{norm}
	for i := 1; i < len(norm)-1 && len(keys) < 16; i++ {
		if norm[i-1] == ' ' {
			keys = append(keys, norm[i:])
		}
	}
	return keys
}

// MatchTitle reports how well title matches the phrases of a SuggestQuery:
// ok when a word of it (or the title itself) starts with one of them;
// rank orders the matches, lower first: longer phrases, then matches at
// the title's start, then shorter titles.
func MatchTitle(title string, phrases []string) (rank int, ok bool) {
	keys := TitleKeys(title)
	for pi, p := range phrases {
		for ki, k := range keys {
			if strings.HasPrefix(k, p) {
				return TitleRank(pi, ki == 0, title), true
			}
		}
	}
	return 0, false
}

// TitleRank is the rank MatchTitle gives a match of phrase (its index)
// at the title's start or not.
func TitleRank(phrase int, atStart bool, title string) int {
	r := phrase * 4096
	if !atStart {
		r += 2048
	}
	return r + min(len(title), 2047)
}

// RankedTitle is a title suggestion with its MatchTitle rank.
type RankedTitle struct {
	Suggestion
	Rank int
}

// MergeSuggestions makes the answer of at most limit suggestions from
// words (most frequent first) and titles: words first, with at most half
// of the places going to titles when there are words enough.
func MergeSuggestions(words []Suggestion, titles []RankedTitle, limit int) []Suggestion {
	slices.SortStableFunc(titles, func(a, b RankedTitle) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Text, b.Text), cmp.Compare(a.Slug, b.Slug))
	})
	nt := min(len(titles), max(limit/2, limit-len(words)))
	nw := min(len(words), limit-nt)
	out := make([]Suggestion, 0, nw+nt)
	out = append(out, words[:nw]...)
	for _, t := range titles[:nt] {
		out = append(out, t.Suggestion)
	}
	return out
}

// CheckSuggest validates req and returns its limit.
func CheckSuggest(req *SuggestRequest) (int, error) {
	if len(req.Query) > MaxSuggestQueryBytes {
		return 0, invalidf("q is too long: %d bytes, at most %d", len(req.Query), MaxSuggestQueryBytes)
	}
	if req.Limit < 0 || req.Limit > MaxSuggestions {
		return 0, invalidf("limit must be from 1 to %d", MaxSuggestions)
	}
	return cmp.Or(req.Limit, MaxSuggestions), nil
}
