package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/semantic"
)

// TestCredentialsNeverLogged sends malformed and ordinary requests that
// carry valid credentials, at the debug level: no secret reaches the log.
func TestCredentialsNeverLogged(t *testing.T) {
	var logs lockedBuffer
	ts := start(t, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	addr := strings.TrimPrefix(ts.url, "http://")
	basicHeader := "Basic " + basic(testUser, testPass)
	raw := []string{
		// A broken header line after the credentials.
		"GET /api/search?q=x&token=" + testKey + " HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + testKey + "\r\nCookie: session=" + testPass + "\r\nBroken header\r\n\r\n",
		// A malformed chunked body.
		"POST /api/ask HTTP/1.1\r\nHost: a\r\nAuthorization: " + basicHeader + "\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		// Headers over the read buffer.
		"GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + testKey + "\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n",
		// A bad request line.
		"GET /\x00 HTTP/1.1\r\nAuthorization: Bearer " + testKey + "\r\n\r\n",
	}
	for _, r := range raw {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, r)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		var buf [512]byte
		c.Read(buf[:])
		c.Close()
	}
	req, _ := http.NewRequest("GET", ts.url+"/api/search?q=x&token="+testKey, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	time.Sleep(100 * time.Millisecond)
	out := logs.String()
	if !strings.Contains(out, "fasthttp") && !strings.Contains(out, "request") {
		t.Fatalf("nothing was logged at debug: %q", out)
	}
	for _, secret := range []string{testKey, testPass, basic(testUser, testPass)} {
		if strings.Contains(out, secret) {
			t.Errorf("a secret reached the log:\n%s", out)
		}
	}
}

func TestRedact(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
	f("Authorization: Bearer abc\r\nHost: x", "Authorization: [redacted]\r\nHost: x")
	f(`contents: "GET / HTTP/1.1\r\nauthorization: Basic YWI6Y2Q=\r\nCookie: s=1\r\n"`, `contents: "GET / HTTP/1.1\r\nauthorization: [redacted]\r\nCookie: [redacted]\r\n"`)
	f("/api/x?q=1&token=s3cret&limit=2", "/api/x?q=1&token=[redacted]&limit=2")
	f("nothing here", "nothing here")
	// Allow-lists: any header or parameter not known safe.
	f(`buf="GET /x?q=ok&secret=a&auth=b&sig=c&x-api-key=d HTTP/1.1\r\nHost: h\r\nX-Auth-Token: t1\r\nPrivate-Token: t2\r\nX-Access-Token: t3\r\n"`,
		`buf="GET /x?q=ok&secret=[redacted]&auth=[redacted]&sig=[redacted]&x-api-key=[redacted] HTTP/1.1\r\nHost: h\r\nX-Auth-Token: [redacted]\r\nPrivate-Token: [redacted]\r\nX-Access-Token: [redacted]\r\n"`)
	// A quote in a credential does not end it.
	f(`buf="GET / HTTP/1.1\r\nAuthorization: Bearer x\"SECRET\r\n"`, `buf="GET / HTTP/1.1\r\nAuthorization: [redacted]\r\n"`)
	f(`fetch failed (Authorization: Bearer x"SECRET) at /v1`, `fetch failed (Authorization: [redacted]`)
	f("GET /x?token=ab\"SECRET HTTP/1.1", "GET /x?token=[redacted] HTTP/1.1")
	// An error's own words stay.
	f("semantic: read postings: segment 7 unreadable", "semantic: read postings: segment 7 unreadable")
}

func TestLogEvery(t *testing.T) {
	var l logEvery
	t0 := time.Unix(1000, 0)
	if n := l.note(t0); n != 1 {
		t.Fatalf("first event: %d", n)
	}
	for i := range 179 {
		if n := l.note(t0.Add(time.Duration(i) * time.Millisecond)); n != 0 {
			t.Fatalf("event %d logged again: %d", i, n)
		}
	}
	if n := l.note(t0.Add(logInterval)); n != 180 {
		t.Fatalf("summary counts %d, want 180", n)
	}
}

// TestRedirectIgnoresHost: a trailing-slash redirect names BASE_URL, not
// the request's Host header.
func TestRedirectIgnoresHost(t *testing.T) {
	ts := start(t)
	for _, path := range []string{"/sources/", "/api/search/?q=x"} {
		req, _ := http.NewRequest("GET", ts.url+path, nil)
		req.Host = "evil.example"
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc := res.Header.Get("Location")
		if res.StatusCode/100 != 3 || strings.Contains(loc, "evil") || !strings.HasPrefix(loc, ts.url+"/") {
			t.Errorf("GET %s with Host evil.example: %d Location %q", path, res.StatusCode, loc)
		}
	}
}

// failingSearch is a store whose full-text search fails as a broken
// store would, with a credential in the error's words.
type failingSearch struct{ Store }

func (failingSearch) Search(query.SearchRequest) (*query.SearchResult, error) {
	return nil, fmt.Errorf("read postings: %w", errors.New("segment 7 unreadable (Authorization: Bearer "+testKey+")"))
}

// TestInternalErrorLogged: a request failing inside the store answers 500
// with a request id (X-Request-Id, also in the message), and the log's
// ERROR line for it holds the id, the method, the route and the error
// chain, credentials blanked. A proxy's well-formed id is kept.
func TestInternalErrorLogged(t *testing.T) {
	var logs lockedBuffer
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	ts.srv.eng = failingSearch{ts.srv.eng}
	for _, sent := range []string{"", "proxy-id-42"} {
		r := ts.do(t, "GET", "/api/search?q=anything", nil, "X-Request-Id", sent)
		id := r.header.Get("X-Request-Id")
		if r.status != 500 || id == "" || (sent != "" && id != sent) {
			t.Fatalf("status %d, request id %q (sent %q): %s", r.status, id, sent, r.body)
		}
		wantError(t, r, 500, "internal error", id)
		var line map[string]any
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["request_id"] == id {
				line = m
			}
		}
		if line == nil {
			t.Fatalf("no log line with request id %s:\n%s", id, logs.String())
		}
		if line["level"] != "ERROR" || line["method"] != "GET" || line["route"] != "/api/search" ||
			!strings.Contains(fmt.Sprint(line["err"]), "read postings: segment 7 unreadable") {
			t.Errorf("log line %v", line)
		}
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("a secret reached the log:\n%s", logs.String())
	}
	// Every response carries an id; a malformed one sent is replaced.
	r := ts.do(t, "GET", "/healthz", nil, "X-Request-Id", "bad id\twith tab")
	if id := r.header.Get("X-Request-Id"); len(id) != 16 {
		t.Errorf("request id %q", id)
	}
}

// FuzzRedact: whatever surrounds it, a credential in a header line or a
// token parameter never survives redaction.
func FuzzRedact(f *testing.F) {
	f.Add("GET / HTTP/1.1", "Host: a", "s3cretvalue")
	f.Add(`buf="GET /x?q=1`, `\"x`, "zzTOPsecret9")
	f.Fuzz(func(t *testing.T, before, after, secret string) {
		if len(secret) < 8 || strings.Trim(secret, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
			return
		}
		if strings.Contains(before, secret) || strings.Contains(after, secret) {
			return
		}
		for _, in := range []string{
			before + "\r\nAuthorization: Bearer " + secret + after,
			before + `\r\nX-Auth-Token: ` + secret + after,
			before + "?token=" + secret + after,
			before + " (Authorization: Basic " + secret + after,
		} {
			if out := redact(in); strings.Contains(out, secret) {
				t.Fatalf("redact(%q) = %q keeps the secret", in, out)
			}
		}
	})
}
