package crawl

import (
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
)

// apiClient calls a platform's JSON API (Discord, Slack): one request at a
// time, waiting out 429s as the platform asks (Retry-After, or a
// retry_after in the body) and retrying 5xx and network errors a few times
// with backoff.
type apiClient struct {
	base      string
	auth      string // Authorization header
	userAgent string
	http      *http.Client
	retries   int
	maxWait   time.Duration // a longer wait asked by a 429 fails the call
	backoff   time.Duration
}

func newAPIClient(base, auth, userAgent string) *apiClient {
	return &apiClient{
		base: strings.TrimRight(base, "/"), auth: auth, userAgent: userAgent,
		http:    &http.Client{Timeout: 60 * time.Second},
		retries: 5, maxWait: 2 * time.Minute, backoff: 500 * time.Millisecond,
	}
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
	var last error
	waits := 0 // 429s: the platform pacing us, not failures
	for attempt := 0; attempt <= c.retries; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", c.auth)
		req.Header.Set("User-Agent", c.userAgent)
		req.Header.Set("Accept", "application/json")
		res, err := c.http.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = err
			if err := sleep(ctx, c.backoff<<attempt); err != nil {
				return err
			}
			continue
		}
		body, err := io.ReadAll(io.LimitReader(res.Body, maxAPIBody+1))
		res.Body.Close()
		switch {
		case err != nil:
			last = err
			continue
		case len(body) > maxAPIBody:
			return fmt.Errorf("%s: an answer over %d MB", path, maxAPIBody>>20)
		case res.StatusCode == http.StatusTooManyRequests:
			wait := rateLimitWait(res.Header, body)
			if wait > c.maxWait {
				return fmt.Errorf("%s: rate limited for %v", path, wait)
			}
			last = &apiError{Status: res.StatusCode, Message: "rate limited"}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
			if waits++; waits > 20 {
				return fmt.Errorf("%s: still rate limited after %d waits", path, waits-1)
			}
			attempt--
			continue
		case res.StatusCode >= 500:
			last = &apiError{Status: res.StatusCode, Message: apiMessage(body)}
			if err := sleep(ctx, c.backoff<<attempt); err != nil {
				return err
			}
			continue
		case res.StatusCode >= 300:
			return fmt.Errorf("%s: %w", path, &apiError{Status: res.StatusCode, Message: apiMessage(body)})
		}
		if err := json.Unmarshal(body, v); err != nil {
			return fmt.Errorf("%s: decode the answer: %w", path, err)
		}
		// Spend the bucket gently: when it is empty, wait for its reset.
		if res.Header.Get("X-RateLimit-Remaining") == "0" {
			if after, err := strconv.ParseFloat(res.Header.Get("X-RateLimit-Reset-After"), 64); err == nil && after > 0 {
				if err := sleep(ctx, min(time.Duration(after*float64(time.Second)), c.maxWait)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("%s: %w", path, last)
}

// rateLimitWait reads how long a 429 asks to wait: Retry-After, or the
// body's retry_after (Discord sends fractional seconds there).
func rateLimitWait(h http.Header, body []byte) time.Duration {
	var b struct {
		RetryAfter float64 `json:"retry_after"`
	}
	if json.Unmarshal(body, &b) == nil && b.RetryAfter > 0 {
		return time.Duration(b.RetryAfter * float64(time.Second))
	}
	if d := retryAfter(h.Get("Retry-After")); d > 0 {
		return d
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

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isAuthError reports a refusal of the credentials.
func isAuthError(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden)
}
