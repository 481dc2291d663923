package httpapi

import (
	"html"
	"math"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/query"
)

// timeFormat is how times appear in JSON: RFC 3339 with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// messageJSON is a Message of the specification, plus score and highlight.
type messageJSON struct {
	ID           string  `json:"id"`
	Content      string  `json:"content"`
	Timestamp    string  `json:"timestamp"`
	Username     string  `json:"username"`
	ChannelName  string  `json:"channelName"`
	ChannelSlug  string  `json:"channelSlug"`
	PlatformName string  `json:"platformName"`
	PlatformType string  `json:"platformType"`
	Score        float64 `json:"score"`
	Highlight    string  `json:"highlight"`
}

// documentJSON is a Document of the specification, plus score and highlight.
type documentJSON struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Slug      string  `json:"slug"`
	Content   string  `json:"content"`
	Score     float64 `json:"score"`
	Highlight string  `json:"highlight"`

	updated time.Time // keys the content's escaped form (jsonenc.go)
	snippet bool      // Content is the highlight window, not the cached whole
}

// searchJSON is the answer of GET /api/search (written by writeSearch, as
// encoding/json would write it): the hits, how many matched in all — a
// lower bound of each when totalExact is false — and the corrections.
type searchJSON struct {
	Messages       []messageJSON      `json:"messages"`
	Documents      []documentJSON     `json:"documents"`
	TotalMessages  int                `json:"totalMessages"`
	TotalDocuments int                `json:"totalDocuments"`
	TotalExact     bool               `json:"totalExact"`
	Corrections    []query.Correction `json:"corrections,omitempty"`
}

// searchRequest reads and validates the parameters of GET /api/search.
func searchRequest(ctx *fasthttp.RequestCtx) (query.SearchRequest, error) {
	a, err := parseSearch(ctx)
	if err != nil {
		return query.SearchRequest{}, err
	}
	return searchArgs(a)
}

// parseSearch reads the parameters of GET /api/search as given; they
// are the search tool's arguments.
func parseSearch(ctx *fasthttp.RequestCtx) (agent.SearchArgs, error) {
	args := ctx.QueryArgs()
	a := agent.SearchArgs{Q: string(args.Peek("q")), Source: string(args.Peek("source")), Channel: string(args.Peek("channel")),
		From: string(args.Peek("from")), After: string(args.Peek("after")), Before: string(args.Peek("before"))}
	var err error
	if a.Limit, err = optIntParam(ctx, "limit", bounds.SearchLimit); err != nil {
		return a, err
	}
	if a.Offset, err = optIntParam(ctx, "offset", bounds.SearchOffset); err != nil {
		return a, err
	}
	typos, err := boolParam(ctx, "typos", true)
	a.Typos = &typos
	return a, err
}

// searchArgs checks a search's arguments and turns them into the store's
// request.
func searchArgs(a agent.SearchArgs) (query.SearchRequest, error) {
	req := query.SearchRequest{Query: a.Q, Source: a.Source, Channel: a.Channel, From: a.From, NoTypos: a.Typos != nil && !*a.Typos}
	var err error
	if err = checkText("q", a.Q, bounds.QueryBytes, true); err != nil {
		return req, err
	}
	if req.Limit, err = boundArg("limit", a.Limit, bounds.SearchLimit); err != nil {
		return req, err
	}
	if req.Offset, err = boundArg("offset", a.Offset, bounds.SearchOffset); err != nil {
		return req, err
	}
	for name, v := range map[string]string{"source": a.Source, "channel": a.Channel, "from": a.From} {
		if err = checkText(name, v, bounds.NameBytes, false); err != nil {
			return req, err
		}
	}
	if req.After, err = parseDate("after", a.After); err != nil {
		return req, err
	}
	req.Before, err = parseDate("before", a.Before)
	return req, err
}

// contentParam reads content=full (the default: documents' whole content)
// or content=snippet (cut to the highlight window).
func contentParam(ctx *fasthttp.RequestCtx) (snippet bool, err error) {
	switch string(ctx.QueryArgs().Peek("content")) {
	case "", "full":
		return false, nil
	case "snippet":
		return true, nil
	default:
		return false, paramErr("content must be full or snippet")
	}
}

// highlightHTML renders a hit's snippet for the JSON API and the pages:
// escaped text with <mark> around each match, "…" where it was cut.
func highlightHTML(s query.Snippet) string {
	return s.Render(html.EscapeString, "<mark>", "</mark>")
}

// search serves GET /api/search.
func (s *api) search(ctx *fasthttp.RequestCtx) {
	req, err := searchRequest(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	snippet, err := contentParam(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	res, err := s.searchFor(req, caller{private: s.privileged(ctx), endpoint: "GET /api/search", via: insights.API})
	if err != nil {
		writeErr(ctx, err)
		return
	}
	out := searchJSON{
		Messages: make([]messageJSON, 0, len(res.Messages)), Documents: make([]documentJSON, 0, len(res.Documents)),
		TotalMessages: res.TotalMessages, TotalDocuments: res.TotalDocuments, TotalExact: res.TotalExact(),
		Corrections: res.Corrections,
	}
	for _, m := range res.Messages {
		user := m.Author
		if user == "" {
			user = m.AuthorName
		}
		out.Messages = append(out.Messages, messageJSON{
			ID: m.ID, Content: m.Content, Timestamp: formatTime(m.Timestamp), Username: user,
			ChannelName: m.ChannelName, ChannelSlug: m.ChannelSlug, PlatformName: m.SourceName,
			PlatformType: m.SourceType, Score: round4(m.Score), Highlight: highlightHTML(m.Highlight),
		})
	}
	for _, d := range res.Documents {
		dj := documentJSON{
			ID: d.ID, Title: d.Title, Slug: d.Slug, Content: d.Content, Score: round4(d.Score), Highlight: highlightHTML(d.Highlight),
			updated: d.UpdatedAt,
		}
		if snippet {
			dj.Content, dj.snippet = d.Highlight.Plain(), true
		}
		out.Documents = append(out.Documents, dj)
	}
	s.writeSearch(ctx, &out)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeFormat)
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }
