package engine

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/tokenizer"
)

// Suggestions complete what a caller is typing into a search box: the last
// word of the query from the words of the index, most frequent first, and
// the titles of channels and documents that a word of theirs starts with
// the query's last words. They are drawn from what the caller may see only.

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
// matched by; suggestScan bounds the title entries one phrase reads.
const (
	suggestPhraseWords = 4
	suggestScan        = 256
	suggestWordsAsked  = 32 // completions asked of each index, before merging
)

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

// titleKeys returns the keys a title is found by: its normalised form
// (with a final space) from each of its first words on; the first is the
// whole title.
func titleKeys(title string) []string {
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
	keys := titleKeys(title)
	for pi, p := range phrases {
		for ki, k := range keys {
			if strings.HasPrefix(k, p) {
				return titleRank(pi, ki == 0, title), true
			}
		}
	}
	return 0, false
}

func titleRank(phrase int, atStart bool, title string) int {
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

// Suggest completes req.Query: the words of messages and documents that
// start with its last word, and the channels and documents whose titles
// match its last words, among what the caller may see. O(terms sharing the
// word's first rune) for words, O(log titles + suggestScan) for titles.
func (e *Engine) Suggest(req SuggestRequest) ([]Suggestion, error) {
	limit, err := CheckSuggest(&req)
	if err != nil {
		return nil, err
	}
	sq := ParseSuggest(req.Query)
	if sq.Word == "" && len(sq.Phrases) == 0 {
		return []Suggestion{}, nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	words := e.completeWord(&sq, req.Private)
	titles := e.matchTitles(&sq, req.Private, limit)
	return MergeSuggestions(words, titles, limit), nil
}

// completeWord merges the completions of the last word in both indexes.
// The caller holds mu.RLock.
func (e *Engine) completeWord(sq *SuggestQuery, private bool) []Suggestion {
	if sq.Word == "" {
		return nil
	}
	var all []index.Completion
	all = append(all, e.st.msgIdx.Complete(sq.Word, !private, suggestWordsAsked)...)
	all = append(all, e.st.docIdx.Complete(sq.Word, !private, suggestWordsAsked)...)
	counts := map[string]int{}
	var order []string
	for _, c := range all {
		if !strings.HasPrefix(c.Word, sq.Word) || tokenizer.IsStopWord(c.Word) {
			continue
		}
		if _, seen := counts[c.Word]; !seen {
			order = append(order, c.Word)
		}
		counts[c.Word] += c.DF
	}
	out := make([]Suggestion, len(order))
	for i, w := range order {
		out[i] = Suggestion{Text: sq.Head + w, Kind: SuggestWord, Count: counts[w]}
	}
	slices.SortFunc(out, func(a, b Suggestion) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Text, b.Text)) })
	return out
}

// titleTable finds channels and documents by the starts of their titles'
// words: keys sorted, those at a title's start apart from the others. It
// is rebuilt after writes (see titles); an entry's record is checked when
// it is read, so a table built before a write never shows what the write
// renamed, removed or hid.
type titleTable struct {
	seq           uint64
	built         time.Time
	starts, inner []titleEntry
}

type titleEntry struct {
	key   string // the normalised title from one of its words on
	title string // as it was when the table was built
	ref   uint32 // channel number or document slot
	doc   bool
}

// titleRebuildEvery is how often at most a large title table is rebuilt
// while writes go on; a small one is rebuilt after every write.
const (
	titleRebuildEvery = time.Second
	smallTitleTable   = 4096
)

// titles returns a title table no older than the rules above allow. The
// caller holds mu.RLock.
func (e *Engine) titles() *titleTable {
	seq := e.Seq()
	e.titleMu.Lock()
	defer e.titleMu.Unlock()
	t := e.titleTab
	if t != nil && (t.seq == seq || len(t.starts)+len(t.inner) > smallTitleTable && time.Since(t.built) < titleRebuildEvery) {
		return t
	}
	t = e.st.buildTitles(seq)
	e.titleTab = t
	return t
}

// buildTitles makes the title table of st. The caller holds mu.RLock.
// O(channels + documents).
func (st *state) buildTitles(seq uint64) *titleTable {
	t := &titleTable{seq: seq, built: time.Now()}
	add := func(title string, ref uint32, doc bool) {
		for i, k := range titleKeys(title) {
			en := titleEntry{key: k, title: title, ref: ref, doc: doc}
			if i == 0 {
				t.starts = append(t.starts, en)
			} else {
				t.inner = append(t.inner, en)
			}
		}
	}
	for n, c := range st.chans {
		if c != nil {
			add(c.Name, uint32(n), false)
		}
	}
	for i, d := range st.docs {
		if d != nil {
			add(d.Title, uint32(i), true)
		}
	}
	byKey := func(a, b titleEntry) int { return strings.Compare(a.key, b.key) }
	slices.SortFunc(t.starts, byKey)
	slices.SortFunc(t.inner, byKey)
	return t
}

// matchTitles finds the titles of channels and documents the caller may
// see that match sq's phrases, at most limit of them. The caller holds
// mu.RLock.
func (e *Engine) matchTitles(sq *SuggestQuery, private bool, limit int) []RankedTitle {
	if len(sq.Phrases) == 0 {
		return nil
	}
	st := e.st
	t := e.titles()
	type ref struct {
		n   uint32
		doc bool
	}
	seen := map[ref]bool{}
	var out []RankedTitle
	for pi, p := range sq.Phrases {
		for pj, part := range [2][]titleEntry{t.starts, t.inner} {
			i := sort.Search(len(part), func(i int) bool { return part[i].key >= p })
			for end := min(len(part), i+suggestScan); i < end && strings.HasPrefix(part[i].key, p); i++ {
				en := &part[i]
				if seen[ref{en.ref, en.doc}] {
					continue
				}
				s, ok := st.titleSuggestion(en, private)
				if !ok {
					continue
				}
				seen[ref{en.ref, en.doc}] = true
				out = append(out, RankedTitle{s, titleRank(pi, pj == 0, en.title)})
			}
		}
		if len(out) >= limit {
			break
		}
	}
	return out
}

// titleSuggestion is the suggestion of a table entry, when its record is
// still there under that title and the caller may see it. The caller holds
// mu.RLock.
func (st *state) titleSuggestion(en *titleEntry, private bool) (Suggestion, bool) {
	if en.doc {
		d := st.docs[en.ref]
		if d == nil || d.Title != en.title || !private && st.docIdx.Hidden(en.ref) {
			return Suggestion{}, false
		}
		return Suggestion{Text: d.Title, Kind: SuggestDocument, Slug: d.Slug, Source: st.sourceName(d.SourceID)}, true
	}
	c := st.chans[en.ref]
	if c == nil || c.Name != en.title || !private && st.hid.chans.Contains(en.ref) {
		return Suggestion{}, false
	}
	return Suggestion{Text: c.Name, Kind: SuggestChannel, Slug: c.Slug, Source: st.sourceName(c.SourceID)}, true
}

func (st *state) sourceName(id string) string {
	if s := st.sources[id]; s != nil {
		return s.Name
	}
	return ""
}
