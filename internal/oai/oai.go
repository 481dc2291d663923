// Package oai is the transport shared by Sift's clients of OpenAI-compatible
// APIs (OpenAI, Ollama, llama.cpp server, vLLM): base-URL normalisation,
// JSON requests with timeouts and retries (httpretry) on 429 and 5xx, and
// lenient decoding of the servers' error bodies.
package oai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/sift-search/sift/internal/httpretry"
	"github.com/sift-search/sift/internal/textcut"
)

// BaseURL normalises a configured base: no trailing slash, ending in /v1.
func BaseURL(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), "/")
	if !strings.HasSuffix(s, "/v1") {
		s += "/v1"
	}
	return s
}

// Redacted is u without the credentials it may embed (user:password@),
// for names, logs and messages.
func Redacted(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	p.User = nil
	return p.String()
}

// Client posts JSON to an OpenAI-compatible API.
type Client struct {
	Base       string // normalised with BaseURL
	Key        string // sent as a Bearer token when set
	HTTP       *http.Client
	Streaming  *http.Client  // for streamed answers: no limit on the whole exchange, only on the wait for headers
	MaxRetries int           // retries after the first attempt, on 429, 5xx and network errors
	Backoff    time.Duration // first wait; doubles per retry, with jitter
	MaxBody    int64         // response size limit
	// Observe, when set, learns of every call once it is answered or given
	// up, retries included: its path, the time to the response (to its
	// headers, for a stream) and the error. Set it before the first call.
	Observe func(path string, took time.Duration, err error)
}

// New returns a Client with Sift's defaults: 60 s per attempt (60 s to the
// headers of a streamed answer), 3 retries from 500 ms, 64 MiB responses.
func New(base, key string) *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 60 * time.Second
	return &Client{
		Base: BaseURL(base), Key: key, HTTP: &http.Client{Timeout: 60 * time.Second},
		Streaming:  &http.Client{Transport: tr},
		MaxRetries: 3, Backoff: 500 * time.Millisecond, MaxBody: 64 << 20,
	}
}

// APIError is an error answer of the server.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("model server answered %d: %s", e.Status, e.Message)
}

// Retryable reports whether the request may succeed when repeated.
func (e *APIError) Retryable() bool { return httpretry.Retryable(e.Status) }

// Do sends a JSON POST to path and returns the successful response, whose
// body the caller closes. It retries before any response is accepted.
func (c *Client) Do(ctx context.Context, path string, in any) (*http.Response, error) {
	return c.do(ctx, c.HTTP, path, in)
}

// DoStream is Do for an answer read as it arrives (server-sent events):
// the exchange as a whole has no time limit, so the caller bounds it (ctx,
// an idle timer). Retries happen only before the answer starts.
func (c *Client) DoStream(ctx context.Context, path string, in any) (*http.Response, error) {
	return c.do(ctx, c.Streaming, path, in)
}

func (c *Client) do(ctx context.Context, hc *http.Client, path string, in any) (_ *http.Response, err error) {
	if c.Observe != nil {
		defer func(start time.Time) { c.Observe(path, time.Since(start), err) }(time.Now())
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	rc := httpretry.Client{
		Policy: httpretry.Policy{
			Retries: c.MaxRetries, Backoff: c.Backoff, MaxBackoff: 30 * time.Second, Jitter: 0.5,
			MaxRetryAfter: 30 * time.Second,
		},
		Refused: func(status int, b []byte) error { return &APIError{Status: status, Message: ErrorMessage(b, c.Key)} },
	}
	return rc.Do(ctx, func() (*http.Response, error) { return c.send(ctx, hc, path, body) })
}

func (c *Client) send(ctx context.Context, hc *http.Client, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("model server: %w", err)
	}
	return res, nil
}

// PostJSON sends in and decodes the answer into out.
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	res, err := c.Do(ctx, path, in)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	dec := json.NewDecoder(io.LimitReader(res.Body, c.MaxBody))
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode model server answer: %w", err)
	}
	return nil
}

// ErrorMessage extracts the message of an error body in any of the shapes
// servers use: {"error":{"message"}}, {"error":"…"}, {"message"}, or text;
// at most maxMessage bytes of valid UTF-8, with credentials blanked: the
// secrets given (the key the client sent) and whatever looks like a key,
// since a server may echo the key it refused.
func ErrorMessage(body []byte, secrets ...string) string {
	if msg := bound(scrub(errorText(body), secrets)); msg != "" {
		return msg
	}
	return "(empty body)"
}

// errorText is the message of an error body, whole.
func errorText(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v.Error, &inner) == nil && strings.TrimSpace(inner.Message) != "" {
			return inner.Message
		}
		var s string
		if json.Unmarshal(v.Error, &s) == nil && strings.TrimSpace(s) != "" {
			return s
		}
		if strings.TrimSpace(v.Message) != "" {
			return v.Message
		}
	}
	return string(body)
}

// keyLike is what may be a credential in a server's words: a Bearer
// token, an "sk-" key, or a long run of letters and digits holding both.
var keyLike = regexp.MustCompile(`(?i)bearer\s+\S+|\bsk-[A-Za-z0-9_-]{6,}|[A-Za-z0-9_-]{24,}`)

// scrub blanks secrets and key-like runs out of msg.
func scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return keyLike.ReplaceAllStringFunc(msg, func(m string) string {
		if strings.HasPrefix(strings.ToLower(m), "bearer") || strings.HasPrefix(m, "sk-") ||
			strings.ContainsAny(m, "0123456789") && strings.IndexFunc(m, unicode.IsLetter) >= 0 {
			return "[redacted]"
		}
		return m
	})
}

// maxMessage bounds the model server's error messages Sift repeats.
const maxMessage = 300

// bound trims msg and cuts it to maxMessage bytes of valid UTF-8.
func bound(msg string) string {
	msg = strings.ToValidUTF8(strings.TrimSpace(msg), "\uFFFD")
	if len(msg) > maxMessage {
		msg = textcut.Prefix(msg, maxMessage) + "…"
	}
	return msg
}
