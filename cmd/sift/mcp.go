package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sift-search/sift/agent"
	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi"
	"github.com/sift-search/sift/semantic"
)

// mcpCmd serves Sift's MCP tools over stdio, for desktop agents. With --url
// (SIFT_URL) it answers them through that Sift server's HTTP API, with --key
// (SIFT_API_KEY; without it the public tier); with --data-dir it opens that
// data directory read-only, when no server holds it, and answers them
// in-process with everything the directory holds. stdout carries the
// protocol; the log goes to stderr.
func mcpCmd(args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	base := fs.String("url", cmp.Or(os.Getenv("SIFT_URL"), "http://localhost:8080"), "the Sift server's base URL (env SIFT_URL)")
	key := fs.String("key", os.Getenv("SIFT_API_KEY"), "the server's API key, for private content and no rate limit (env SIFT_API_KEY)")
	dataDir := fs.String("data-dir", "", "read this data directory instead of asking a server (it must not be in use)")
	baseURL := fs.String("base-url", cmp.Or(os.Getenv("BASE_URL"), "http://localhost:8080"), "with --data-dir: the address links name (env BASE_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("usage: sift mcp [--url URL] [--key KEY] | sift mcp --data-dir DIR")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var srv *mcp.Server
	if *dataDir != "" {
		local, closeLocal, err := openLocal(*dataDir, *baseURL, log)
		if err != nil {
			return err
		}
		defer closeLocal()
		srv = local
	} else {
		u, err := url.Parse(*base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--url %q: give the server's base URL, such as http://localhost:8080", *base)
		}
		b := newRemote(strings.TrimRight(*base, "/"), *key)
		if err := b.check(ctx); err != nil {
			log.Warn("the Sift server does not answer yet; tools will fail until it does", "url", b.base, "err", err)
		}
		srv = agent.NewServer(b, version)
	}
	err := srv.Run(ctx, &mcp.StdioTransport{})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// openLocal opens dir read-only and returns the owner's MCP server over it,
// answered by the same code as a server's /mcp, and what closes it.
func openLocal(dir, baseURL string, log *slog.Logger) (*mcp.Server, func(), error) {
	var sopts semantic.Options
	if u := os.Getenv("EMBED_BASE_URL"); u != "" { // the vectors the directory was indexed with
		sopts.Embedder = embed.NewOpenAI(u, os.Getenv("EMBED_API_KEY"), os.Getenv("EMBED_MODEL"))
	}
	eng, idx, err := openFollowed(engine.Options{DataDir: dir, ReadOnly: true, Logger: log}, sopts)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s read-only: %w (while a server runs on it, use --url)", dir, err)
	}
	baseURL = strings.TrimRight(baseURL, "/")
	metrics := httpapi.NewMetrics()
	runner := crawl.NewRunner(eng, crawl.RunnerOptions{Logger: log, Env: crawl.Env{UserAgent: httpapi.UserAgent(version, baseURL)},
		OnResult: metrics.ObserveCrawl, OnImport: metrics.ObserveImport})
	hs := httpapi.New(eng, httpapi.Options{BaseURL: baseURL, Version: version, Logger: log, Metrics: metrics,
		Semantic: idx, Asker: ask.New(idx, ask.Options{Link: httpapi.HitLinks(baseURL), Correct: ask.TypoFixes(eng), Logger: log}), Crawler: runner})
	return hs.OwnerMCP(), func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		runner.Close()
		eng.Close()
	}, nil
}

// remote is the Backend of `sift mcp`: a Sift server's HTTP API.
type remote struct {
	base, key string
	client    *http.Client
}

// remoteTimeout bounds one call to the server (an answer's included).
const remoteTimeout = 6 * time.Minute

func newRemote(base, key string) *remote {
	return &remote{base: base, key: key, client: &http.Client{Timeout: remoteTimeout}}
}

func (r *remote) newRequest(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Request, error) {
	u := r.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "sift-mcp/"+version)
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	return req, nil
}

// do sends req; an answer other than 200 is an error in the server's words.
func (r *remote) do(req *http.Request) (*http.Response, error) {
	res, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the Sift server at %s: %w", r.base, err)
	}
	if res.StatusCode == http.StatusOK {
		return res, nil
	}
	defer res.Body.Close()
	var e struct{ Error string }
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return nil, errors.New(e.Error)
	}
	return nil, fmt.Errorf("the Sift server answered %s", res.Status)
}

// get reads path's JSON answer into out.
func (r *remote) get(ctx context.Context, path string, q url.Values, out any) error {
	req, err := r.newRequest(ctx, "GET", path, q, nil)
	if err != nil {
		return err
	}
	res, err := r.do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("decode the answer of %s: %w", path, err)
	}
	return nil
}

func (r *remote) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var health map[string]any
	return r.get(ctx, "/healthz", nil, &health)
}

func (r *remote) Search(ctx context.Context, a agent.SearchArgs) (*agent.SearchResult, error) {
	q := a.Values()
	q.Set("content", "snippet") // documents cut to their highlight
	var res struct {
		Messages []struct {
			ID, Content, Timestamp, Username, ChannelName, ChannelSlug, PlatformName, Highlight string
			Score                                                                               float64
		}
		Documents []struct {
			ID, Title, Slug, Content, Highlight string
			Score                               float64
		}
	}
	if err := r.get(ctx, "/api/search", q, &res); err != nil {
		return nil, err
	}
	out := &agent.SearchResult{Messages: make([]agent.MessageHit, 0, len(res.Messages)), Documents: make([]agent.DocumentHit, 0, len(res.Documents))}
	for _, m := range res.Messages {
		out.Messages = append(out.Messages, agent.MessageHit{
			ID: m.ID, Channel: m.ChannelName, ChannelSlug: m.ChannelSlug, Source: m.PlatformName, Author: m.Username,
			Timestamp: m.Timestamp, Snippet: agent.SnippetOfHTML(m.Highlight, m.Content), Score: m.Score,
			URL: httpapi.MessageURL(r.base, m.ChannelSlug, m.ID),
		})
	}
	for _, d := range res.Documents {
		out.Documents = append(out.Documents, agent.DocumentHit{
			ID: d.ID, Title: d.Title, Slug: d.Slug, Snippet: agent.SnippetOfHTML(d.Highlight, d.Content), Score: d.Score,
			URL: httpapi.DocumentURL(r.base, d.Slug),
		})
	}
	return out, nil
}

func (r *remote) SemanticSearch(ctx context.Context, a agent.SemanticArgs) (*agent.SemanticResult, error) {
	var out agent.SemanticResult
	if err := r.get(ctx, "/api/semantic-search", a.Values(), &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		out.Results = []agent.SemanticHit{}
	}
	return &out, nil
}

// Ask posts the question and reads the answer's server-sent events:
// sources, tokens, then done (or error).
func (r *remote) Ask(ctx context.Context, a agent.AskArgs) (*agent.AskResult, error) {
	body, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode question: %w", err)
	}
	req, err := r.newRequest(ctx, "POST", "/api/ask", nil, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := r.do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := &agent.AskResult{Sources: []agent.AskSource{}}
	var answer strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue // blank separators and keep-alive comments
		}
		var ev struct {
			Type    string
			Token   string
			Error   string
			Sources []struct {
				Type, Metadata, Preview, SourceURL string
				Score                              float64
			}
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
			return nil, fmt.Errorf("decode an event of the answer: %w", err)
		}
		switch ev.Type {
		case "sources":
			for i, s := range ev.Sources {
				out.Sources = append(out.Sources, agent.AskSource{N: i + 1, Type: s.Type, Score: s.Score,
					Metadata: s.Metadata, Preview: s.Preview, URL: s.SourceURL})
			}
		case "token":
			answer.WriteString(ev.Token)
		case "error":
			return nil, errors.New(ev.Error)
		case "done":
			out.Answer = answer.String()
			return out, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	return nil, errors.New("the answer ended early")
}

func (r *remote) ReadDocument(ctx context.Context, a agent.ReadDocumentArgs) (*agent.DocumentWindow, error) {
	var out agent.DocumentWindow
	if err := pathSegment("document", a.Document); err != nil {
		return nil, err
	}
	if err := r.get(ctx, "/api/documents/"+url.PathEscape(a.Document), a.Values(), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (r *remote) ReadChannel(ctx context.Context, a agent.ReadChannelArgs) (*agent.ChannelWindow, error) {
	var out agent.ChannelWindow
	if err := pathSegment("channel", a.Channel); err != nil {
		return nil, err
	}
	if err := r.get(ctx, "/api/channels/"+url.PathEscape(a.Channel)+"/messages", a.Values(), &out); err != nil {
		return nil, err
	}
	if out.Messages == nil {
		out.Messages = []agent.WindowMessage{}
	}
	return &out, nil
}

// pathSegment refuses a tool argument that would leave its place in the
// request path: the server decodes %2F and resolves dot segments, so
// "../sources" would send the API key to another endpoint. Ids and slugs
// never hold a slash, a backslash or a dot segment.
func pathSegment(name, v string) error {
	if v == "." || v == ".." || strings.ContainsAny(v, `/\`) {
		return fmt.Errorf("%s %q is not a slug or an id", name, v)
	}
	return nil
}

// ListSources asks the server's own list_sources tool (POST /mcp): the
// HTTP API lists sources only to admins, with counts of everything, while
// the tool counts what the caller may see.
func (r *remote) ListSources(ctx context.Context, a agent.ListSourcesArgs) (*agent.SourceList, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "sift-mcp", Version: version}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: r.base + "/mcp", HTTPClient: &http.Client{Timeout: remoteTimeout, Transport: bearerTransport{r.key}},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("the Sift server at %s: %w", r.base, err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "list_sources", Arguments: a})
	if err != nil {
		return nil, fmt.Errorf("the Sift server at %s: %w", r.base, err)
	}
	if res.IsError {
		return nil, errors.New(toolText(res))
	}
	var out agent.SourceList
	b, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("decode the list of sources: %w", err)
	}
	return &out, nil
}

func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// bearerTransport adds the API key to the requests of the MCP client.
type bearerTransport struct{ key string }

func (t bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.key == "" {
		return http.DefaultTransport.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+t.key)
	return http.DefaultTransport.RoundTrip(req)
}
