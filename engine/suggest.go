package engine

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/tokenizer"
)

// Suggestions complete what a caller is typing into a search box: the last
// word of the query from the words of the index, most frequent first, and
// the titles of channels and documents that a word of theirs starts with
// the query's last words. They are drawn from what the caller may see only.

// suggestScan bounds the title entries one phrase reads.
const (
	suggestScan       = 256
	suggestWordsAsked = 32 // completions asked of each index, before merging
)

// Suggest completes req.Query: the words of messages and documents that
// start with its last word, and the channels and documents whose titles
// match its last words, among what the caller may see. O(terms sharing the
// word's first rune) for words, O(log titles + suggestScan) for titles.
func (e *searcher) Suggest(req query.SuggestRequest) ([]query.Suggestion, error) {
	limit, err := query.CheckSuggest(&req)
	if err != nil {
		return nil, err
	}
	sq := query.ParseSuggest(req.Query)
	if sq.Word == "" && len(sq.Phrases) == 0 {
		return []query.Suggestion{}, nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	words := e.completeWord(&sq, req.Private)
	titles := e.matchTitles(&sq, req.Private, limit)
	return query.MergeSuggestions(words, titles, limit), nil
}

// completeWord merges the completions of the last word in both indexes.
// The caller holds mu.RLock.
func (e *searcher) completeWord(sq *query.SuggestQuery, private bool) []query.Suggestion {
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
	out := make([]query.Suggestion, len(order))
	for i, w := range order {
		out[i] = query.Suggestion{Text: sq.Head + w, Kind: query.SuggestWord, Count: counts[w]}
	}
	slices.SortFunc(out, func(a, b query.Suggestion) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Text, b.Text))
	})
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
func (e *searcher) titles() *titleTable {
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
		for i, k := range query.TitleKeys(title) {
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
func (e *searcher) matchTitles(sq *query.SuggestQuery, private bool, limit int) []query.RankedTitle {
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
	var out []query.RankedTitle
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
				out = append(out, query.RankedTitle{Suggestion: s, Rank: query.TitleRank(pi, pj == 0, en.title)})
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
func (st *state) titleSuggestion(en *titleEntry, private bool) (query.Suggestion, bool) {
	if en.doc {
		d := st.docs[en.ref]
		if d == nil || d.Title != en.title || !private && st.docIdx.Hidden(en.ref) {
			return query.Suggestion{}, false
		}
		return query.Suggestion{Text: d.Title, Kind: query.SuggestDocument, Slug: d.Slug, Source: st.sourceName(d.SourceID)}, true
	}
	c := st.chans[en.ref]
	if c == nil || c.Name != en.title || !private && st.hid.chans.Contains(en.ref) {
		return query.Suggestion{}, false
	}
	return query.Suggestion{Text: c.Name, Kind: query.SuggestChannel, Slug: c.Slug, Source: st.sourceName(c.SourceID)}, true
}

func (st *state) sourceName(id string) string {
	if s := st.sources[id]; s != nil {
		return s.Name
	}
	return ""
}
