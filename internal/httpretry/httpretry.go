// Package httpretry is the retry loop of Sift's HTTP clients (the crawler's
// platform APIs, the model server): it repeats a request after a network
// error, a 429 or a 5xx, waiting with capped exponential backoff and
// jitter or as the server's Retry-After asks, reads at most a bounded
// prefix of error bodies, and gives up as soon as the context ends.
// Servers with a rate-limit protocol of their own plug it in as a hook.
package httpretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// DefaultMaxErrorBody is how much of an error answer a Client reads when
// MaxErrorBody is not set: enough for any message worth repeating.
const DefaultMaxErrorBody = 64 << 10

// Policy says how often a request is repeated and how long to wait first.
type Policy struct {
	Retries    int           // after the first attempt, on network errors, 429 and 5xx
	Backoff    time.Duration // the first wait; doubles per retry
	MaxBackoff time.Duration // caps the doubling; 0: no cap
	Jitter     float64       // a backoff grows by up to this fraction of itself, at random
	// MaxRetryAfter: a retried answer's Retry-After replaces the backoff,
	// cut to this; 0 ignores Retry-After (then only RateLimit reads it).
	MaxRetryAfter time.Duration
}

// Delay is the backoff before retry attempt+1: Backoff·2^attempt, capped
// at MaxBackoff, plus jitter. It never overflows.
func (p Policy) Delay(attempt int) time.Duration {
	d := p.Backoff
	if d <= 0 {
		return 0
	}
	if attempt >= 63 || d > math.MaxInt64>>attempt {
		d = math.MaxInt64
	} else {
		d <<= attempt
	}
	if p.MaxBackoff > 0 {
		d = min(d, p.MaxBackoff)
	}
	if j := int64(float64(d) * p.Jitter); j > 0 {
		j = rand.Int64N(j + 1)
		if d > math.MaxInt64-time.Duration(j) {
			return math.MaxInt64
		}
		d += time.Duration(j)
	}
	return d
}

// Client is a retry loop over requests its caller sends.
type Client struct {
	Policy
	MaxErrorBody int64 // bytes of an error answer read; DefaultMaxErrorBody when 0
	// Refused turns an error answer into the caller's error; the body is
	// at most MaxErrorBody bytes. Nil gives a *StatusError.
	Refused func(status int, body []byte) error
	// RateLimit, when set, recognises an answer by which the server paces
	// its clients (beyond a plain 429) and says how long it asks to wait.
	// Such a wait uses up no retry: the server is pacing, not failing. One
	// longer than MaxRateWait fails the call, as does the wait after
	// MaxRateWaits of them; set both with RateLimit.
	RateLimit    func(res *http.Response, body []byte) (time.Duration, bool)
	MaxRateWait  time.Duration
	MaxRateWaits int
}

// StatusError is an error answer, when Client.Refused is not set.
type StatusError struct {
	Status int
	Body   []byte
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("the server answered %d %s", e.Status, http.StatusText(e.Status))
}

// Retryable reports whether an answer of this status may succeed when the
// request is repeated: 429 and 5xx.
func Retryable(status int) bool { return status == http.StatusTooManyRequests || status >= 500 }

// Permanent marks an error of send as not worth repeating; Do returns err.
func Permanent(err error) error { return &permanent{err} }

type permanent struct{ err error }

func (p *permanent) Error() string { return p.err.Error() }
func (p *permanent) Unwrap() error { return p.err }

// Do calls send, which builds and sends one request under ctx, until it
// returns a 2xx answer, which Do returns with its body unread. A network
// error is retried while ctx lasts, unless marked Permanent; an error
// answer is retried when Retryable. Do returns the last error when the
// retries run out, and ctx's error when ctx ends during a wait (naming the
// last error after a backoff).
func (c *Client) Do(ctx context.Context, send func() (*http.Response, error)) (*http.Response, error) {
	var last error
	paced := 0
	for attempt := 0; ; attempt++ {
		res, err := send()
		var wait time.Duration // the server's, if it said
		switch {
		case err != nil:
			if p, ok := errors.AsType[*permanent](err); ok {
				return nil, p.err
			}
			if ctx.Err() != nil {
				return nil, err
			}
			last = err
		case res.StatusCode/100 == 2:
			return res, nil
		default:
			body, _ := io.ReadAll(io.LimitReader(res.Body, c.maxErrorBody()))
			res.Body.Close()
			if c.RateLimit != nil {
				if d, ok := c.RateLimit(res, body); ok {
					if err := c.pace(ctx, d, &paced); err != nil {
						return nil, err
					}
					attempt--
					continue
				}
			}
			last = c.refused(res.StatusCode, body)
			if !Retryable(res.StatusCode) {
				return nil, last
			}
			if c.MaxRetryAfter > 0 {
				wait = min(After(res.Header.Get("Retry-After")), c.MaxRetryAfter)
			}
		}
		if attempt >= c.Retries {
			return nil, last
		}
		if wait <= 0 {
			wait = c.Delay(attempt)
		}
		if err := Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w (after: %v)", err, last)
		}
	}
}

// pace waits out a rate limit of d, the paced-th in a row.
func (c *Client) pace(ctx context.Context, d time.Duration, paced *int) error {
	if d > c.MaxRateWait {
		return fmt.Errorf("rate limited for %v: try later", d.Round(time.Second))
	}
	if err := Sleep(ctx, d); err != nil {
		return err
	}
	if *paced++; *paced > c.MaxRateWaits {
		return fmt.Errorf("still rate limited after %d waits", *paced-1)
	}
	return nil
}

func (c *Client) maxErrorBody() int64 {
	if c.MaxErrorBody > 0 {
		return c.MaxErrorBody
	}
	return DefaultMaxErrorBody
}

func (c *Client) refused(status int, body []byte) error {
	if c.Refused != nil {
		return c.Refused(status, body)
	}
	return &StatusError{Status: status, Body: body}
}

// Sleep waits d, or less when ctx ends first, returning ctx's error then.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
