package bench

import (
	"github.com/sift-search/sift/engine"
)

// LexicalRun indexes a dataset into an in-memory engine as documents (title
// and text) and ranks every query through engine.Search — the code path of
// GET /api/search — returning each query's top 100 BEIR ids.
func LexicalRun(ds *Dataset, opts engine.Options) (map[string][]string, error) {
	e, err := engine.Open(opts)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	docs := make([]engine.Document, 0, len(ds.Docs))
	for _, d := range ds.Docs {
		docs = append(docs, engine.Document{Key: d.ID, Title: d.Title, Content: d.Text})
	}
	if _, err := e.PutDocuments(docs); err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(ds.Queries))
	for _, q := range ds.Queries {
		r, err := e.Search(engine.SearchRequest{Query: q.Text, Limit: engine.MaxSearchLimit})
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(r.Documents))
		for i, h := range r.Documents {
			ids[i] = h.Key
		}
		out[q.ID] = ids
	}
	return out, nil
}
