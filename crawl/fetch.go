package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sift-search/sift/internal/httpretry"
)

// Limits of the web fetcher.
const (
	maxRedirects = 5
	maxPageBytes = 10 << 20
	fetchTimeout = 60 * time.Second
)

// fetcher is the web crawler's HTTP client. Unless private addresses are
// allowed, every connection it opens — for the first request and for each
// redirect hop — is checked after DNS resolution, at the address actually
// dialled (guardedTransport), so neither a redirect nor a DNS answer can
// lead it inward.
type fetcher struct {
	client    *http.Client
	userAgent string
}

func newFetcher(allowPrivate bool, env Env) *fetcher {
	ua := env.UserAgent
	if ua == "" {
		ua = "SiftBot/dev"
	}
	return &fetcher{
		userAgent: ua,
		client: &http.Client{
			Transport: guardedTransport(allowPrivate, env),
			Timeout:   fetchTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > maxRedirects {
					return fmt.Errorf("more than %d redirects", maxRedirects)
				}
				if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
					return fmt.Errorf("redirect to a %s: URL", req.URL.Scheme)
				}
				return nil
			},
		},
	}
}

// response is what the crawler keeps of an HTTP response.
type response struct {
	status       int
	finalURL     string // after redirects
	contentType  string
	etag         string
	lastModified string
	robotsTag    string // X-Robots-Tag
	retryAfter   time.Duration
	body         []byte
}

// errTooLarge: the body is over the limit.
var errTooLarge = errors.New("response body too large")

// get fetches u with conditional headers when given and reads at most
// limit bytes of the body (for 2xx answers only): a longer body is an
// error, or, with cut, read up to the limit.
func (f *fetcher) get(ctx context.Context, u, etag, lastModified string, limit int64, cut bool) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/xml;q=0.8,*/*;q=0.5")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	res, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out := &response{
		status: res.StatusCode, finalURL: res.Request.URL.String(), contentType: res.Header.Get("Content-Type"),
		etag: res.Header.Get("ETag"), lastModified: res.Header.Get("Last-Modified"), robotsTag: res.Header.Get("X-Robots-Tag"),
		retryAfter: httpretry.After(res.Header.Get("Retry-After")),
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		io.Copy(io.Discard, io.LimitReader(res.Body, httpretry.DefaultMaxErrorBody))
		return out, nil
	}
	if res.ContentLength > limit && !cut {
		return out, fmt.Errorf("%w: %d bytes, at most %d", errTooLarge, res.ContentLength, limit)
	}
	out.body, err = io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out.body)) > limit {
		if cut {
			out.body = out.body[:limit]
			return out, nil
		}
		return out, fmt.Errorf("%w: at most %d bytes", errTooLarge, limit)
	}
	return out, nil
}
