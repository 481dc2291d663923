package httpapi

import (
	"html"
	"math"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

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

type searchJSON struct {
	Messages    []messageJSON      `json:"messages"`
	Documents   []documentJSON     `json:"documents"`
	Corrections []query.Correction `json:"corrections,omitempty"` // written by writeSearch
}

// searchRequest reads and validates the parameters of GET /api/search.
func searchRequest(ctx *fasthttp.RequestCtx) (query.SearchRequest, error) {
	var req query.SearchRequest
	var err error
	if req.Query, err = stringParam(ctx, "q", query.MaxQueryBytes, true); err != nil {
		return req, err
	}
	if req.Limit, err = intParam(ctx, "limit", 20, 1, query.MaxSearchLimit); err != nil {
		return req, err
	}
	if req.Offset, err = intParam(ctx, "offset", 0, 0, query.MaxSearchOffset); err != nil {
		return req, err
	}
	for name, dst := range map[string]*string{"source": &req.Source, "channel": &req.Channel, "from": &req.From} {
		if *dst, err = stringParam(ctx, name, 256, false); err != nil {
			return req, err
		}
	}
	if req.After, err = dateParam(ctx, "after"); err != nil {
		return req, err
	}
	if req.Before, err = dateParam(ctx, "before"); err != nil {
		return req, err
	}
	typos, err := boolParam(ctx, "typos", true)
	req.NoTypos = !typos
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

// snippetText is the plain text of a highlight: its <mark> tags dropped,
// its escaped characters restored ("…" marks where the text was cut).
func snippetText(highlight string) string {
	return html.UnescapeString(markTags.Replace(highlight))
}

var markTags = strings.NewReplacer("<mark>", "", "</mark>", "")

// search serves GET /api/search.
func (s *Server) search(ctx *fasthttp.RequestCtx) {
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
	req.Private = s.privileged(ctx)
	start := time.Now()
	res, err := s.eng.Search(req)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	s.stats.record("GET /api/search", req.Query, res.TotalMessages+res.TotalDocuments, time.Since(start))
	if req.Offset == 0 {
		s.noteSearch(insights.API, req.Query, req.Private, res.TotalMessages+res.TotalDocuments)
	}
	out := searchJSON{
		Messages: make([]messageJSON, 0, len(res.Messages)), Documents: make([]documentJSON, 0, len(res.Documents)),
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
			PlatformType: m.SourceType, Score: round4(m.Score), Highlight: m.Highlight,
		})
	}
	for _, d := range res.Documents {
		dj := documentJSON{
			ID: d.ID, Title: d.Title, Slug: d.Slug, Content: d.Content, Score: round4(d.Score), Highlight: d.Highlight,
			updated: d.UpdatedAt,
		}
		if snippet {
			dj.Content, dj.snippet = snippetText(d.Highlight), true
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
