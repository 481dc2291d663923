package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/record"
)

// POST /mcp serves the agent package's tools over MCP's streamable HTTP
// transport, stateless and answering with one JSON body: each POST is a
// whole exchange, so no stream outlives its request (GET and DELETE, which
// only a stateful server serves, get a 405). Every error is JSON
// (mcp_errors.go).
//
// Access is the HTTP API's, decided here from the request's credentials
// before the SDK runs: the Bearer token (or admin Basic Auth) sees private
// content and is not limited; a wrong Bearer token gets 401; anyone else is
// on the public tier, where each tools/call takes one token of the client's
// bucket (initialize and tools/list are free). A call refused by the limit
// is answered as a tool error with the HTTP API's 429 words, and the HTTP
// response carries Retry-After and the RateLimit headers. The body is
// bounded like every API body (maxAPIBody, limits.go).

// mcpAccess is what the request's credentials allow its tool calls.
type mcpAccess struct {
	private   bool
	requestID string // the HTTP request's, for the log
	// spend takes a public-tier token for one tool call, or says why it
	// cannot; nil when the call is not limited. Tokens are taken as the
	// SDK runs each call, so what is counted is what runs, however the
	// body is written.
	spend func() error
}

type mcpAccessKey struct{}

// mcpHandler returns the handler of /mcp.
func (s *api) mcpHandler() fasthttp.RequestHandler {
	srv := agent.NewServer(mcpBackend{s: s}, s.opts.Version)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, MaxRequestBodyBytes: maxAPIBody,
		Logger: s.log,
	})
	return func(ctx *fasthttp.RequestCtx) {
		acc := mcpAccess{private: s.privileged(ctx), requestID: requestID(ctx)}
		if _, hasBearer := credentials(ctx, "Bearer"); !acc.private && hasBearer && s.auth.hasBearer {
			ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="sift"`)
			writeError(ctx, fasthttp.StatusUnauthorized, "the Bearer token is not valid (send none to use the public tier)")
			return
		}
		var mu sync.Mutex // a batch's calls may run at once; ctx's headers are one
		ended := false    // ctx is the handler's only until it returns
		defer func() { mu.Lock(); ended = true; mu.Unlock() }()
		if !acc.private && s.limiter != nil {
			acc.spend = func() error {
				mu.Lock()
				defer mu.Unlock()
				if ended {
					return errors.New("the request has ended")
				}
				if retry, ok := s.spend(ctx); !ok {
					return fmt.Errorf("rate limit of %d requests per minute exceeded; retry in %d s, or send the Bearer token",
						s.limiter.perMinute, retry)
				}
				return nil
			}
		}
		refusal, id := checkJSONRPC(ctx.PostBody())
		if refusal != nil {
			// A refused body costs the public tier a request, as any
			// call does: junk is limited like the rest.
			if acc.spend != nil {
				if err := acc.spend(); err != nil {
					writeError(ctx, fasthttp.StatusTooManyRequests, "%s", err)
					return
				}
			}
			writeJSON(ctx, fasthttp.StatusBadRequest, refusal)
			return
		}
		rctx, cancel := context.WithTimeout(context.WithValue(s.base, mcpAccessKey{}, acc), askTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, string(ctx.Method()), s.opts.BaseURL+"/mcp", bytes.NewReader(bytes.Clone(ctx.PostBody())))
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "malformed request: %v", err)
			return
		}
		for k, v := range ctx.Request.Header.All() {
			req.Header.Add(string(k), string(v))
		}
		if accept := req.Header.Get("Accept"); accept == "" || accept == "*/*" {
			// A client that takes anything (curl) takes the JSON answer.
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		req.Host, req.RemoteAddr = string(ctx.Host()), ctx.RemoteAddr().String()
		w := &bufferedWriter{header: http.Header{}}
		h.ServeHTTP(w, req)
		for k, vs := range w.header {
			for _, v := range vs {
				ctx.Response.Header.Add(k, v)
			}
		}
		if w.over {
			s.log.Error("mcp answer over its bound", "request_id", requestID(ctx), "bound", maxMCPAnswer)
			writeJSON(ctx, fasthttp.StatusOK, rpcFailure(id, rpcInternalError, fmt.Sprintf("Internal error: the answer exceeds %d bytes", maxMCPAnswer)))
			return
		}
		ctx.SetStatusCode(w.status())
		ctx.SetBody(w.body.Bytes())
		jsonAnswer(ctx, id)
	}
}

// maxMCPAnswer bounds the answer to one message: the largest a tool makes
// (a read_document window of 100,000 characters, a search page of 100
// hits) is well below.
const maxMCPAnswer = 8 << 20

// bufferedWriter is the http.ResponseWriter the SDK answers into; the
// answer is one JSON body (JSONResponse), so nothing is streamed. Past
// maxMCPAnswer it keeps nothing more and says so (over).
type bufferedWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
	over   bool
}

func (w *bufferedWriter) Header() http.Header { return w.header }

func (w *bufferedWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *bufferedWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.over || w.body.Len()+len(b) > maxMCPAnswer {
		w.over = true
		return 0, errors.New("the answer exceeds its bound")
	}
	return w.body.Write(b)
}

func (w *bufferedWriter) Flush() {}

func (w *bufferedWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// mcpBackend answers the tools in-process with the handlers' own request
// building, bounds and engine calls.
type mcpBackend struct {
	s     *api
	owner bool // the data dir's owner on stdio: everything, no limit
}

// OwnerMCP is the MCP server of the tools for the owner of the data dir,
// as `sift mcp --data-dir` serves it over stdio: every call sees private
// content and no rate limit applies, as with the API key.
func (s *Server) OwnerMCP() *mcp.Server {
	return agent.NewServer(mcpBackend{s: s.api, owner: true}, s.opts.Version)
}

// access returns whether the call may see private content, or the rate
// limit's refusal.
func (b mcpBackend) access(ctx context.Context) (private bool, err error) {
	if b.owner {
		return true, nil
	}
	acc, _ := ctx.Value(mcpAccessKey{}).(mcpAccess)
	if acc.spend != nil {
		if err := acc.spend(); err != nil {
			return false, err
		}
	}
	return acc.private, nil
}

// caller is the backend functions' caller of a tool call, once the rate
// limit let it run.
func (b mcpBackend) caller(ctx context.Context, tool string) (caller, error) {
	private, err := b.access(ctx)
	return caller{private: private, endpoint: "MCP " + tool, via: insights.MCP}, err
}

// toolErr is err in the words the HTTP API would answer it with; the cause
// of an internal error is logged with the request's id, which the answer
// names.
func (b mcpBackend) toolErr(ctx context.Context, err error) error {
	status, msg := errorStatus(err)
	if status >= 500 && status != fasthttp.StatusServiceUnavailable {
		acc, _ := ctx.Value(mcpAccessKey{}).(mcpAccess)
		b.s.log.Error("mcp tool failed", "request_id", acc.requestID, "err", redact(err.Error()))
		if acc.requestID != "" {
			msg += "; the server's log has the cause under request id " + acc.requestID
		}
	}
	return errors.New(msg)
}

func (b mcpBackend) Search(ctx context.Context, a agent.SearchArgs) (*agent.SearchResult, error) {
	c, err := b.caller(ctx, "search")
	if err != nil {
		return nil, err
	}
	req, err := searchArgs(a)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	res, err := b.s.searchFor(req, c)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	base := b.s.opts.BaseURL
	out := &agent.SearchResult{Messages: make([]agent.MessageHit, 0, len(res.Messages)), Documents: make([]agent.DocumentHit, 0, len(res.Documents))}
	for _, c := range res.Corrections {
		out.Corrections = append(out.Corrections, agent.Correction{Word: c.Word, Matches: c.Matches})
	}
	for _, m := range res.Messages {
		user := m.Author
		if user == "" {
			user = m.AuthorName
		}
		out.Messages = append(out.Messages, agent.MessageHit{
			ID: m.ID, Channel: m.ChannelName, ChannelSlug: m.ChannelSlug, Source: m.SourceName, Author: user,
			Timestamp: formatTime(m.Timestamp), Snippet: agent.Snippet(m.Highlight, m.Content), Score: round4(m.Score),
			URL: MessageURL(base, m.ChannelSlug, m.ID),
		})
	}
	for _, d := range res.Documents {
		out.Documents = append(out.Documents, agent.DocumentHit{
			ID: d.ID, Title: d.Title, Slug: d.Slug, Snippet: agent.Snippet(d.Highlight, d.Content), Score: round4(d.Score),
			URL: DocumentURL(base, d.Slug),
		})
	}
	return out, nil
}

func (b mcpBackend) SemanticSearch(ctx context.Context, a agent.SemanticArgs) (*agent.SemanticResult, error) {
	c, err := b.caller(ctx, "semantic_search")
	if err != nil {
		return nil, err
	}
	req, err := semanticArgs(a)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	res, err := b.s.semanticFor(ctx, req, c)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	out := &agent.SemanticResult{Query: req.Query, Results: make([]agent.SemanticHit, 0, len(res.Hits)), Stale: res.Stale}
	for _, h := range res.Hits {
		out.Results = append(out.Results, agent.SemanticHit{
			Type: h.Type, Score: round4(h.Score), Title: h.Title, Source: h.Source, Content: h.Content,
			ContentLength: h.ContentLength, Truncated: h.Truncated, URL: hitURL(b.s.opts.BaseURL, &h),
		})
	}
	return out, nil
}

func (b mcpBackend) Ask(ctx context.Context, a agent.AskArgs) (*agent.AskResult, error) {
	c, err := b.caller(ctx, "ask")
	if err != nil {
		return nil, err
	}
	if body, err := json.Marshal(a); err != nil || len(body) > maxAskBody {
		// The arguments are bounded as POST /api/ask's body is.
		return nil, fmt.Errorf("the Ask request body exceeds %d bytes", maxAskBody)
	}
	req, err := askArgs(a)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	release, err := b.s.asker.Admit()
	if err != nil {
		return nil, err
	}
	defer release()
	col, _, err := b.s.askFor(ctx, req, c)
	if err != nil {
		if status, _ := errorStatus(err); status == fasthttp.StatusInternalServerError {
			acc, _ := ctx.Value(mcpAccessKey{}).(mcpAccess)
			b.s.log.Error("mcp ask failed", "request_id", acc.requestID, "err", redact(err.Error()))
			return nil, errors.New(publicAskError(err))
		}
		return nil, b.toolErr(ctx, err)
	}
	out := &agent.AskResult{Answer: col.answer.String(), Sources: make([]agent.AskSource, 0, len(col.sources)), Stale: col.stale}
	for i, src := range (askForm{}).sources(col.sources) {
		out.Sources = append(out.Sources, agent.AskSource{N: i + 1, Type: src.Type, Score: src.Score,
			Metadata: src.Metadata, Preview: src.Preview, URL: src.SourceURL})
	}
	return out, nil
}

func (b mcpBackend) ReadDocument(ctx context.Context, a agent.ReadDocumentArgs) (*agent.DocumentWindow, error) {
	private, err := b.access(ctx)
	if err != nil {
		return nil, err
	}
	offset, err := boundArg("offset", a.Offset, bounds.ReadOffset)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	length, err := boundArg("length", a.Length, bounds.ReadLength)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	w, err := b.s.readDocument(a.Document, offset, length, private)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	return &w, nil
}

func (b mcpBackend) ReadChannel(ctx context.Context, a agent.ReadChannelArgs) (*agent.ChannelWindow, error) {
	private, err := b.access(ctx)
	if err != nil {
		return nil, err
	}
	q := channelWindowQuery{Around: a.Around, Before: a.Before, After: a.After}
	if q.Limit, err = boundArg("limit", a.Limit, bounds.ReadLimit); err != nil {
		return nil, b.toolErr(ctx, err)
	}
	w, err := b.s.readChannel(a.Channel, q, private)
	if err != nil {
		return nil, b.toolErr(ctx, err)
	}
	return &w, nil
}

// ListSources lists the sources as the /sources page does, counting what
// the caller may see.
func (b mcpBackend) ListSources(ctx context.Context, a agent.ListSourcesArgs) (*agent.SourceList, error) {
	private, err := b.access(ctx)
	if err != nil {
		return nil, err
	}
	base := b.s.opts.BaseURL
	out := &agent.SourceList{Sources: []agent.SourceInfo{}}
	for _, src := range b.s.eng.Sources() {
		if a.Source != "" && src.ID != a.Source {
			continue
		}
		st := b.s.eng.SourceStats(src.ID, private)
		if st.Channels+st.Threads+st.Documents == 0 && (src.ID == record.UploadsSourceID || !private) {
			continue // nothing to show, or nothing it may show
		}
		info := agent.SourceInfo{ID: src.ID, Name: src.Name, Type: src.Type, Channels: st.Channels,
			Messages: st.Messages, Documents: st.Documents, URL: base + "/sources#source-" + url.PathEscape(src.ID)}
		for _, c := range b.s.eng.Channels(src.ID, private) {
			if c.ParentID != "" {
				continue
			}
			if len(info.ChannelList) == agent.MaxListedChannels {
				info.MoreChannels++
				continue
			}
			info.ChannelList = append(info.ChannelList, agent.ChannelItem{Slug: c.Slug, Name: c.Name, URL: channelURL(base, c.Slug)})
		}
		out.Sources = append(out.Sources, info)
	}
	if a.Source != "" && len(out.Sources) == 0 {
		return nil, fmt.Errorf("no source %q", a.Source)
	}
	return out, nil
}
