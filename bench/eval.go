package bench

import (
	"context"
	"time"

	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// Rankings are the three rankings the evaluation compares, each a map of
// query id to BEIR document ids, best first.
type Rankings struct {
	BM25    map[string][]string // GET /api/search: BM25 over documents
	Vectors map[string][]string // the embedder alone: semantic search by vectors only, no query expansion
	Fused   map[string][]string // GET /api/semantic-search: BM25 and vectors fused, with pseudo-relevance feedback

	// With RunTypos: the typo-injected queries ranked as BM25 is, with
	// typo tolerance (the default) and without (typos=false).
	Typos, TyposOff map[string][]string
}

// Store is what a run indexes documents into and ranks them with by
// BM25: the memory store or wvstore (opened by the caller, bench/cmd/eval
// or a test).
type Store interface {
	PutDocuments(docs []record.Document) ([]record.Document, error)
	searcher
}

// Semantic is the semantic search a run ranks with: the memory store's
// semantic index or the cluster's.
type Semantic interface {
	Search(context.Context, semantic.Request) (*semantic.Result, error)
}

// Followed is a semantic index that follows its store by itself and says
// when it has caught up (semantic.Index).
type Followed interface {
	Semantic
	Wait(ctx context.Context) error
}

// Run indexes a dataset into a store with a semantic index following it
// (the memory store, `sift serve`'s semantic.Open) as documents (title and
// text), waits for the index, and ranks every query three ways through the
// public methods behind /api/search (the store's) and /api/semantic-search
// (the semantic index's), returning each query's top 100 BEIR ids.
func Run(ds *Dataset, st Store, x Followed) (*Rankings, error) {
	return RunTypos(ds, st, x, nil)
}

// RunTypos is Run that also ranks typoed, the dataset's queries with
// typos (TypoQueries), as the BM25 ranking is — the same store, the same
// request — with typo tolerance and without, into Typos and TyposOff.
// A nil typoed ranks no more than Run.
func RunTypos(ds *Dataset, e Store, x Followed, typoed []BEIRQuery) (*Rankings, error) {
	docs := make([]record.Document, 0, len(ds.Docs))
	for _, d := range ds.Docs {
		docs = append(docs, record.Document{Key: d.ID, Title: d.Title, Content: d.Text})
	}
	stored, err := e.PutDocuments(docs)
	if err != nil {
		return nil, err
	}
	beirID := make(map[string]string, len(stored))
	for _, d := range stored {
		beirID[d.ID] = d.Key
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := x.Wait(ctx); err != nil {
		return nil, err
	}
	r, err := rankAll(ctx, ds, e, x, beirID)
	if err != nil || typoed == nil {
		return r, err
	}
	r.Typos, r.TyposOff = map[string][]string{}, map[string][]string{}
	for _, q := range typoed {
		if r.Typos[q.ID], err = searchBM25(e, q.Text, false); err != nil {
			return nil, err
		}
		if r.TyposOff[q.ID], err = searchBM25(e, q.Text, true); err != nil {
			return nil, err
		}
	}
	return r, nil
}
