package index

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexicon groups the terms of an Index by their first rune and their
// length in runes, the two things a typo-tolerant lookup keeps fixed or
// bounds: a word matches a term one or two edits away only if both start
// alike and their lengths differ by at most the edits. A lookup reads the
// few buckets that can hold a match, not the whole dictionary. It also
// keeps, for terms that are stems, a word they were written as, so
// completions read as words.
type lexicon struct {
	buckets     map[lexKey]*bucket // terms, in creation order
	words       map[uint32]string  // term id -> a surface form, when it differs from the term
	hasWord     []uint64           // bit per term id: words holds it (a lookup without hashing)
	wordBuckets map[lexKey]*bucket // terms by their surface form
	maxLen      int                // longest term, in runes
	// The same for the terms in at least tierDF[i] documents (deleted
	// ones included): a word the index holds in d documents may only be
	// corrected into one in more than d·TypoRatio (TypoRatio), so its
	// lookup reads the highest tier at or below that, a far smaller set,
	// and does not grow with the dictionary.
	tiers [len(tierDF)]struct{ buckets, wordBuckets map[lexKey]*bucket }
}

// tierDF are the postings counts from which a term is also filed in the
// lexicon's tiers.
var tierDF = [...]uint32{TypoRatio, TypoRatio * 100, TypoRatio * 10000}

// frequentDF is the smallest of them.
const frequentDF = TypoRatio

// frequent files term id, which has n postings, in the tiers it has
// reached: all of them at or below n when all, else the one n is.
func (l *lexicon) frequent(id uint32, term string, n uint32, all bool) {
	for i, thr := range tierDF {
		if n != thr && (!all || n < thr) {
			continue
		}
		t := &l.tiers[i]
		if k, ok := keyOf(term); ok {
			addTo(t.buckets, k, id, term)
		}
		if w, ok := l.words[id]; ok {
			if k, ok := keyOf(w); ok {
				addTo(t.wordBuckets, k, id, w)
			}
		}
	}
}

// tier returns the buckets holding every term in more than minDF
// documents, of the terms or of their written forms.
func (l *lexicon) tier(minDF int, words bool) map[lexKey]*bucket {
	b := l.buckets
	if words {
		b = l.wordBuckets
	}
	for i, thr := range tierDF {
		if minDF < int(thr) {
			break
		}
		b = l.tiers[i].buckets
		if words {
			b = l.tiers[i].wordBuckets
		}
	}
	return b
}

// bucket holds the terms of one key and their text packed end to end, so
// a lookup reads one contiguous stretch of memory rather than a string
// header and a string per term.
type bucket struct {
	ids  []uint32
	ends []uint32 // end of each text in text
	text []byte
}

func (b *bucket) add(id uint32, s string) {
	b.ids = append(b.ids, id)
	b.text = append(b.text, s...)
	b.ends = append(b.ends, uint32(len(b.text)))
}

// at returns the id and text of entry i.
func (b *bucket) at(i int) (uint32, []byte) {
	start := uint32(0)
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.ids[i], b.text[start:b.ends[i]]
}

func addTo(m map[lexKey]*bucket, k lexKey, id uint32, s string) {
	b := m[k]
	if b == nil {
		b = &bucket{}
		m[k] = b
	}
	b.add(id, s)
}

type lexKey struct {
	first rune
	n     uint16 // length in runes, capped
}

// maxLexLen caps the length a term is bucketed under: longer terms share
// the last bucket (no typo lookup reaches them; completions still do).
const maxLexLen = 64

func newLexicon() lexicon {
	l := lexicon{buckets: make(map[lexKey]*bucket), words: make(map[uint32]string), wordBuckets: make(map[lexKey]*bucket)}
	for i := range l.tiers {
		l.tiers[i].buckets, l.tiers[i].wordBuckets = make(map[lexKey]*bucket), make(map[lexKey]*bucket)
	}
	return l
}

// keyOf returns the bucket of a term made of letters (and apostrophes);
// numbers, identifiers and compounds kept whole have none: they are
// neither corrected into nor completed.
func keyOf(term string) (lexKey, bool) {
	r, _ := utf8.DecodeRuneInString(term)
	if r == utf8.RuneError || !wordLike(term) {
		return lexKey{}, false
	}
	return lexKey{r, uint16(min(utf8.RuneCountInString(term), maxLexLen))}, true
}

// add files term id under its key.
func (l *lexicon) add(id uint32, term string) {
	k, ok := keyOf(term)
	if !ok {
		return
	}
	addTo(l.buckets, k, id, term)
	l.maxLen = max(l.maxLen, int(k.n))
}

// addWord keeps word as the written form of term id.
func (l *lexicon) addWord(id uint32, word string) {
	k, ok := keyOf(word)
	if !ok {
		return
	}
	for int(id>>6) >= len(l.hasWord) {
		l.hasWord = append(l.hasWord, 0)
	}
	l.hasWord[id>>6] |= 1 << (id & 63)
	l.words[id] = word
	addTo(l.wordBuckets, k, id, word)
}

// isWord records that term id was written as itself somewhere: its
// written form is then the term. (Its place in wordBuckets stays; lookups
// there skip terms without a written form.)
func (l *lexicon) isWord(id uint32) {
	if w := int(id >> 6); w < len(l.hasWord) && l.hasWord[w]&(1<<(id&63)) != 0 {
		l.hasWord[w] &^= 1 << (id & 63)
		delete(l.words, id)
	}
}

// newTerm adds t to the dictionary with an empty postings list and returns
// its id. word is how it was written, when that differs from t.
func (ix *Index) newTerm(t, word string) uint32 {
	li := uint32(len(ix.lists))
	t = ix.text.str(t)
	ix.dict[t] = li
	ix.lists = append(ix.lists, plist{})
	ix.terms = append(ix.terms, t)
	ix.lex.add(li, t)
	if word != "" && word != t {
		ix.lex.addWord(li, ix.text.str(word))
	}
	return li
}

// Word returns how term was written (a surface form of a stem), or term
// itself when no other form is known.
func (ix *Index) Word(term string) string {
	if li, ok := ix.dict[term]; ok {
		if w, ok := ix.lex.words[li]; ok {
			return w
		}
	}
	return term
}

// Completion is a term that starts with what a caller typed.
type Completion struct {
	Word string // how it is written
	Term string // the index term
	DF   int    // documents holding it that the caller may see
}

// MaxCompletions bounds what Complete returns.
const MaxCompletions = 64

// Complete returns up to k terms (or their written forms) that start with
// prefix, a folded word, in the most documents first: those visible to a
// public caller only when public. Terms of no visible document are left
// out. O(terms sharing prefix's first rune).
func (ix *Index) Complete(prefix string, public bool, k int) []Completion {
	k = min(k, MaxCompletions)
	first, ok := keyOf(prefix)
	if !ok || k <= 0 {
		return nil
	}
	st := ix.statsFor(&Query{Public: public})
	var out []Completion
	for n := int(first.n); n <= ix.lex.maxLen; n++ {
		b := ix.lex.buckets[lexKey{first.first, uint16(n)}]
		if b == nil {
			continue
		}
		for i, li := range b.ids {
			_, text := b.at(i)
			if len(text) < len(prefix) || string(text[:len(prefix)]) != prefix {
				if _, stemmed := ix.lex.words[li]; !stemmed {
					continue
				}
			}
			term := ix.terms[li]
			word, stemmed := ix.lex.words[li]
			if !strings.HasPrefix(term, prefix) && !(stemmed && strings.HasPrefix(word, prefix)) {
				continue
			}
			df := int(st.df(&ix.lists[li]))
			if df == 0 || ix.liveDF(&ix.lists[li]) == 0 {
				continue
			}
			if !stemmed {
				word = term
			}
			out = append(out, Completion{Word: word, Term: term, DF: df})
		}
	}
	slices.SortFunc(out, func(a, b Completion) int {
		if c := cmp.Compare(b.DF, a.DF); c != 0 {
			return c
		}
		return strings.Compare(a.Word, b.Word)
	})
	return out[:min(len(out), k)]
}

// liveDF counts the live documents of a postings list, up to 1: whether
// any document holding the term is still there (deleted ones keep their
// postings until Compact).
func (ix *Index) liveDF(p *plist) int {
	if ix.dead == 0 {
		return int(p.n)
	}
	if p.more != nil {
		if p.more.docs.Intersects(ix.live) {
			return 1
		}
		return 0
	}
	live := 0
	p.postings(func(id uint32, _ uint8, _ uint32) {
		if ix.lens[id] != 0 {
			live = 1
		}
	})
	return live
}

// wordLike reports whether term is made of letters, marks and apostrophes.
func wordLike(term string) bool {
	for i := 0; i < len(term); {
		c := term[i]
		if c < utf8.RuneSelf {
			if ('a' > c || c > 'z') && c != '\'' {
				return false
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(term[i:])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			return false
		}
		i += w
	}
	return true
}
