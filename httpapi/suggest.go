package httpapi

import (
	"github.com/sift-search/sift/query"
	"github.com/valyala/fasthttp"
)

// defaultSuggestRate is GET /api/suggest's limit, requests per second per
// client, when Options.SuggestRateLimit leaves it open: a fast typist's
// keystrokes, with a burst of twice as many.
const defaultSuggestRate = 20

// suggestionJSON is one suggestion of GET /api/suggest: a word completion
// (the query with its last word completed, and how many messages and
// documents hold the word) or a channel or document (its title, slug,
// source and page).
type suggestionJSON struct {
	Text   string `json:"text"`
	Kind   string `json:"kind"`
	Count  int    `json:"count,omitempty"`
	Slug   string `json:"slug,omitempty"`
	Source string `json:"source,omitempty"`
	URL    string `json:"url,omitempty"`
}

type suggestJSON struct {
	Suggestions []suggestionJSON `json:"suggestions"`
}

// suggestAccess applies SEARCH_ACCESS to GET /api/suggest as to search,
// but a public caller spends the suggestions' own bucket, not the public
// tier's: a search box asks at every pause of the typing.
func (s *api) suggestAccess(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.opts.SearchAccess == "bearer" {
		return s.bearer(h)
	}
	return s.limited(s.suggests, h)
}

// suggest serves GET /api/suggest.
func (s *api) suggest(ctx *fasthttp.RequestCtx) {
	var req query.SuggestRequest
	var err error
	if req.Query, err = stringParam(ctx, "q", query.MaxSuggestQueryBytes, true); err != nil {
		writeErr(ctx, err)
		return
	}
	if req.Limit, err = intParam(ctx, "limit", query.MaxSuggestions, 1, query.MaxSuggestions); err != nil {
		writeErr(ctx, err)
		return
	}
	req.Private = s.privileged(ctx)
	res, err := s.eng.Suggest(req)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	out := suggestJSON{Suggestions: make([]suggestionJSON, 0, len(res))}
	for _, x := range res {
		sj := suggestionJSON{Text: x.Text, Kind: x.Kind, Count: x.Count, Slug: x.Slug, Source: x.Source}
		switch x.Kind {
		case query.SuggestChannel:
			sj.URL = channelURL(s.opts.BaseURL, x.Slug)
		case query.SuggestDocument:
			sj.URL = DocumentURL(s.opts.BaseURL, x.Slug)
		}
		out.Suggestions = append(out.Suggestions, sj)
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}
