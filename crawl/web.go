package crawl

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/sift-search/sift/record"
)

// The web crawler's manners and bounds.
const (
	perHostConcurrency = 2
	maxRetries         = 2                // after a 429 or 503
	maxRetryWait       = 2 * time.Minute  // a longer Retry-After gives up on the page
	maxSitemapFiles    = 50               // sitemaps read per crawl, indexes included
	maxSitemapDepth    = 3                // index → index → urlset
	robotsTTL          = 24 * time.Hour   // RFC 9309: cache at most a day
	maxRobotsWait      = 30 * time.Second // for robots.txt itself
	docBatch           = 16               // documents per write
)

// webConfig is a web source's settings (see CheckConfig).
type webConfig struct {
	starts       []*url.URL
	sitemap      *url.URL
	maxPages     int
	include      []string
	exclude      []string
	allowPrivate bool
	delay        time.Duration
	hosts        map[string]bool // scope: the hosts of the start pages and sitemap
}

func parseWebConfig(cfg map[string]any) (*webConfig, error) {
	c := &webConfig{maxPages: 500, delay: 500 * time.Millisecond, hosts: map[string]bool{}}
	for _, s := range configStrings(cfg, "urls") {
		u, err := url.Parse(s)
		if err != nil || !absoluteHTTP(s) {
			return nil, invalidConfig("config.urls: %q is not an absolute http(s) URL", s)
		}
		u = normalizeURL(u)
		c.starts = append(c.starts, u)
		c.hosts[u.Host] = true
	}
	if s, ok := cfg["sitemap"].(string); ok && s != "" {
		u, err := url.Parse(s)
		if err != nil || !absoluteHTTP(s) {
			return nil, invalidConfig("config.sitemap: %q is not an absolute http(s) URL", s)
		}
		c.sitemap = normalizeURL(u)
		c.hosts[c.sitemap.Host] = true
	}
	if len(c.hosts) == 0 {
		return nil, invalidConfig("config.urls or config.sitemap is required for a web source")
	}
	if n, ok := cfg["maxPages"].(float64); ok && n >= 1 {
		c.maxPages = int(n)
	}
	if n, ok := cfg["delayMs"].(float64); ok && n >= 0 {
		c.delay = time.Duration(n) * time.Millisecond
	}
	c.include, c.exclude = configStrings(cfg, "include"), configStrings(cfg, "exclude")
	c.allowPrivate, _ = cfg["allowPrivate"].(bool)
	return c, nil
}

// inScope reports whether the crawler may visit u: one of the source's
// hosts, under an include prefix when there are any, under no exclude
// prefix, and not obviously a file that is not a page.
func (c *webConfig) inScope(u *url.URL) bool {
	if (u.Scheme != "http" && u.Scheme != "https") || !c.hosts[u.Host] {
		return false
	}
	p := u.EscapedPath()
	if len(c.include) > 0 {
		ok := false
		for _, pre := range c.include {
			if strings.HasPrefix(p, pre) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, pre := range c.exclude {
		if strings.HasPrefix(p, pre) {
			return false
		}
	}
	return !skippedExt[strings.ToLower(path.Ext(u.Path))]
}

// skippedExt are file types that are never pages; they are not requested.
var skippedExt = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true,
	".css": true, ".js": true, ".mjs": true, ".json": true, ".pdf": true, ".zip": true, ".gz": true,
	".tar": true, ".tgz": true, ".mp3": true, ".mp4": true, ".webm": true, ".woff": true, ".woff2": true,
	".ttf": true, ".eot": true, ".exe": true, ".dmg": true, ".iso": true, ".wasm": true, ".avif": true,
}

// normalizeURL gives one spelling of a page's address: lower-case scheme
// and host, no default port, no fragment, "/" for an empty path.
func normalizeURL(u *url.URL) *url.URL {
	n := *u
	n.Scheme = strings.ToLower(n.Scheme)
	n.Host = strings.ToLower(n.Host)
	if h, p, ok := strings.Cut(n.Host, ":"); ok && !strings.Contains(p, ":") &&
		(n.Scheme == "http" && p == "80" || n.Scheme == "https" && p == "443") {
		n.Host = h
	}
	n.Fragment, n.RawFragment = "", ""
	n.User = nil
	if n.Path == "" {
		n.Path, n.RawPath = "/", ""
	}
	if n.RawQuery == "" {
		n.ForceQuery = false
	}
	return &n
}

// webCursor is what a web source remembers between crawls: per fetched
// address, the document it gave and how to ask whether it changed.
type webCursor struct {
	Pages map[string]pageState `json:"pages"`
}

type pageState struct {
	Key          string `json:"k,omitempty"` // document key (canonical URL), when not the address itself
	ETag         string `json:"e,omitempty"` // validators for a conditional request
	LastModified string `json:"m,omitempty"`
	Hash         string `json:"h,omitempty"` // of title and text, to see a real change; "" = store again
	Fetched      int64  `json:"f,omitempty"` // unix seconds
}

// key is the document key of the page fetched from addr.
func (p pageState) key(addr string) string {
	if p.Key == "" {
		return addr
	}
	return p.Key
}

func (p *pageState) setKey(key, addr string) {
	p.Key = key
	if key == addr {
		p.Key = ""
	}
}

// web crawls a site.
type web struct {
	cfg *webConfig
	f   *fetcher

	mu      sync.Mutex
	robots  map[string]*robotsEntry // by scheme://host
	hostsMu sync.Mutex
	hosts   map[string]*hostState
}

type robotsEntry struct {
	once sync.Once
	r    *robots
	err  error
}

type hostState struct {
	sem  chan struct{}
	mu   sync.Mutex
	next time.Time // no request to the host starts before
}

func newWeb(src record.Source, env Env) (Connector, error) {
	cfg, err := parseWebConfig(src.Config)
	if err != nil {
		return nil, err
	}
	return &web{cfg: cfg, f: newFetcher(cfg.allowPrivate, env), robots: map[string]*robotsEntry{}, hosts: map[string]*hostState{}}, nil
}

// robotsFor returns the rules of u's host, fetching robots.txt once per
// crawl: 2xx parsed, 4xx allows everything, 5xx or no answer allows
// nothing (RFC 9309 §2.3.1).
func (w *web) robotsFor(ctx context.Context, u *url.URL) *robots {
	origin := u.Scheme + "://" + u.Host
	w.mu.Lock()
	e, ok := w.robots[origin]
	if !ok {
		e = &robotsEntry{}
		w.robots[origin] = e
	}
	w.mu.Unlock()
	e.once.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, maxRobotsWait)
		defer cancel()
		res, err := w.polite(ctx, u.Host, func() (*response, error) {
			return w.f.get(ctx, origin+"/robots.txt", "", "", maxRobotsBytes, true)
		})
		switch {
		case err != nil:
			e.r, e.err = &robots{disallowAll: true}, err
		case res.status >= 200 && res.status <= 299:
			e.r = parseRobots(res.body, robotsToken)
		case res.status >= 400 && res.status <= 499:
			e.r = allowAllRobots
		default:
			e.r, e.err = &robots{disallowAll: true}, fmt.Errorf("robots.txt answered %d", res.status)
		}
	})
	return e.r
}

// robotsError is the first failure to read a robots.txt, if any.
func (w *web) robotsError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for origin, e := range w.robots {
		if e.err != nil {
			return fmt.Errorf("%s/robots.txt could not be read, so nothing may be fetched (RFC 9309): %w", origin, e.err)
		}
	}
	return nil
}

// polite runs one request to host within its limits: at most
// perHostConcurrency at once, starts at least the configured delay apart.
func (w *web) polite(ctx context.Context, host string, do func() (*response, error)) (*response, error) {
	w.hostsMu.Lock()
	h, ok := w.hosts[host]
	if !ok {
		h = &hostState{sem: make(chan struct{}, perHostConcurrency)}
		w.hosts[host] = h
	}
	w.hostsMu.Unlock()
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-h.sem }()
	h.mu.Lock()
	start := time.Now()
	if h.next.After(start) {
		start = h.next
	}
	h.next = start.Add(w.cfg.delay)
	h.mu.Unlock()
	if wait := time.Until(start); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	res, err := do()
	if err == nil && res.retryAfter > 0 && (res.status == http.StatusTooManyRequests || res.status == http.StatusServiceUnavailable) {
		h.mu.Lock()
		if later := time.Now().Add(min(res.retryAfter, maxRetryWait)); later.After(h.next) {
			h.next = later
		}
		h.mu.Unlock()
	}
	return res, err
}

// Test fetches robots.txt and the first start page (or the sitemap).
func (w *web) Test(ctx context.Context) (string, error) {
	target := w.cfg.sitemap
	if len(w.cfg.starts) > 0 {
		target = w.cfg.starts[0]
	}
	rb := w.robotsFor(ctx, target)
	if err := w.robotsError(); err != nil {
		return "", err
	}
	if !rb.allowed(requestPath(target)) {
		return "", fmt.Errorf("robots.txt of %s does not allow %s", target.Host, target)
	}
	res, err := w.polite(ctx, target.Host, func() (*response, error) {
		return w.f.get(ctx, target.String(), "", "", maxPageBytes, false)
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", target, err)
	}
	if res.status != http.StatusOK {
		return "", fmt.Errorf("%s answered %d %s", target, res.status, http.StatusText(res.status))
	}
	mt, _, _ := mime.ParseMediaType(res.contentType)
	return fmt.Sprintf("robots.txt allows %s; it answered 200 (%s, %d bytes)", target, mt, len(res.body)), nil
}

func requestPath(u *url.URL) string {
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}
