package httpapi

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/semantic"
)

// Bounds of GET /api/semantic-search (SPEC), besides those in httpapi/bounds.
const (
	boostBare       = 2
	maxBoostEntries = 64
	semanticTimeout = 30 * time.Second // bounds a search's model-server calls
)

// Boost multipliers lie in [boostMin, boostMax].
const (
	boostMin float64 = 0.1
	boostMax float64 = 10
)

type semanticResultJSON struct {
	Type          string  `json:"type"`
	Score         float64 `json:"score"`
	Title         string  `json:"title"`
	Source        string  `json:"source"`
	Content       string  `json:"content"`
	ContentLength int     `json:"contentLength"`
	Truncated     bool    `json:"truncated"`
	URL           string  `json:"url"`
}

type semanticJSON struct {
	Query      string               `json:"query"`
	Results    []semanticResultJSON `json:"results"`
	DurationMs float64              `json:"durationMs"`
	Stale      bool                 `json:"stale,omitempty"` // see markStale
}

// parseBoost reads "src:mult,src,…": a bare id means 2, multipliers lie in
// [0.1, 10]. Unknown source ids are kept (they match nothing).
func parseBoost(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return paramErr("boost: %s; expected comma-separated sourceId:multiplier pairs, multiplier from %g to %g, a bare id meaning %d", why, boostMin, boostMax, boostBare)
	}
	out := map[string]float64{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, bad("an empty entry")
		}
		id, mult, hasMult := strings.Cut(item, ":")
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, bad("an entry without a source id")
		}
		m := float64(boostBare)
		if hasMult {
			var err error
			m, err = strconv.ParseFloat(strings.TrimSpace(mult), 64)
			if err != nil || math.IsNaN(m) || m < boostMin || m > boostMax {
				return nil, bad("multiplier " + strconv.Quote(mult) + " of " + strconv.Quote(id) + " is out of range")
			}
		}
		out[id] = m
		if len(out) > maxBoostEntries {
			return nil, bad("more than " + strconv.Itoa(maxBoostEntries) + " entries")
		}
	}
	return out, nil
}

// semanticRequest reads and validates the parameters of GET /api/semantic-search.
func semanticRequest(ctx *fasthttp.RequestCtx) (semantic.Request, error) {
	a, err := parseSemantic(ctx)
	if err != nil {
		return semantic.Request{}, err
	}
	return semanticArgs(a)
}

// parseSemantic reads the parameters of GET /api/semantic-search as
// given; they are the semantic_search tool's arguments.
func parseSemantic(ctx *fasthttp.RequestCtx) (agent.SemanticArgs, error) {
	args := ctx.QueryArgs()
	hyde := string(args.Peek("hyde")) != "0"
	a := agent.SemanticArgs{Q: string(args.Peek("q")), Boost: string(args.Peek("boost")), Source: string(args.Peek("source")), HyDE: &hyde}
	var err error
	if a.Limit, err = optIntParam(ctx, "limit", bounds.SemanticLimit); err != nil {
		return a, err
	}
	a.MaxChars, err = optIntParam(ctx, "max_chars", bounds.SemanticMaxChars)
	return a, err
}

// semanticArgs checks a semantic search's arguments and turns them into
// the index's request.
func semanticArgs(a agent.SemanticArgs) (semantic.Request, error) {
	req := semantic.Request{Query: a.Q, HyDE: a.HyDE == nil || *a.HyDE}
	var err error
	if err = checkText("q", a.Q, bounds.QueryBytes, true); err != nil {
		return req, err
	}
	if req.Limit, err = boundArg("limit", a.Limit, bounds.SemanticLimit); err != nil {
		return req, err
	}
	if req.MaxChars, err = boundArg("max_chars", a.MaxChars, bounds.SemanticMaxChars); err != nil {
		return req, err
	}
	if err = checkText("boost", a.Boost, 4096, false); err != nil {
		return req, err
	}
	if req.Boost, err = parseBoost(a.Boost); err != nil {
		return req, err
	}
	if err = checkText("source", a.Source, 4096, false); err != nil {
		return req, err
	}
	for _, s := range strings.Split(a.Source, ",") {
		if s = strings.TrimSpace(s); s != "" {
			req.Sources = append(req.Sources, s)
		}
	}
	if len(req.Sources) > maxBoostEntries {
		return req, paramErr("source: at most %d comma-separated source ids", maxBoostEntries)
	}
	return req, nil
}

// semanticSearch serves GET /api/semantic-search.
func (s *api) semanticSearch(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	req, err := semanticRequest(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	// fasthttp's RequestCtx is recycled after the handler and cancelled only
	// at shutdown: the search gets a context of its own.
	res, err := s.semanticFor(context.Background(), req, caller{private: s.privileged(ctx), endpoint: "GET /api/semantic-search", via: insights.Semantic})
	if err != nil {
		writeErr(ctx, err)
		return
	}
	out := semanticJSON{Query: req.Query, Results: make([]semanticResultJSON, 0, len(res.Hits)), Stale: res.Stale}
	markStale(ctx, res.Stale)
	for _, h := range res.Hits {
		out.Results = append(out.Results, semanticResultJSON{
			Type: h.Type, Score: round4(h.Score), Title: h.Title, Source: h.Source, Content: h.Content,
			ContentLength: h.ContentLength, Truncated: h.Truncated, URL: hitURL(s.opts.BaseURL, &h),
		})
	}
	took := time.Since(start)
	out.DurationMs = math.Round(float64(took.Microseconds())) / 1000
	writeJSON(ctx, fasthttp.StatusOK, out)
}
