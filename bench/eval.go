package bench

import (
	"context"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
)

// Rankings are the three rankings the evaluation compares, each a map of
// query id to BEIR document ids, best first.
type Rankings struct {
	BM25    map[string][]string // GET /api/search: BM25 over documents
	Vectors map[string][]string // the embedder alone: semantic search by vectors only, no query expansion
	Fused   map[string][]string // GET /api/semantic-search: BM25 and vectors fused, with pseudo-relevance feedback
}

// Run indexes a dataset into an in-memory engine (eo) as documents (title
// and text), waits for the semantic index following it (so), and ranks
// every query three ways through the public methods behind /api/search
// (the engine's) and /api/semantic-search (the semantic index's),
// returning each query's top 100 BEIR ids.
func Run(ds *Dataset, eo engine.Options, so semantic.Options) (*Rankings, error) {
	e, x, err := semantic.Open(eo, so)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	docs := make([]engine.Document, 0, len(ds.Docs))
	for _, d := range ds.Docs {
		docs = append(docs, engine.Document{Key: d.ID, Title: d.Title, Content: d.Text})
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
	return rankAll(ctx, ds, e, x, beirID)
}
