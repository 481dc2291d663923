package crawl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/httpretry"
)

// apiClient calls a platform's JSON API (Discord, Slack, Discourse,
// GitHub): one request at a time, waiting out 429s as the platform asks
// (Retry-After, or a retry_after in the body) and retrying 5xx and network
// errors a few times with backoff.
type apiClient struct {
	base      string
	auth      string // Authorization header
	userAgent string
	http      *http.Client
	headers   map[string]string // more headers on every request
	retry     httpretry.Client
}

// maxRateWait: a longer wait asked by a rate limit fails the call.
const maxRateWait = 2 * time.Minute

// newAPIClient returns a client of the API at base. Unless allowPrivate,
// it connects to public addresses only (guardedTransport), and its
// credentials — auth and headers — go to base's origin only: a redirect to
// another scheme, host or port is followed without them.
func newAPIClient(base, auth, userAgent string, allowPrivate bool, env Env) *apiClient {
	c := &apiClient{
		base: strings.TrimRight(base, "/"), auth: auth, userAgent: userAgent,
		retry: httpretry.Client{
			// 5xx back off on our schedule: a platform's Retry-After is
			// read with its rate limits only.
			Policy:       httpretry.Policy{Retries: 5, Backoff: cmp.Or(env.backoff, 500*time.Millisecond), MaxBackoff: 30 * time.Second},
			MaxErrorBody: maxAPIBody, // send has read it whole already
			Refused: func(status int, body []byte) error {
				return &apiError{Status: status, Message: apiMessage(body)}
			},
			RateLimit: rateLimited, MaxRateWait: maxRateWait, MaxRateWaits: 20,
		},
	}
	transport := guardedTransport(allowPrivate, env)
	transport.ForceAttemptHTTP2 = true
	c.http = &http.Client{
		Transport: transport,
		Timeout:   60 * time.Second,
		// Go keeps Authorization on a redirect to another port, scheme or
		// subdomain, and all of our own headers (Discourse's Api-Key)
		// everywhere: drop them off the first request's origin.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a %s: URL", req.URL.Scheme)
			}
			if urlOrigin(req.URL) != urlOrigin(via[0].URL) {
				req.Header.Del("Authorization")
				for k := range c.headers {
					req.Header.Del(k)
				}
			}
			return nil
		},
	}
	return c
}

// apiError is a platform's refusal.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the platform answered %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("the platform answered %d: %s", e.Status, e.Message)
}

// maxAPIBody bounds one answer of a platform API.
const maxAPIBody = 32 << 20

// get fetches path?query into v.
func (c *apiClient) get(ctx context.Context, path string, query url.Values, v any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	_, err := c.do(ctx, http.MethodGet, u, nil, v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// do sends one request (body as JSON when given) to an absolute URL and
// decodes the answer into v; it returns the answer's headers.
func (c *apiClient) do(ctx context.Context, method, u string, body []byte, v any) (http.Header, error) {
	res, err := c.retry.Do(ctx, func() (*http.Response, error) { return c.send(ctx, method, u, body) })
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	data, _ := io.ReadAll(res.Body) // in memory already
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("decode the answer: %w", err)
	}
	// Spend the bucket gently: when it is empty, wait for its reset.
	if res.Header.Get("X-RateLimit-Remaining") == "0" {
		if after, err := strconv.ParseFloat(res.Header.Get("X-RateLimit-Reset-After"), 64); err == nil && after > 0 {
			if err := httpretry.Sleep(ctx, min(time.Duration(after*float64(time.Second)), maxRateWait)); err != nil {
				return nil, err
			}
		}
	}
	return res.Header, nil
}

// send makes one attempt and reads the whole answer, so that one over
// maxAPIBody fails the call whatever its status.
func (c *apiClient) send(ctx context.Context, method, u string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, httpretry.Permanent(err)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		if ae, ok := errors.AsType[*AddressError](err); ok {
			return nil, httpretry.Permanent(refusedError(err, ae)) // asking again would be refused again
		}
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAPIBody+1))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(data) > maxAPIBody {
		return nil, httpretry.Permanent(fmt.Errorf("an answer over %d MB", maxAPIBody>>20))
	}
	res.Body = io.NopCloser(bytes.NewReader(data))
	return res, nil
}

// refusedError says which connection the guard refused: "connect to
// http://127.0.0.1:8080: refused: 127.0.0.1 is a loopback address; …".
func refusedError(err error, ae *AddressError) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return fmt.Errorf("connect to %s://%s: %w", u.Scheme, u.Host, ae)
		}
	}
	return ae
}

// rateLimited recognises a platform's rate limit: a 429, or GitHub's 403
// with its primary or secondary limit's headers.
func rateLimited(res *http.Response, body []byte) (time.Duration, bool) {
	limited := res.StatusCode == http.StatusTooManyRequests ||
		res.StatusCode == http.StatusForbidden && (res.Header.Get("X-RateLimit-Remaining") == "0" || // GitHub's primary limit
			res.Header.Get("Retry-After") != "") // and its secondary one
	if !limited {
		return 0, false
	}
	return rateLimitWait(res.Header, body), true
}

// rateLimitWait reads how long a 429 asks to wait: Retry-After, or the
// body's retry_after (Discord sends fractional seconds there).
func rateLimitWait(h http.Header, body []byte) time.Duration {
	var b struct {
		RetryAfter float64 `json:"retry_after"` // Discord
		Extras     struct {
			WaitSeconds float64 `json:"wait_seconds"` // Discourse
		} `json:"extras"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.RetryAfter > 0 {
			return time.Duration(b.RetryAfter * float64(time.Second))
		}
		if b.Extras.WaitSeconds > 0 {
			return time.Duration(b.Extras.WaitSeconds * float64(time.Second))
		}
	}
	if d := httpretry.After(h.Get("Retry-After")); d > 0 {
		return d
	}
	if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && reset > 0 { // GitHub: epoch seconds
		return max(time.Until(time.Unix(reset, 0)), time.Second)
	}
	return time.Second
}

// apiMessage is the human part of an error body: {"message": …} or
// {"error": …}.
func apiMessage(body []byte) string {
	var b struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.Message != "" {
			return truncate(b.Message, 200)
		}
		return truncate(b.Error, 200)
	}
	return ""
}

// isAuthError reports a refusal of the credentials.
func isAuthError(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden)
}

// isNotFound reports a platform's 404: the item went away during the crawl.
func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// errCursorStuck: a platform answered the same page again; going on would
// loop, stopping early would look like the end of the list.
var errCursorStuck = errors.New("the platform's pagination did not move on")
