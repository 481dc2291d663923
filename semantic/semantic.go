package semantic

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic/chunk"
	"github.com/sift-search/sift/semantic/fusion"
)

// Semantic search ranks chunks as the fusion package says: the union of
// the lexical and the vector candidates, scored by normalised convex
// fusion, the query expanded by a hypothetical answer (HyDE) or by
// pseudo-relevance feedback.

const (
	// A search never waits long on a model server: the query's embedding
	// and the hypothetical answer have deadlines, a failure pauses the
	// server's use by searches for a while (lexical ranking, or the query
	// embedded alone, meanwhile), at most hydeConcurrent hypothetical
	// answers are written at once, and an answer is kept to hydeMaxBytes.
	queryEmbedTimeout = 5 * time.Second
	hydeTimeout       = 15 * time.Second
	embedPause        = 10 * time.Second
	hydePause         = 30 * time.Second
	hydeConcurrent    = 4
	hydeMaxBytes      = 2048
)

// Request is a semantic search.
type Request struct {
	Query    string
	Limit    int                // results, 1..MaxLimit
	MaxChars int                // content is cut to this many characters; 0 = not cut
	Boost    map[string]float64 // source id -> score multiplier
	HyDE     bool               // expand the query (hypothetical answer or pseudo-relevance feedback)
	Sources  []string           // when set, only these sources
	Private  bool               // include what callers without credentials may not see
	Mode     fusion.Mode
}

// MaxLimit bounds Request.Limit (the HTTP API allows 20).
const MaxLimit = 100

// Hit is a ranked chunk.
type Hit struct {
	Type          string // "document" or "message"
	Score         float64
	Title         string
	Source        string // the source's name
	SourceID      string
	Content       string // the chunk's text, cut to MaxChars
	ContentLength int    // characters of the whole chunk
	Truncated     bool

	// Where it comes from, for links (the HTTP layer makes them): a
	// document's id, slug, origin URL and the text fragment locating the
	// passage ("#:~:text=…"); or a window's channel slug, first message id
	// and that message's platform link.
	DocumentID  string
	DocSlug     string
	DocURL      string
	Fragment    string
	ChannelSlug string
	MessageID   string
	MessageURL  string

	// Who and when, for citations: a window's authors (display names, in
	// order of appearance) and channel name; the source's type; the first
	// message's time, or the document's last update.
	Authors    []string
	Channel    string
	SourceType string
	Time       time.Time
}

// Result is the answer of Search.
type Result struct {
	Hits    []Hit
	Vectors bool // whether vectors took part (false while the embedder is unavailable)
	// Stale is set when the search went on before the index had taken in
	// every write acknowledged before it (FreshWait passed): what it had
	// not may be missing.
	Stale bool
	Took  time.Duration
}

type candidate struct {
	id    uint32
	bm25  float32
	cos   float32
	hasV  bool
	score float64
}

// Search finds the chunks closest in meaning to a query, one result per
// document section (overlapping chunks of a section merged into one
// passage) or conversation window. The query is plain text: no search
// syntax, so what an agent sends (flags such as --dry-run, identifiers) is
// searched as written. A result's document or channel is checked against
// the store as it is now: a deletion or a change of visibility the indexer
// has not taken in yet still counts.
func (x *Index) Search(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	text := strings.TrimSpace(req.Query)
	if text == "" {
		return nil, fmt.Errorf("%w: q: give the text to search for", record.ErrInvalid)
	}
	fresh := x.catchUp(ctx, x.opts.FreshWait)
	store := x.indexer.takeChanges() // a change of visibility counts at once
	if store == nil {
		return nil, errors.New("semantic: the index follows no store")
	}
	limit := min(max(req.Limit, 1), MaxLimit)
	terms := analysis.QueryTerms(text)

	// Lexical candidates, and the vectors of the best of them for feedback.
	x.mu.RLock()
	st := x.st
	allowed := st.sourceChunks(req.Sources)
	denied := deny(st.hidden, req.Private)
	var lex index.Result
	if req.Mode != fusion.ModeVectors {
		// Public denies st.hidden, which the index holds too, and ranks by
		// the statistics of the chunks the caller may see.
		lex = st.chunkIdx.Search(&index.Query{Terms: terms, Filter: allowed, Public: !req.Private}, fusion.LexicalDepth)
	}
	if denied != nil { // the vector indexes take an allowed set only
		if allowed == nil {
			allowed = st.chunkIdx.Live()
		}
		allowed.AndNot(denied)
	}
	sp := st.space
	useVectors := req.Mode != fusion.ModeLexical && sp != nil && sp.usable && sp.vecs != nil && sp.vecs.Len() > 0 && !x.embedDown.open()
	var dims int
	var feedback []float32
	var unembedded pendingTexts
	if useVectors {
		dims = sp.vecs.Dims()
		if req.HyDE && x.opts.Hypothesize == nil {
			feedback = meanVector(sp, lex.Hits, fusion.FeedbackDocs)
		}
		unembedded = st.pendingTexts(store, sp, lex.Hits)
	}
	x.mu.RUnlock()

	var qv []float32
	if useVectors {
		var err error
		qv, err = x.queryVector(ctx, sp, text, req.HyDE, feedback)
		switch {
		case err != nil:
			if ctx.Err() == nil && x.embedDown.trip(embedPause) { // not when the caller gave up
				x.log.Warn("semantic search: the query could not be embedded; ranking by words alone for a while", "err", err, "pause", embedPause)
			}
			useVectors = false
		case len(qv) != dims:
			x.log.Warn("semantic search: the embedder's vectors changed size; ranking by words alone until re-embedded", "was", dims, "now", len(qv))
			x.wakeIndexer()
			useVectors = false
		default:
			unembedded.embed(ctx, sp)
		}
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	cands := map[uint32]*candidate{}
	for _, h := range lex.Hits {
		cands[h.ID] = &candidate{id: h.ID, bm25: h.Score}
	}
	if useVectors && sp == x.st.space {
		for _, r := range sp.vecs.Search(qv, fusion.VectorDepth, allowed, make([]ann.Result, 0, fusion.VectorDepth)) {
			if cands[r.ID] == nil {
				cands[r.ID] = &candidate{id: r.ID}
			}
		}
		for _, cd := range cands {
			v := sp.vector(cd.id)
			if v == nil {
				v = unembedded.vector(cd.id)
			}
			if len(v) == len(qv) {
				cd.cos, cd.hasV = ann.Dot(qv, v), true
			}
		}
	} else {
		useVectors = false
	}
	res := &Result{Vectors: useVectors, Stale: !fresh}
	store.Read(func(v follow.View) {
		ranked := x.fuse(v, cands, req, useVectors)
		for _, r := range x.st.results(v, ranked, limit, req.Private) {
			res.Hits = append(res.Hits, x.st.hit(v, r, req.MaxChars))
		}
	})
	res.Took = time.Since(start)
	return res, nil
}

// deny returns the set a query for callers without credentials must leave
// out, or nil when private is set or nothing is hidden.
func deny(b *roaring.Bitmap, private bool) *roaring.Bitmap {
	if private || b.IsEmpty() {
		return nil
	}
	return b
}

// result is a hit to be: a chunk, or the span of a document section that
// overlapping chunks of it cover.
type result struct {
	cd         *candidate
	start, end int32 // a document passage's span
	section    int32 // where its section starts
}

// results picks the limit best results from the ranked candidates, one per
// document section: the best chunk of a section absorbs the others that
// overlap it (directly or through one another), and the rest of the
// section's chunks are left out, as are dead chunks, heading-only ones and,
// unless private, those the store hides now. The caller holds mu.RLock.
func (st *state) results(v follow.View, ranked []*candidate, limit int, private bool) []result {
	var out []result
	var spans [][][2]int // per result: the spans of its section's chunks, best first
	for _, cd := range ranked {
		c := &st.chunks[cd.id]
		if !chunkLive(v, c) || !private && ownerHidden(v, c) {
			continue
		}
		r := result{cd: cd}
		if c.kind == chunkDoc {
			d := v.Document(c.owner)
			if chunk.HeadingsOnly(d.Content[c.start:c.end]) {
				continue
			}
			r.start, r.end, r.section = c.start, c.end, st.sectionStart(d, c)
			if i := slices.IndexFunc(out, func(o result) bool {
				return st.chunks[o.cd.id].kind == chunkDoc && st.chunks[o.cd.id].owner == c.owner && o.section == r.section
			}); i >= 0 {
				spans[i] = append(spans[i], [2]int{int(r.start), int(r.end)})
				continue
			}
		}
		if len(out) < limit {
			out, spans = append(out, r), append(spans, [][2]int{{int(r.start), int(r.end)}})
		}
	}
	for i := range out {
		start, end := chunk.MergeSpans(spans[i])
		out[i].start, out[i].end = int32(start), int32(end)
	}
	return out
}

// sectionStart returns where the section of document chunk c starts
// (chunk.SectionStart over its document's chunks). The caller holds
// mu.RLock.
func (st *state) sectionStart(d *record.Document, c *chunkRec) int32 {
	spans := func(yield func(int, int) bool) {
		for _, slot := range st.docChunks[c.owner] {
			if o := &st.chunks[slot]; !yield(int(o.start), int(o.end)) {
				return
			}
		}
	}
	return int32(chunk.SectionStart(d.Content, int(c.start), spans))
}

// sourceChunks returns the chunks of the given sources, or nil for all.
// The caller holds mu.RLock.
func (st *state) sourceChunks(ids []string) *roaring.Bitmap {
	if len(ids) == 0 {
		return nil
	}
	out := roaring.New()
	for _, id := range ids {
		out.Or(st.chunkIdx.Facet(sourceFacet(id)))
	}
	return out
}

// meanVector is the normalised mean of the vectors of the first n hits.
func meanVector(sp *space, hits []index.Hit, n int) []float32 {
	vecs := make([][]float32, 0, n)
	for _, h := range hits[:min(n, len(hits))] {
		vecs = append(vecs, sp.vector(h.ID))
	}
	return fusion.NormalizedMean(vecs)
}

// queryVector embeds the query and, with HyDE on, adds the hypothetical
// answer's embedding or the feedback vector.
func (x *Index) queryVector(ctx context.Context, sp *space, text string, hyde bool, feedback []float32) ([]float32, error) {
	texts := []string{text}
	if hyde && x.opts.Hypothesize != nil {
		if h, ok := x.hypothesize(ctx, text); ok {
			texts = append(texts, h)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	vecs, err := sp.emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	qv := vecs[0]
	for _, v := range vecs[1:] {
		if len(v) == len(qv) {
			for i := range qv {
				qv[i] += v[i]
			}
		}
	}
	if len(feedback) == len(qv) {
		for i := range qv {
			qv[i] += fusion.FeedbackWeight * feedback[i]
		}
	}
	ann.Normalize(qv)
	return qv, nil
}

// hypothesize asks the model for a hypothetical answer, through the cache.
func (x *Index) hypothesize(ctx context.Context, query string) (string, bool) {
	if h, ok := x.hyde.get(query); ok {
		return h, true
	}
	if x.hydeDown.open() {
		return "", false
	}
	select {
	case x.hydeSlots <- struct{}{}:
		defer func() { <-x.hydeSlots }()
	default:
		return "", false // busy: the query is embedded alone
	}
	hctx, cancel := context.WithTimeout(ctx, hydeTimeout)
	defer cancel()
	h, err := x.opts.Hypothesize(hctx, query)
	if h = textcut.Prefix(strings.TrimSpace(h), hydeMaxBytes); err != nil || h == "" {
		if err == nil {
			err = errors.New("empty answer")
		}
		if ctx.Err() == nil && x.hydeDown.trip(hydePause) {
			x.log.Warn("HyDE: no hypothetical answer; queries are embedded alone for a while", "err", err, "pause", hydePause)
		}
		return "", false
	}
	x.hyde.put(query, h)
	return h, true
}

// breaker pauses the use of a failing model server by searches.
type breaker struct{ until atomic.Int64 }

func (b *breaker) open() bool { return time.Now().UnixNano() < b.until.Load() }

// trip pauses for d and reports whether the breaker was closed until now.
func (b *breaker) trip(d time.Duration) bool {
	was := b.until.Swap(time.Now().Add(d).UnixNano())
	return time.Now().UnixNano() >= was
}

// fuse scores the candidates and returns them best first. The caller holds
// mu.RLock.
func (x *Index) fuse(v follow.View, cands map[uint32]*candidate, req Request, vectors bool) []*candidate {
	out := make([]*candidate, 0, len(cands))
	for _, cd := range cands {
		out = append(out, cd)
	}
	fusion.Scores(len(out), req.Mode, vectors, func(i int) (float32, float32, bool) { return out[i].bm25, out[i].cos, out[i].hasV },
		func(i int, score float64) { out[i].score = score })
	if len(req.Boost) > 0 { // the source is a record away: only when asked
		for _, cd := range out {
			if m, ok := req.Boost[chunkSource(v, &x.st.chunks[cd.id])]; ok {
				cd.score *= m
			}
		}
	}
	slices.SortFunc(out, func(x, y *candidate) int {
		switch {
		case x.score > y.score:
			return -1
		case x.score < y.score:
			return 1
		}
		return int(y.id) - int(x.id)
	})
	return out
}

// hit builds the hit of a live result. The caller holds mu.RLock.
func (st *state) hit(v follow.View, r result, maxChars int) Hit {
	c := &st.chunks[r.cd.id]
	h := Hit{Score: r.cd.score, SourceID: chunkSource(v, c)}
	if src := v.Source(h.SourceID); src != nil {
		h.Source, h.SourceType = src.Name, src.Type
	}
	title, body := chunkText(v, c)
	switch c.kind {
	case chunkDoc:
		d := v.Document(c.owner)
		body = d.Content[r.start:r.end]
		h.Type, h.Title = "document", title
		h.DocumentID, h.DocSlug, h.DocURL = d.ID, d.Slug, d.URL
		h.Fragment = chunk.TextFragment(d.Content, int(r.start), int(r.end))
		h.Time = d.UpdatedAt
	case chunkChat:
		ch := v.Channel(c.owner)
		h.Type, h.ChannelSlug, h.Channel = "message", ch.Slug, ch.Name
		for _, m := range c.msgs {
			r := v.MessageText(m)
			if !r.Live {
				continue
			}
			if h.MessageID == "" {
				first := v.Message(m)
				h.MessageID, h.MessageURL, h.Time = first.ID, first.URL, first.Timestamp
				h.Title = title + " — " + first.Timestamp.Format("2006-01-02")
			}
			if !slices.Contains(h.Authors, r.Author) {
				h.Authors = append(h.Authors, r.Author)
			}
		}
	}
	h.ContentLength = utf8.RuneCountInString(body)
	h.Content, h.Truncated = chunk.CutWords(body, maxChars)
	return h
}
