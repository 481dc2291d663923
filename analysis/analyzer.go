package analysis

import (
	"slices"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/tokenizer"
)

// Version names the analyzer's output. An index saved with another
// version is rebuilt from its records.
const Version = "sift-tokenizer-2"

// DefaultTitleWeight is how much a title word counts by default against
// a word of a document's body.
const DefaultTitleWeight = 3

// TitleGap separates title and body positions, so no phrase spans the two.
const TitleGap = 16

// Analyzer is a tokenizer with its buffers. It is not safe for concurrent
// use: a writer keeps one with large stem caches (New(0)); searches take
// small ones from a pool (Get, Put), so many concurrent queries do not
// each hold megabytes of cache.
type Analyzer struct {
	*tokenizer.Analyzer
	toks  []tokenizer.Token
	lower []byte // highlight's lowered text
}

// New returns an analyzer whose stem caches hold cacheSlots entries (the
// tokenizer's default when 0).
func New(cacheSlots int) *Analyzer {
	opts := tokenizer.DefaultOptions()
	if cacheSlots > 0 {
		opts.StemCacheSize = cacheSlots
	}
	return &Analyzer{Analyzer: tokenizer.New(opts)}
}

// searchers serve queries and highlighting: a bounded set kept in a
// channel rather than a sync.Pool, so their caches outlive garbage
// collections.
var searchers = make(chan *Analyzer, 16)

// Get returns an idle search analyzer or a new one; Put it back after use.
func Get() *Analyzer {
	select {
	case a := <-searchers:
		return a
	default:
		return New(4096)
	}
}

// Put keeps a for reuse, unless enough are idle.
func Put(a *Analyzer) {
	select {
	case searchers <- a:
	default:
	}
}

// AddField analyses text into d at positions from pos, each occurrence
// counting weight, and returns the position after the field.
func (a *Analyzer) AddField(d *index.Doc, text string, pos uint32, weight uint8) uint32 {
	a.toks = a.Append(a.toks[:0], text, pos)
	for _, t := range a.toks {
		d.AddWord(t.Term, t.Word, t.Pos, weight, t.Flags&tokenizer.Whole == 0)
	}
	return tokenizer.NextPos(a.toks, pos)
}

// Document fills d from a title, each of whose words counts titleWeight,
// and a body, in the default analysis: as the stores index a document.
func (a *Analyzer) Document(d *index.Doc, title, body string, titleWeight uint8) {
	d.Reset()
	next := a.AddField(d, title, 0, titleWeight)
	a.AddField(d, body, next+TitleGap, 1)
}

// Message fills d from a message's content in its language, which it
// returns ("" for the default).
func (a *Analyzer) Message(d *index.Doc, content string) string {
	lang := tokenizer.Detect(content)
	a.SetLanguage(lang)
	d.Reset()
	a.AddField(d, content, 0, 1)
	a.SetLanguage("")
	return lang
}

// DocumentIn is Document in the document's language, which it returns
// ("" for the default).
func (a *Analyzer) DocumentIn(d *index.Doc, doc *record.Document, titleWeight uint8) string {
	lang := DocumentLanguage(doc)
	a.SetLanguage(lang)
	a.Document(d, doc.Title, doc.Content, titleWeight)
	a.SetLanguage("")
	return lang
}

// DocumentLanguage is the language a document is analysed in: the one it
// declares when Sift stems it (English is the default), else detected
// from its title and the start of its body.
func DocumentLanguage(doc *record.Document) string {
	switch {
	case doc.Language == tokenizer.English:
		return ""
	case doc.Language != "" && tokenizer.Stemmed(doc.Language):
		return doc.Language
	}
	body := doc.Content
	if len(body) > 2048 {
		body = body[:2048]
	}
	return tokenizer.Detect(doc.Title + "\n" + body)
}

// IndexTerms appends to dst the words text is indexed under, one per
// occurrence, each repeated weight times, as the memory store's index
// counts them: what a store that ranks by its own BM25 stores and ranks
// on. Words of a compound kept whole beside its parts are included.
func IndexTerms(dst []string, text string, weight int) []string {
	a := Get()
	a.toks = a.Append(a.toks[:0], text, 0)
	for _, t := range a.toks {
		for range weight {
			dst = append(dst, t.Term)
		}
	}
	Put(a)
	return dst
}

// Fold is how author names compare in filters and opt-outs.
func Fold(s string) string { return tokenizer.Fold(s) }

// PairSep joins the two words of a pair (IndexPairs, PhrasePairs).
const PairSep = "+"

// IndexPairs appends to dst, once each, the pairs of words text holds at
// consecutive positions where one word is a stop word and the other is
// not ("i+shurir", "shurir+be"), as "first+second" (PairSep): what a
// store that cannot check positions itself narrows a phrase's candidates
// by (PhrasePairs), beside the phrase's other words. Those are the pairs
// that narrow most: a phrase's words but its stop words are held by far
// more records than the phrase when it has stop words, and a pair of two
// stop words narrows little. A record holding a phrase holds its pairs,
// as Match decides it; a pair spelt alike from other words only adds a
// candidate.
func IndexPairs(dst []string, text string) []string {
	a := Get()
	a.toks = a.Append(a.toks[:0], text, 0)
	from := len(dst)
	var prev, at []tokenizer.Token // the words at the position before, at this one
	for i := 0; i < len(a.toks); {
		pos := a.toks[i].Pos
		at = at[:0]
		for ; i < len(a.toks) && a.toks[i].Pos == pos; i++ {
			at = append(at, a.toks[i]) // a compound kept whole too, at its first part's position
		}
		if len(prev) > 0 && prev[0].Pos+1 == pos {
			for _, p := range prev {
				for _, t := range at {
					if pairs(p.Term, t.Term) {
						dst = append(dst, p.Term+PairSep+t.Term)
					}
				}
			}
		}
		prev, at = at, prev
	}
	Put(a)
	slices.Sort(dst[from:])
	return append(dst[:from], slices.Compact(dst[from:])...)
}

// pairs reports whether IndexPairs keeps the pair of words a, b.
func pairs(a, b string) bool { return tokenizer.IsAnyStopWord(a) != tokenizer.IsAnyStopWord(b) }

// PhrasePairs returns the pairs of a phrase's words (CompiledSearch.Phrases)
// that every record holding it holds (IndexPairs): none for a phrase
// without stop words, or of them alone.
func PhrasePairs(phrase []string) []string {
	var out []string
	for i := 1; i < len(phrase); i++ {
		if pairs(phrase[i-1], phrase[i]) {
			out = append(out, phrase[i-1]+PairSep+phrase[i])
		}
	}
	return out
}
