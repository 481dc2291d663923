package engine

import (
	"sync"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/tokenizer"
)

// Records are analysed in their language (tokenizer.Detect): its stemmer
// and stop words. A query is analysed in the default analysis and, word by
// word, in every other language records the caller may see are written
// in; a document then scores for a word by the best of its analyses.

// minLanguageShare: a language counts as present when at least one in
// this many messages, or documents, is in it. Detection errs now and then
// (about one short English message in 200 of the benchmarks' synthetic
// chat goes to one of a dozen languages); without a floor, every query
// would be analysed in all of them for nothing.
const minLanguageShare = 200

// langCache keeps what languages found for the indexes' generations.
type langCache struct {
	mu              sync.Mutex
	msgGen, docGen  uint64
	ok              bool
	public, private []string
}

// languages returns the languages other than the default that records
// hold, only visible records counted when public. The caller holds
// mu.RLock.
func (st *state) languages(public bool) []string {
	c := &st.langs
	mg, dg := st.msgIdx.Generation(), st.docIdx.Generation()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.msgGen != mg || c.docGen != dg {
		c.public, c.private = st.presentLanguages(true), st.presentLanguages(false)
		c.msgGen, c.docGen, c.ok = mg, dg, true
	}
	if public {
		return c.public
	}
	return c.private
}

func (st *state) presentLanguages(public bool) []string {
	var out []string
	for _, lang := range tokenizer.Languages() {
		if lang == tokenizer.English {
			continue
		}
		for _, ix := range [...]*index.Index{st.msgIdx, st.docIdx} {
			if n, of := ix.FacetCount(langFacet(lang), public); n > 0 && n*minLanguageShare >= of {
				out = append(out, lang)
				break
			}
		}
	}
	return out
}

// languageOf returns the language record id of ix is analysed in, of
// langs (those the caller may see: a record it finds is among them) or
// the default. The caller holds mu.RLock.
func languageOf(ix *index.Index, id uint32, langs []string) string {
	for _, lang := range langs {
		if ix.Tagged(langFacet(lang), id) {
			return lang
		}
	}
	return ""
}
