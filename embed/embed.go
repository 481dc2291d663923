// Package embed turns text into vectors for semantic search, behind one
// small interface: the built-in embedder (random indexing trained on the
// indexed corpus, see model.go) and a client of any OpenAI-compatible
// /v1/embeddings API (openai.go).
package embed

import "context"

// Embedder maps texts to vectors of Dims components.
type Embedder interface {
	// Name identifies the vector space: vectors of embedders with
	// different names are not comparable.
	Name() string
	Dims() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var _ Embedder = (*Model)(nil)
