// Package fusion is how semantic search ranks, in every store: chunks by
// normalised convex fusion of two scores,
//
//	score = LexicalWeight × bm25/max(bm25) + (1 − LexicalWeight) × (cos − min cos)/(max cos − min cos)
//
// over the union of the LexicalDepth best chunks by BM25 and the
// VectorDepth nearest by cosine similarity (each candidate gets both
// scores; a missing BM25 counts 0). Both parts lie in [0,1], so does the
// score; boosts multiply it afterwards. BM25 keeps exact identifiers on
// top, the vectors find what is worded differently.
//
// Before the vector search the query is expanded (unless HyDE is off): with
// a language model, by the embedding of a hypothetical answer it writes
// (HyDE, Gao et al. 2022); without one, by pseudo-relevance feedback — the
// mean vector of the FeedbackDocs best lexical hits, weighted
// FeedbackWeight (Rocchio).
package fusion

import (
	"math"

	"github.com/sift-search/sift/ann"
)

const (
	LexicalWeight  = 0.5 // BM25's share of the fused score
	LexicalDepth   = 100 // the best chunks by BM25 that are candidates
	VectorDepth    = 100 // the nearest chunks by cosine that are candidates
	FeedbackDocs   = 5   // the best lexical hits whose mean is the feedback
	FeedbackWeight = 0.5 // the feedback's weight added to the query's vector
)

// Mode selects what ranks; only the evaluation uses other modes.
type Mode int

const (
	ModeFused   Mode = iota // BM25 and vectors (what the API serves)
	ModeVectors             // the embedder alone
	ModeLexical             // BM25 over chunks alone
)

// Scores computes the fused scores of n candidates (the normalised convex
// combination of the package comment; mode and vectors — whether the
// search had vectors at all — pick the weights): at returns candidate i's
// BM25, its cosine and whether it has a vector, set receives its score.
func Scores(n int, mode Mode, vectors bool, at func(i int) (bm25, cos float32, hasV bool), set func(i int, score float64)) {
	var maxBM float32
	minCos, maxCos := float32(math.Inf(1)), float32(math.Inf(-1))
	for i := range n {
		bm, cos, hasV := at(i)
		maxBM = max(maxBM, bm)
		if hasV {
			minCos, maxCos = min(minCos, cos), max(maxCos, cos)
		}
	}
	wLex := LexicalWeight
	switch {
	case !vectors || mode == ModeLexical:
		wLex = 1
	case mode == ModeVectors:
		wLex = 0
	}
	for i := range n {
		bm, cos, hasV := at(i)
		var b, vs float64
		if maxBM > 0 {
			b = float64(bm / maxBM)
		}
		if hasV {
			vs = 1
			if maxCos > minCos {
				vs = float64((cos - minCos) / (maxCos - minCos))
			}
		}
		set(i, wLex*b+(1-wLex)*vs)
	}
}

// Feedback is the pseudo-relevance feedback vector: the normalised mean of
// the vectors of the FeedbackDocs best lexical hits (vecs, best first; nil
// for a hit without a vector), or nil.
func Feedback(vecs [][]float32) []float32 {
	return NormalizedMean(vecs[:min(FeedbackDocs, len(vecs))])
}

// NormalizedMean is the normalised mean of vecs, leaving out nil ones and
// those of other dimensions than the first; nil when none is left.
func NormalizedMean(vecs [][]float32) []float32 {
	var sum []float32
	for _, v := range vecs {
		if v == nil || sum != nil && len(v) != len(sum) {
			continue
		}
		if sum == nil {
			sum = make([]float32, len(v))
		}
		for i, x := range v {
			sum[i] += x
		}
	}
	if sum == nil || !ann.Normalize(sum) {
		return nil
	}
	return sum
}
