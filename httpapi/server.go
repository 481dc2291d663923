// Package httpapi serves Sift over HTTP with fasthttp: the JSON API, the
// public pages and the dashboard, with authentication, body and query
// bounds, and JSON errors for every kind of bad input. routes.go holds the
// whole route table.
package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"golang.org/x/time/rate"
)

// Options configure a Server.
type Options struct {
	BaseURL        string // absolute URL of the service, used in links
	APISecretKey   string // Bearer token; empty disables Bearer auth
	AdminUser      string
	AdminPassword  string
	SearchAccess   string // "public" (default) or "bearer", for GET /api/search
	MaxUploadBytes int    // request body limit
	TrustProxy     bool   // take the client address from X-Forwarded-For
	Version        string
	Logger         *slog.Logger
	// SiteName and SiteDescription present the instance; the console's
	// settings (engine settings site_name, site_description) win.
	SiteName        string
	SiteDescription string
	// DataDir keeps the site's logo (the file site-logo); empty keeps it
	// in memory only, lost at the next start.
	DataDir string

	// PublicRateLimit is the public tier's requests per minute per client
	// (0 = no limit); RateLimitClients bounds the clients tracked (default
	// 100,000).
	PublicRateLimit  int
	RateLimitClients int
	// SuggestRateLimit is GET /api/suggest's own limit, in requests per
	// second per client with a burst of twice as many (0 = the default,
	// 20; negative = no limit). It applies only while PublicRateLimit
	// does, and spends nothing of the public tier's bucket.
	SuggestRateLimit int
	// Semantic serves GET /api/semantic-search, the MCP semantic_search
	// tool and the semantic index's state in health, metrics and the
	// dashboard (required; the semantic.Index following the same store,
	// as semantic.Open returns it).
	Semantic Semantic
	// Asker answers POST /api/ask, the ask box and the MCP ask tool
	// (required; ask.New retrieving from the same semantic index, its
	// links from HitLinks).
	Asker Asker
	// Crawler runs crawls, imports and deletions of the sources
	// (required; crawl.NewRunner over the same store). Its owner closes it
	// after Shutdown.
	Crawler Crawler
	// Insights records the searches and questions and answers GET
	// /api/admin/insights and /dashboard/insights; nil records nothing
	// (INSIGHTS=off: the report is empty). Its owner closes it after
	// Shutdown, which flushes it.
	Insights Insights
	// MetricsAccess is who may GET /metrics: "admin" (default) or "public".
	// Metrics is what it serves; nil = the server's own.
	MetricsAccess string
	Metrics       *Metrics

	sitemapMaxURLs int // tests: a smaller split than the sitemaps.org 50,000
}

// readBufferBytes bounds the request line and headers (so the URL too).
const readBufferBytes = 16 << 10

// maxConnsPerIP bounds one client address's open connections; behind a
// proxy every client has the proxy's address, so there is no bound.
func maxConnsPerIP(behindProxy bool) int {
	if behindProxy {
		return 0
	}
	return 1024
}

// Server is the HTTP front of a Store.
type Server struct {
	opts     Options
	eng      Store
	log      *slog.Logger
	auth     auth
	srv      *fasthttp.Server
	handler  fasthttp.RequestHandler
	tmpl     *templates
	stats    *stats
	metrics  *Metrics
	contents contentCache // documents' contents escaped for answers
	shed     logEvery
	bodies   bodyBudget
	sitemap  seqCache[[]sitemapURL]
	front    seqCache[front] // the home page's conversations and channels
	changes  changeClock
	semantic Semantic
	asker    Asker
	insights Insights // nil: not recorded
	limiter  *limiter // nil when the public tier is not limited
	suggests *limiter // GET /api/suggest's buckets; nil when not limited
	crawler  Crawler
	logo     *logoStore
	stop     chan struct{}
	// The rooms (rooms.go).
	api     *api
	manage  *manage
	pages   *pages
	console *console
	tally   *tally
	stopped sync.Once
	// base is the parent of the work a request starts beyond its handler
	// (answers): Shutdown cancels it when its deadline passes.
	base       context.Context
	cancelBase context.CancelFunc
}

// New returns a Server for eng, searching by meaning with opts.Semantic,
// answering with opts.Asker and crawling with opts.Crawler.
func New(eng Store, opts Options) *Server {
	if opts.Semantic == nil || opts.Asker == nil || opts.Crawler == nil {
		panic("BUG: httpapi.New needs Options.Semantic, Options.Asker and Options.Crawler")
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = 32 << 20
	}
	if opts.SearchAccess == "" {
		opts.SearchAccess = "public"
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	s := &Server{
		opts: opts,
		eng:  eng,
		log:  opts.Logger,
		auth: newAuth(opts.APISecretKey, opts.AdminUser, opts.AdminPassword),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.stop = make(chan struct{})
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.semantic = opts.Semantic
	s.asker = opts.Asker
	s.insights = opts.Insights
	if opts.PublicRateLimit > 0 {
		s.limiter = newLimiter(opts.PublicRateLimit, cmp.Or(opts.RateLimitClients, 100_000))
		if perSecond := cmp.Or(opts.SuggestRateLimit, defaultSuggestRate); perSecond > 0 {
			s.suggests = newBucketLimiter(rate.Limit(perSecond), 2*perSecond, cmp.Or(opts.RateLimitClients, 100_000))
		}
	}
	s.metrics = s.bindMetrics()
	s.crawler = opts.Crawler
	s.logo = newLogoStore(opts.DataDir)
	s.api, s.manage, s.pages, s.tally = &api{s}, &manage{s}, &pages{s}, &tally{s}
	s.console = &console{Server: s, flashes: newFlashStore()}
	rand.Read(s.console.key[:]) // never fails (crypto/rand)
	s.tmpl = newTemplates(identity{name: s.siteName, logo: s.siteLogoURL, accent: s.siteAccent})
	s.stats = newStats()
	s.contents.maxBytes = maxCachedContent
	s.handler = s.metrics.instrument(s.middleware(s.routes().Handler))
	s.srv = &fasthttp.Server{
		Handler:                      s.handler,
		ErrorHandler:                 s.errorHandler,
		ExpectHandler:                s.expect,
		Name:                         "sift",
		MaxRequestBodySize:           opts.MaxUploadBytes,
		StreamRequestBody:            true, // see limits.go: nothing is reserved for an announced body
		ReadBufferSize:               readBufferBytes,
		ReadTimeout:                  60 * time.Second,
		IdleTimeout:                  2 * time.Minute,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		Logger:                       fasthttpLogger{s.log},
	}
	return s
}

// Handler returns the request handler, for tests that serve it themselves.
func (s *Server) Handler() fasthttp.RequestHandler { return s.handler }

// Serve serves on ln until Shutdown. While it serves, the rate limiter
// drops the buckets of idle clients every minute.
func (s *Server) Serve(ln net.Listener) error {
	if s.limiter != nil {
		go func() {
			t := time.NewTicker(time.Minute)
			defer t.Stop()
			for {
				select {
				case <-s.stop:
					return
				case <-t.C:
					s.limiter.sweepAll()
					if s.suggests != nil {
						s.suggests.sweepAll()
					}
				}
			}
		}()
	}
	return s.srv.Serve(limitConns(ln, maxConnsPerIP(s.opts.TrustProxy)))
}

// Shutdown stops accepting connections and waits for running requests.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopped.Do(func() { close(s.stop) })
	// Answers in progress may finish while ctx lasts; then they are cut.
	stop := context.AfterFunc(ctx, s.cancelBase)
	defer stop()
	defer s.cancelBase()
	return s.srv.ShutdownWithContext(ctx)
}

// UserAgent is how the web crawler introduces itself.
func UserAgent(version, baseURL string) string {
	return "SiftBot/" + cmp.Or(version, "dev") + " (+" + cmp.Or(baseURL, "https://github.com/sift-search/sift") + ")"
}

// middleware adds the headers every response carries, logs requests, and
// turns a panic into a logged 500 rather than a dead connection.
func (s *Server) middleware(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		rid := setRequestID(ctx)
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("handler panic", "method", string(ctx.Method()), "path", string(ctx.Path()), "request_id", rid,
					"panic", r, "stack", string(debug.Stack()))
				ctx.ResetBody()
				writeErr(ctx, fmt.Errorf("BUG: handler panic: %v", r))
			}
			status := ctx.Response.StatusCode()
			level := slog.LevelDebug
			attrs := []any{"method", string(ctx.Method()), "path", string(ctx.Path()), "status", status, "took", time.Since(start),
				"request_id", rid}
			switch {
			case status == fasthttp.StatusServiceUnavailable:
				// Planned load shedding, or storage waiting for space:
				// one summary a while, not a line per refusal.
				if n := s.shed.note(time.Now()); n > 0 {
					s.log.Warn("requests refused with 503 (busy or storage unavailable)", "count", n, "last_path", string(ctx.Path()))
				}
			case status >= 500:
				// The cause, which the client is not told, is the log's.
				level = slog.LevelError
				if status != fasthttp.StatusInternalServerError {
					level = slog.LevelWarn
				}
				route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
				attrs = append(attrs, "route", route, "err", causeText(ctx))
			}
			s.log.Log(context.Background(), level, "request", attrs...)
		}()
		h := &ctx.Response.Header
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		release, ok := s.admitBody(ctx)
		defer release()
		if ok {
			next(ctx)
			s.ownRedirect(ctx)
		}
	}
}

// logEvery counts events and lets one log line through per interval,
// carrying the count since the last.
type logEvery struct {
	mu    sync.Mutex
	last  time.Time
	count int
}

// logInterval is how often a repeated warning is logged at most.
const logInterval = 10 * time.Second

// note counts an event at now and returns the count to log, or 0 when the
// last line was logged less than logInterval ago.
func (l *logEvery) note(now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count++
	if now.Sub(l.last) < logInterval {
		return 0
	}
	n := l.count
	l.last, l.count = now, 0
	return n
}

// ownRedirect points a redirect that fasthttp made absolute from the
// request's Host header (the router's trailing-slash redirects) at
// BASE_URL instead: a forged Host never becomes a Location.
func (s *Server) ownRedirect(ctx *fasthttp.RequestCtx) {
	if st := ctx.Response.StatusCode(); st < 300 || st > 399 {
		return
	}
	loc := string(ctx.Response.Header.Peek("Location"))
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() {
		return
	}
	if u.Host == string(ctx.Host()) {
		ctx.Response.Header.Set("Location", s.origin()+u.RequestURI())
	}
}

// errorHandler answers requests fasthttp could not read, as JSON.
func (s *Server) errorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "request body exceeds the %d-byte limit (MAX_UPLOAD_BYTES)", s.opts.MaxUploadBytes)
	case errors.As(err, &small):
		writeError(ctx, fasthttp.StatusRequestHeaderFieldsTooLarge, "request line and headers exceed %d bytes", readBufferBytes)
	case isTimeout(err):
		writeError(ctx, fasthttp.StatusRequestTimeout, "request not received in time")
	default:
		writeError(ctx, fasthttp.StatusBadRequest, "malformed HTTP request")
	}
}

// expect answers "Expect: 100-continue": a body announced over the limit is
// refused with the JSON 413 before the client sends it.
func (s *Server) expect(ctx *fasthttp.RequestCtx) int {
	if n := ctx.Request.Header.ContentLength(); n > maxAPIBody && !(ctx.IsPost() && uploadRoute(string(ctx.Path()))) {
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "request body exceeds this endpoint's %d-byte limit", maxAPIBody)
		return fasthttp.StatusRequestEntityTooLarge
	}
	if n := ctx.Request.Header.ContentLength(); n > s.opts.MaxUploadBytes {
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "request body exceeds the %d-byte limit (MAX_UPLOAD_BYTES)", s.opts.MaxUploadBytes)
		return fasthttp.StatusRequestEntityTooLarge
	}
	return fasthttp.StatusContinue
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fasthttpLogger routes fasthttp's own messages to slog.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug("fasthttp", "msg", redact(strings.TrimSpace(fmt.Sprintf(format, args...))))
}
