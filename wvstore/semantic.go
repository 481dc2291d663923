package wvstore

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
	"github.com/sift-search/sift/semantic/fusion"
)

// Semantic search on the cluster (docs/weaviate.md "Semantic search on the
// cluster"): chunks — document passages and conversation windows, cut as
// the memory index cuts them — are objects of the Chunk collection with
// Sift's analysed words in "terms" and the vector Sift computed. Search
// fuses BM25 over the words with the nearest vectors as the memory index
// does; the indexer (semantic_index.go) keeps the chunks current by
// following the change log, and trains and shares the built-in embedder
// (semantic_model.go).

// SemanticOptions configure semantic search on the cluster.
type SemanticOptions struct {
	// Embedder makes the vectors; nil selects the built-in embedder, which
	// the indexer trains on the chunks and stores in the cluster.
	Embedder embed.Embedder
	// Hypothesize, when set, writes a short hypothetical answer to a query
	// (HyDE); without it, HyDE is pseudo-relevance feedback.
	Hypothesize func(ctx context.Context, query string) (string, error)
	// FreshWait is how long a search waits at most for the chunks to
	// reflect the writes acknowledged before it (semantic_fresh.go); 0
	// selects semantic.DefaultFreshWait, a negative value never waits.
	FreshWait time.Duration
	Logger    *slog.Logger
}

// Semantic is semantic search over the store's chunks, and their indexer.
// Search and Status are safe for concurrent use; Run and Step run one at a
// time.
type Semantic struct {
	s     *Store
	opts  SemanticOptions
	log   *slog.Logger
	emb   *semantic.Embedding
	model modelCache

	statusMu sync.Mutex
	status   semantic.Status
	statusAt time.Time

	ix   indexer
	wake chan struct{} // cuts the indexer's rest short (Run)

	// Test hooks, run by the indexer after it read an owner's records and
	// after it processed a page of changes.
	testHookChunked, testHookPage func()
}

// Semantic returns semantic search over s's chunks. Every process serving
// searches makes one; one process at a time (the holder of the lease
// "indexer") runs its indexer.
func (s *chunks) Semantic(opts SemanticOptions) *Semantic {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.FreshWait == 0 {
		opts.FreshWait = semantic.DefaultFreshWait
	}
	return &Semantic{s: s.Store, opts: opts, log: log,
		emb:  semantic.NewEmbedding(semantic.Options{Hypothesize: opts.Hypothesize, Logger: log}),
		ix:   indexer{memo: map[string]int64{}},
		wake: make(chan struct{}, 1)}
}

// The light properties a ranking query reads of each chunk.
var chunkLight = []string{"sourceId", "owner", "span"}

// candidate is a chunk a ranking query returned.
type candidate struct {
	id, owner, source, span string
	bm25, cos               float32
	hasV                    bool
	score                   float64
}

// Search finds the chunks closest in meaning to a query, one result per
// document section or conversation window, as semantic.Index.Search does.
// A result's document, channel and source are checked against the store
// as it is now: one deleted or hidden since it was indexed is left out.
func (x *Semantic) Search(ctx context.Context, req semantic.Request) (*semantic.Result, error) {
	start := time.Now()
	text := strings.TrimSpace(req.Query)
	if text == "" {
		return nil, fmt.Errorf("%w: q: give the text to search for", record.ErrInvalid)
	}
	limit := min(max(req.Limit, 1), semantic.MaxLimit)
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	fresh := x.catchUp(ctx, x.opts.FreshWait)
	cat, err := x.s.cat(ctx)
	if err != nil {
		return nil, fmt.Errorf("semantic search: %w", err)
	}
	where := chunkVisibility(cat, req.Private)
	if len(req.Sources) > 0 {
		where = and(where, anyText("sourceId", req.Sources))
	}
	// The words and the vectors are read at once, unless the query's
	// vector needs the best lexical hits (feedback).
	var vq *vectorQuery
	if req.Mode != fusion.ModeLexical {
		vq = x.vectorQuery(ctx, where)
	}
	feedback := vq != nil && req.HyDE && x.opts.Hypothesize == nil && req.Mode != fusion.ModeVectors
	var wg sync.WaitGroup
	if vq != nil && !feedback {
		wg.Go(func() {
			if vq.embed(ctx, text, req.HyDE, nil) {
				vq.nearest(ctx)
			}
		})
	}
	var lex []*candidate
	if req.Mode != fusion.ModeVectors {
		lex, err = x.lexical(ctx, text, where)
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if feedback {
		fb, err := x.feedback(ctx, vq.name, lex)
		if err != nil {
			x.log.Warn("semantic search: no feedback vector", "err", err)
		}
		if vq.embed(ctx, text, true, fb) {
			wg.Go(func() { vq.nearest(ctx) })
		}
	}
	if vq != nil && vq.qv != nil && len(lex) > 0 {
		wg.Go(func() { vq.cosines(ctx, lex) })
	}
	wg.Wait()
	cands := make(map[string]*candidate, len(lex))
	for _, c := range lex {
		cands[c.id] = c
	}
	vectors := vq != nil && vq.merge(cands)
	ranked := fuse(cands, req, vectors)
	hits, err := x.results(ctx, cat, groups(cat, ranked, req.Private), limit, req.MaxChars)
	if err != nil {
		return nil, err
	}
	return &semantic.Result{Hits: hits, Vectors: vectors, Stale: !fresh, Took: time.Since(start)}, nil
}

// chunkVisibility is the filter of the chunks a caller may see, or nil:
// documents of sources that are not hidden; windows of channels that show,
// as messages are filtered (search.go).
func chunkVisibility(cat *catalog, private bool) *filters.WhereBuilder {
	if private {
		return nil
	}
	docSources := cat.hiddenDocSources()
	msgSources, chans := cat.hiddenContent()
	if len(docSources) == 0 && len(msgSources) == 0 && len(chans) == 0 {
		return nil
	}
	docs := []*filters.WhereBuilder{eqText("kind", kindDocument)}
	if len(docSources) > 0 {
		docs = append(docs, not(anyText("sourceId", docSources)))
	}
	msgs := []*filters.WhereBuilder{eqText("kind", kindMessage)}
	if len(msgSources) > 0 {
		msgs = append(msgs, not(anyText("sourceId", msgSources)))
	}
	if len(chans) > 0 {
		msgs = append(msgs, not(anyText("chan", chans)))
	}
	return or(and(docs...), and(msgs...))
}

// queryWords are the words BM25 ranks a query by: its analysed terms,
// each repeated as often as it weighs.
func queryWords(text string) []string {
	var ws []string
	for _, t := range analysis.QueryTerms(text) {
		for range max(int(t.Weight), 1) {
			ws = append(ws, t.Text)
		}
	}
	return ws
}

// lexical returns the LexicalDepth best chunks by BM25, best first (Sift
// orders them: Weaviate's may differ among ties, search.go).
func (x *Semantic) lexical(ctx context.Context, text string, where *filters.WhereBuilder) ([]*candidate, error) {
	words := queryWords(text)
	if len(words) == 0 {
		return nil, nil
	}
	// Weaviate's order among equal scores is not Sift's: read twice the
	// depth and keep the LexicalDepth best in Sift's order.
	hits, err := x.s.chunkGet(ctx, chunkQuery{fields: chunkLight, where: where, bm25: words, limit: 2 * fusion.LexicalDepth})
	if err != nil {
		return nil, fmt.Errorf("semantic search: %w", err)
	}
	out := make([]*candidate, 0, len(hits))
	for i := range hits {
		c := newCandidate(&hits[i])
		c.bm25 = hits[i].score
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *candidate) int { return cmp.Or(cmp.Compare(b.bm25, a.bm25), cmp.Compare(a.id, b.id)) })
	return out[:min(len(out), fusion.LexicalDepth)], nil
}

func newCandidate(h *chunkHit) *candidate {
	owner, _ := url.QueryUnescape(h.str("owner")) // ownerProp's
	return &candidate{id: h.id, owner: owner, source: h.str("sourceId"), span: h.str("span")}
}

// fuse scores the candidates as the memory index does (semantic.Index's
// fuse: the normalised convex combination of BM25 and cosine, then the
// source's boost) and returns them best first.
func fuse(cands map[string]*candidate, req semantic.Request, vectors bool) []*candidate {
	out := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		out = append(out, c)
	}
	fusion.Scores(len(out), req.Mode, vectors, func(i int) (float32, float32, bool) { return out[i].bm25, out[i].cos, out[i].hasV },
		func(i int, score float64) { out[i].score = score })
	for _, c := range out {
		if m, ok := req.Boost[c.source]; ok {
			c.score *= m
		}
	}
	slices.SortFunc(out, func(a, b *candidate) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) })
	return out
}
