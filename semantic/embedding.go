package semantic

import (
	"context"

	"github.com/sift-search/sift/embed"
)

// Embedding is the embedding side of an index without its chunks: query
// vectors as Search makes them (the query, with HyDE a hypothetical answer
// through a bounded cache and at most a few at once, or the feedback
// vector; deadlines, and a pause after a failure) and chunk embedding as
// the indexer does it (a text the embedder refuses is left without a
// vector). Safe for concurrent use.
type Embedding struct{ x *Index }

// NewEmbedding returns an Embedding that answers with opts.Hypothesize
// and logs to opts.Logger; the other options are unused.
func NewEmbedding(opts Options) *Embedding { return &Embedding{x: New(opts)} }

// QueryVector embeds a query with emb and, with hyde, adds a hypothetical
// answer's embedding (when Options.Hypothesize is set) or feedback; the
// result is normalised.
func (e *Embedding) QueryVector(ctx context.Context, emb embed.Embedder, text string, hyde bool, feedback []float32) ([]float32, error) {
	return e.x.queryVector(ctx, &space{emb: emb}, text, hyde, feedback)
}

// Paused reports whether query embedding is paused after a failure.
func (e *Embedding) Paused() bool { return e.x.embedDown.open() }

// Pause pauses query embedding after a failure and reports whether it was
// running until now (so the caller logs the failure once).
func (e *Embedding) Pause() bool { return e.x.embedDown.trip(embedPause) }

// Embed embeds chunk texts: in one call, else text by text, leaving nil
// the vector of a text the embedder refuses while it embeds others.
func (e *Embedding) Embed(emb embed.Embedder, texts []string) ([][]float32, error) {
	return e.x.indexer.embed(emb, texts)
}

// Skipped counts the texts the embedder refused.
func (e *Embedding) Skipped() int64 { return e.x.skipped.Load() }

// Close ends the embedding calls under way.
func (e *Embedding) Close() { e.x.cancel() }
