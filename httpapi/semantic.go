package httpapi

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/semantic"
)

// Bounds of GET /api/semantic-search (SPEC).
const (
	semanticLimitDefault = 10
	semanticLimitMax     = 20
	maxCharsDefault      = 2000
	maxCharsMin          = 200
	maxCharsMax          = 10000
	boostBare            = 2
	maxBoostEntries      = 64
	semanticTimeout      = 30 * time.Second // bounds a search's model-server calls
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
	req := semantic.Request{HyDE: true}
	var err error
	if req.Query, err = stringParam(ctx, "q", query.MaxQueryBytes, true); err != nil {
		return req, err
	}
	if req.Limit, err = intParam(ctx, "limit", semanticLimitDefault, 1, semanticLimitMax); err != nil {
		return req, err
	}
	if req.MaxChars, err = intParam(ctx, "max_chars", maxCharsDefault, maxCharsMin, maxCharsMax); err != nil {
		return req, err
	}
	boost, err := stringParam(ctx, "boost", 4096, false)
	if err != nil {
		return req, err
	}
	if req.Boost, err = parseBoost(boost); err != nil {
		return req, err
	}
	if string(ctx.QueryArgs().Peek("hyde")) == "0" {
		req.HyDE = false
	}
	sources, err := stringParam(ctx, "source", 4096, false)
	if err != nil {
		return req, err
	}
	for _, s := range strings.Split(sources, ",") {
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
func (s *Server) semanticSearch(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	req, err := semanticRequest(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	// fasthttp's RequestCtx is recycled after the handler and cancelled only
	// at shutdown: the search gets a context of its own, bounded.
	sctx, cancel := context.WithTimeout(context.Background(), semanticTimeout)
	defer cancel()
	req.Private = s.privileged(ctx)
	res, err := s.semantic.Search(sctx, req)
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
	s.stats.record("GET /api/semantic-search", req.Query, len(res.Hits), took)
	s.noteSearch(insights.Semantic, req.Query, req.Private, len(res.Hits))
	out.DurationMs = math.Round(float64(took.Microseconds())) / 1000
	writeJSON(ctx, fasthttp.StatusOK, out)
}
