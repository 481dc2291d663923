package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/insights"
)

// Bounds of a question, besides those in httpapi/bounds.
const (
	maxAskBody   = 256 << 10
	askTimeout   = 5 * time.Minute
	sseKeepAlive = 15 * time.Second
)

type askRequestJSON struct {
	Question *string `json:"question"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// askSourceJSON is an item of "sources". SourceURL is left out of the v1
// form.
type askSourceJSON struct {
	Type      string  `json:"type"`
	Score     float64 `json:"score"`
	Metadata  string  `json:"metadata"`
	Preview   string  `json:"preview"`
	SourceURL string  `json:"sourceUrl,omitempty"`
}

type askResponseJSON struct {
	Answer  string          `json:"answer"`
	Sources []askSourceJSON `json:"sources"`
	Usage   *ask.Usage      `json:"usage,omitempty"`
	Stale   bool            `json:"stale,omitempty"` // see markStale
}

// askForm is what distinguishes POST /api/ask from POST /api/v1/ask: the
// v1 form has no usage and no sourceUrl, and more detailed metadata.
type askForm struct {
	v1    bool
	pages bool // ?links=pages (an extension): sourceUrl is Sift's own page of the source
}

func (f askForm) sources(src []ask.Source) []askSourceJSON {
	out := make([]askSourceJSON, len(src))
	for i := range src {
		s := &src[i]
		out[i] = askSourceJSON{Type: s.Type, Score: round4(s.Score), Metadata: s.Metadata(f.v1), Preview: s.Preview()}
		switch {
		case f.v1:
		case f.pages:
			out[i].SourceURL = s.PageURL
		default:
			out[i].SourceURL = s.URL
		}
	}
	return out
}

// parseAsk validates an Ask request body.
func parseAsk(ctx *fasthttp.RequestCtx) (ask.Request, error) {
	var req ask.Request
	ct := string(ctx.Request.Header.ContentType())
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return req, &mediaErr{fmt.Sprintf("Content-Type %q: send the question as application/json", ct)}
	}
	body := ctx.PostBody()
	if len(body) > maxAskBody {
		return req, errTooLarge
	}
	var in askRequestJSON
	if err := decodeOne(body, &in); err != nil {
		return req, paramErr("body: not a JSON object of the Ask request form ({\"question\": \"…\", \"messages\": […]}): %v", err)
	}
	a := agent.AskArgs{Messages: make([]agent.Turn, len(in.Messages))}
	if in.Question != nil {
		a.Question = *in.Question
	}
	for i, m := range in.Messages {
		a.Messages[i] = agent.Turn{Role: m.Role, Content: m.Content}
	}
	return askArgs(a)
}

// askArgs checks a question and its conversation and turns them into the
// asker's request.
func askArgs(a agent.AskArgs) (ask.Request, error) {
	var req ask.Request
	if strings.TrimSpace(a.Question) == "" {
		return req, paramErr("question: required, a non-empty string")
	}
	if !utf8.ValidString(a.Question) || utf8.RuneCountInString(a.Question) > bounds.QuestionChars {
		return req, paramErr("question: at most %d characters of UTF-8", bounds.QuestionChars)
	}
	if len(a.Messages) > bounds.HistoryItems {
		return req, paramErr("messages: at most %d items (the model sees the last %d)", bounds.HistoryItems, ask.MaxTurns)
	}
	req.Question = a.Question
	for i, m := range a.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return req, paramErr("messages[%d].role: user or assistant, not %q", i, m.Role)
		}
		if !utf8.ValidString(m.Content) || utf8.RuneCountInString(m.Content) > bounds.TurnChars {
			return req, paramErr("messages[%d].content: at most %d characters of UTF-8", i, bounds.TurnChars)
		}
		req.History = append(req.History, ask.Turn{Role: m.Role, Content: m.Content})
	}
	return req, nil
}

// errTooLarge is a body over an endpoint's own limit.
var errTooLarge = errors.New("too large")

// askHandler serves POST /api/ask (and, with v1, POST /api/v1/ask): one
// JSON body, or server-sent events when the client accepts
// text/event-stream.
func (s *api) askHandler(form askForm) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		form := form
		form.pages = !form.v1 && string(ctx.QueryArgs().Peek("links")) == "pages"
		req, err := parseAsk(ctx)
		if errors.Is(err, errTooLarge) {
			writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "the Ask request body exceeds %d bytes", maxAskBody)
			return
		}
		if err != nil {
			writeErr(ctx, err)
			return
		}
		req.Private = form.v1 || s.privileged(ctx) // /api/v1/ask is for the operator's own integrations
		release, err := s.asker.Admit()
		if err != nil {
			ctx.Response.Header.Set("Retry-After", "5")
			writeError(ctx, fasthttp.StatusServiceUnavailable, "%s", err)
			return
		}
		if acceptsEventStream(ctx) {
			rid := requestID(ctx) // ctx is not the stream's
			ctx.SetContentType("text/event-stream; charset=utf-8")
			ctx.Response.Header.Set("Cache-Control", "no-cache")
			ctx.Response.Header.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
			ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
				defer release()
				s.streamAnswer(w, req, form, rid)
			})
			return
		}
		defer release()
		col, usage, err := s.askFor(s.base, req, caller{private: req.Private, endpoint: endpointName(ctx), via: insights.Ask})
		if err != nil {
			s.askFailed(ctx, err)
			return
		}
		out := askResponseJSON{Answer: col.answer.String(), Sources: form.sources(col.sources), Stale: col.stale}
		if !form.v1 {
			out.Usage = &usage
		}
		markStale(ctx, col.stale)
		writeJSON(ctx, fasthttp.StatusOK, out)
	}
}

// askFailed answers a failed question: 502 when the model server failed.
func (s *api) askFailed(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, ask.ErrModel) || errors.Is(err, context.DeadlineExceeded) {
		noteCause(ctx, err)
		writeError(ctx, fasthttp.StatusBadGateway, "%s", publicAskError(err))
		return
	}
	writeErr(ctx, err)
}

// publicAskError is what a client is told of a failure: not the model
// server's address or its own words, which the log has.
func publicAskError(err error) string {
	switch {
	case errors.Is(err, ask.ErrModel):
		return "the model server failed to answer; try again later"
	case errors.Is(err, context.DeadlineExceeded):
		return "the answer took too long"
	}
	return "the question could not be answered"
}

func acceptsEventStream(ctx *fasthttp.RequestCtx) bool {
	for _, part := range strings.Split(string(ctx.Request.Header.Peek("Accept")), ",") {
		mt, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
			return true
		}
	}
	return false
}

// collector is the Sink of a JSON answer.
type collector struct {
	sources []ask.Source
	stale   bool
	answer  strings.Builder
}

func (c *collector) Sources(s []ask.Source, stale bool) error {
	c.sources, c.stale = s, stale
	return nil
}
func (c *collector) Token(t string) error { c.answer.WriteString(t); return nil }
func (c *collector) drawn() int           { return len(c.sources) }
func (c *collector) noAnswer() bool       { return c.answer.String() == ask.NoAnswer }

// staleHeader marks an answer or a semantic search made before the index
// had taken in every write acknowledged before the request (its JSON says
// "stale": true too): the latest content may be missing; ask again.
const staleHeader = "X-Sift-Stale"

// markStale sets staleHeader on a stale answer.
func markStale(ctx *fasthttp.RequestCtx, stale bool) {
	if stale {
		ctx.Response.Header.Set(staleHeader, "true")
	}
}

// endpointName is "METHOD /path" of a request, for the dashboard.
func endpointName(ctx *fasthttp.RequestCtx) string {
	return string(ctx.Method()) + " " + string(ctx.Path())
}
