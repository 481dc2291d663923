package httpretry

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	f := func(p Policy, attempt int, lo, hi time.Duration) {
		t.Helper()
		for range 100 {
			if d := p.Delay(attempt); d < lo || d > hi {
				t.Fatalf("%+v Delay(%d) = %v, want %v..%v", p, attempt, d, lo, hi)
			}
		}
	}
	ms := time.Millisecond
	f(Policy{Backoff: 500 * ms}, 0, 500*ms, 500*ms)
	f(Policy{Backoff: 500 * ms}, 3, 4*time.Second, 4*time.Second)
	f(Policy{Backoff: 500 * ms, Jitter: 0.5}, 2, 2*time.Second, 3*time.Second)
	f(Policy{Backoff: 500 * ms, MaxBackoff: 3 * time.Second}, 3, 3*time.Second, 3*time.Second)
	f(Policy{Backoff: 500 * ms, MaxBackoff: 3 * time.Second, Jitter: 0.5}, 10, 3*time.Second, 4500*ms)
	f(Policy{}, 5, 0, 0)
	// far past the doubling's range: saturated or capped, never wrapped
	f(Policy{Backoff: time.Second}, 40, math.MaxInt64, math.MaxInt64)
	f(Policy{Backoff: time.Second, Jitter: 1}, 1000, math.MaxInt64, math.MaxInt64)
	f(Policy{Backoff: time.Second, MaxBackoff: time.Minute, Jitter: 0.5}, 1000, time.Minute, 90*time.Second)
}

// server answers with the statuses of script in turn, then 200 "ok"; each
// answer carries header and the body "error <n>".
type server struct {
	*httptest.Server
	hits   atomic.Int32
	script []int
	header http.Header
	body   string // error body, when not the default
}

func newServer(t *testing.T, script ...int) *server {
	s := &server{script: script, header: http.Header{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.hits.Add(1)) - 1
		if n >= len(s.script) {
			io.WriteString(w, "ok")
			return
		}
		for k, v := range s.header {
			w.Header()[k] = v
		}
		w.WriteHeader(s.script[n])
		if s.body != "" {
			io.WriteString(w, s.body)
		} else {
			io.WriteString(w, "error "+http.StatusText(s.script[n]))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) send(ctx context.Context) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		if err != nil {
			return nil, err
		}
		return http.DefaultClient.Do(req)
	}
}

// testCtx bounds a test that would otherwise wait for a long backoff.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDoRetries(t *testing.T) {
	s := newServer(t, 503, 429, 500)
	c := &Client{Policy: Policy{Retries: 3, Backoff: time.Millisecond}}
	res, err := c.Do(testCtx(t), s.send(testCtx(t)))
	if err != nil {
		t.Fatal(err)
	}
	if b := body(t, res); b != "ok" || s.hits.Load() != 4 {
		t.Fatalf("%q after %d requests", b, s.hits.Load())
	}
}

func TestDoGivesUp(t *testing.T) {
	s := newServer(t, 500, 502, 503, 504)
	c := &Client{Policy: Policy{Retries: 2, Backoff: time.Millisecond}}
	_, err := c.Do(testCtx(t), s.send(testCtx(t)))
	se, ok := errors.AsType[*StatusError](err)
	if !ok || se.Status != 503 || string(se.Body) != "error Service Unavailable" || s.hits.Load() != 3 {
		t.Fatalf("%v (%+v) after %d requests", err, se, s.hits.Load())
	}
}

func TestDoNotRetryable(t *testing.T) {
	for _, status := range []int{400, 401, 404, 304} {
		s := newServer(t, status)
		var got []byte
		mine := errors.New("mine")
		c := &Client{Policy: Policy{Retries: 3, Backoff: time.Millisecond},
			Refused: func(st int, b []byte) error { got = b; return mine }}
		_, err := c.Do(testCtx(t), s.send(testCtx(t)))
		if err != mine || s.hits.Load() != 1 || status != 304 && !strings.HasPrefix(string(got), "error") { // a 304 has no body
			t.Errorf("%d: %v, body %q, %d requests", status, err, got, s.hits.Load())
		}
	}
}

func TestDoBoundsErrorBody(t *testing.T) {
	for _, limit := range []int64{0, 100} {
		s := newServer(t, 400)
		s.body = strings.Repeat("x", 1<<20)
		c := &Client{MaxErrorBody: limit}
		_, err := c.Do(testCtx(t), s.send(testCtx(t)))
		want := limit
		if want == 0 {
			want = DefaultMaxErrorBody
		}
		if se, ok := errors.AsType[*StatusError](err); !ok || int64(len(se.Body)) != want {
			t.Errorf("MaxErrorBody %d: %v, %d bytes kept", limit, err, len(se.Body))
		}
	}
}

func TestDoRetryAfter(t *testing.T) {
	// Honoured up to MaxRetryAfter in place of an hour's backoff.
	s := newServer(t, 503, 429)
	s.header.Set("Retry-After", "3600")
	c := &Client{Policy: Policy{Retries: 2, Backoff: time.Hour, MaxRetryAfter: time.Millisecond}}
	if _, err := c.Do(testCtx(t), s.send(testCtx(t))); err != nil || s.hits.Load() != 3 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
	// Ignored without MaxRetryAfter.
	s = newServer(t, 503)
	s.header.Set("Retry-After", "3600")
	c = &Client{Policy: Policy{Retries: 1, Backoff: time.Millisecond}}
	if _, err := c.Do(testCtx(t), s.send(testCtx(t))); err != nil || s.hits.Load() != 2 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
}

func TestDoRateLimit(t *testing.T) {
	hook := func(wait time.Duration) func(*http.Response, []byte) (time.Duration, bool) {
		return func(res *http.Response, b []byte) (time.Duration, bool) {
			return wait, res.StatusCode == http.StatusForbidden && string(b) == "slow down"
		}
	}
	// Paced waits use up no retries.
	s := newServer(t, 403, 403, 403)
	s.body = "slow down"
	c := &Client{RateLimit: hook(time.Millisecond), MaxRateWait: time.Second, MaxRateWaits: 5}
	if _, err := c.Do(testCtx(t), s.send(testCtx(t))); err != nil || s.hits.Load() != 4 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
	// Too many of them, or one too long, fail the call.
	s = newServer(t, 403, 403, 403)
	s.body = "slow down"
	c.MaxRateWaits = 2
	if _, err := c.Do(testCtx(t), s.send(testCtx(t))); err == nil || err.Error() != "still rate limited after 2 waits" {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
	s = newServer(t, 403)
	s.body = "slow down"
	c = &Client{RateLimit: hook(time.Hour), MaxRateWait: time.Minute, MaxRateWaits: 5}
	if _, err := c.Do(testCtx(t), s.send(testCtx(t))); err == nil || err.Error() != "rate limited for 1h0m0s: try later" || s.hits.Load() != 1 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
	// Answers the hook does not recognise are plain errors.
	s = newServer(t, 403)
	if _, err := c.Do(testCtx(t), s.send(testCtx(t))); !isStatus(err, 403) || s.hits.Load() != 1 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
}

func isStatus(err error, status int) bool {
	se, ok := errors.AsType[*StatusError](err)
	return ok && se.Status == status
}

func TestDoNetworkErrors(t *testing.T) {
	// Retried...
	calls := 0
	flaky := errors.New("connection reset")
	c := &Client{Policy: Policy{Retries: 2, Backoff: time.Millisecond}}
	if _, err := c.Do(testCtx(t), func() (*http.Response, error) { calls++; return nil, flaky }); err != flaky || calls != 3 {
		t.Fatalf("%v after %d calls", err, calls)
	}
	// ...unless permanent.
	calls = 0
	_, err := c.Do(testCtx(t), func() (*http.Response, error) { calls++; return nil, Permanent(flaky) })
	if err != flaky || calls != 1 {
		t.Fatalf("%v after %d calls", err, calls)
	}
}

func TestDoCancel(t *testing.T) {
	// During a backoff: ctx's error, naming the last answer.
	s := newServer(t, 503)
	ctx, cancel := context.WithCancel(testCtx(t))
	c := &Client{Policy: Policy{Retries: 3, Backoff: time.Hour}}
	_, err := c.Do(ctx, func() (*http.Response, error) {
		res, err := s.send(ctx)()
		cancel()
		return res, err
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "503") || s.hits.Load() != 1 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
	// Before a request: its error, not repeated.
	s = newServer(t)
	_, err = c.Do(ctx, s.send(ctx))
	if !errors.Is(err, context.Canceled) || s.hits.Load() != 0 {
		t.Fatalf("%v after %d requests", err, s.hits.Load())
	}
	// During a rate limit's wait.
	s = newServer(t, 429)
	ctx, cancel = context.WithCancel(testCtx(t))
	c = &Client{RateLimit: func(*http.Response, []byte) (time.Duration, bool) { cancel(); return time.Minute, true },
		MaxRateWait: time.Hour, MaxRateWaits: 5}
	if _, err = c.Do(ctx, s.send(ctx)); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
