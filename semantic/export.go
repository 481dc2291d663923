package semantic

import (
	"context"
	"time"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/record"
)

// The index's own logic, exported for a store that keeps chunks and their
// vectors itself (wvstore, on a Weaviate cluster) and so cannot carry an
// Index: the chunkers, the merging of a section's passages, text fragments
// and cuts, the training schedule, and the query and embedding side of
// Search and the indexer. Each is a call into the code the index runs;
// nothing here changes what the index does.

// Fusion and indexing bounds, as Search and the indexer use them.
const (
	LexicalWeight  = lexicalWeight  // BM25's share of the fused score
	LexicalDepth   = lexicalDepth   // best chunks by BM25 that are candidates
	VectorDepth    = vectorDepth    // nearest chunks that are candidates
	EmbedBatch     = embedBatch     // chunks embedded per indexer step
	MinTrainChunks = minTrainChunks // the built-in embedder trains from this many chunks on
)

// DocSpan is a passage of a document: bytes [Start, End) of its content,
// under Heading.
type DocSpan struct {
	Start, End int
	Heading    string
}

// SplitDocument cuts a document's content into passages as the index does.
func SplitDocument(content string) []DocSpan {
	spans := splitDocument(content)
	out := make([]DocSpan, len(spans))
	for i, sp := range spans {
		out[i] = DocSpan{Start: sp.start, End: sp.end, Heading: sp.heading}
	}
	return out
}

// SectionStarts returns, for each passage of content (as SplitDocument cut
// it), where its section starts: the passages of one section are one
// search result.
func SectionStarts(content string, spans []DocSpan) []int {
	st := &state{docChunks: map[uint32][]uint32{}}
	for i, sp := range spans {
		st.chunks = append(st.chunks, chunkRec{kind: chunkDoc, start: int32(sp.Start), end: int32(sp.End), heading: sp.Heading})
		st.docChunks[0] = append(st.docChunks[0], uint32(i))
	}
	d := &record.Document{Content: content}
	out := make([]int, len(spans))
	for i := range st.chunks {
		out[i] = int(st.sectionStart(d, &st.chunks[i]))
	}
	return out
}

// Windows cuts a channel's messages, in time order, into conversation
// windows as the index does: each window is a run of indexes into texts.
func Windows(texts []follow.MessageText) [][]int {
	refs := make([]uint32, len(texts))
	for i := range refs {
		refs[i] = uint32(i)
	}
	wins := windows(refs, texts)
	out := make([][]int, len(wins))
	for i, w := range wins {
		out[i] = make([]int, len(w))
		for j, r := range w {
			out[i][j] = int(r)
		}
	}
	return out
}

// MergeSpans returns the span of the first passage grown by the others
// that overlap it or what it has grown to: a section's result covers its
// overlapping passages among the candidates. Each span is {start, end}.
func MergeSpans(spans [][2]int) (start, end int) {
	rs := make([]result, len(spans))
	for i, sp := range spans {
		rs[i] = result{start: int32(sp[0]), end: int32(sp[1])}
	}
	s, e := mergeSpans(rs)
	return int(s), int(e)
}

// TextFragment returns the "#:~:text=" directive that locates
// content[start:end] in the rendered page, or "".
func TextFragment(content string, start, end int) string { return textFragment(content, start, end) }

// CutWords cuts s to at most n characters at a word boundary, as hits'
// content is cut, and reports whether it cut; n <= 0 does not cut.
func CutWords(s string, n int) (string, bool) { return cutWords(s, n) }

// TrainDue reports whether the built-in embedder, trained on trained
// chunks (0: none yet), should be trained with live ones.
func TrainDue(live, trained int) bool { return trainDue(live, trained) }

// TrainingWaits reports whether a due training should wait for writes,
// last made at lastWrite, to pause.
func TrainingWaits(lastWrite time.Time, live, trained int) bool {
	return (&Index{store: lastWriteStore(lastWrite)}).trainingWaits(live, trained)
}

// lastWriteStore is a Store that knows only when it was last written.
type lastWriteStore time.Time

func (lastWriteStore) Changes(uint64, []follow.Change) []follow.Change { return nil }
func (lastWriteStore) Read(func(follow.View))                          {}
func (t lastWriteStore) LastWrite() time.Time                          { return time.Time(t) }

// FeedbackVector is the pseudo-relevance feedback of Search without a
// hypothetical answer: the normalised mean of the vectors of the best
// lexical hits (vecs, best first; nil for a hit without a vector), or nil.
func FeedbackVector(vecs [][]float32) []float32 {
	var flat *ann.Flat
	hits := make([]index.Hit, len(vecs))
	for i, v := range vecs {
		hits[i].ID = uint32(i)
		if v == nil {
			continue
		}
		if flat == nil {
			flat = ann.NewFlat(len(v))
		}
		if len(v) == flat.Dims() {
			flat.Add(uint32(i), v)
		}
	}
	if flat == nil {
		return nil
	}
	return meanVector(&space{vecs: flat}, hits, prfDocs)
}

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
	return e.x.embed(emb, texts)
}

// Skipped counts the texts the embedder refused.
func (e *Embedding) Skipped() int64 { return e.x.skipped.Load() }

// Close ends the embedding calls under way.
func (e *Embedding) Close() { e.x.cancel() }

// FuseScores computes fused scores as Search does: at returns candidate
// i's BM25, cosine and whether it has a vector; set receives its score,
// before boosts.
func FuseScores(n int, mode Mode, vectors bool, at func(i int) (bm25, cos float32, hasV bool), set func(i int, score float64)) {
	fuseScores(n, mode, vectors, at, set)
}
