package llm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/internal/fakeoai"
)

func TestHypothesize(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("pool", "Set max_open_conns below max_connections.")
	c := New(srv.URL, "key", "tiny")
	c.Transport().Backoff = time.Millisecond
	srv.Fail(503)
	got, err := c.Hypothesize(context.Background(), "my pool is exhausted")
	if err != nil || got != "Set max_open_conns below max_connections." {
		t.Fatalf("%q %v", got, err)
	}
	req := srv.Received()[1]
	msgs := req.Body["messages"].([]any)
	if req.Path != "/v1/chat/completions" || req.Body["model"] != "tiny" || req.Body["stream"] != false || len(msgs) != 2 ||
		msgs[1].(map[string]any)["content"] != "my pool is exhausted" || !strings.Contains(msgs[0].(map[string]any)["content"].(string), "passage") {
		t.Fatalf("request %+v", req)
	}
	srv.Fail(400)
	if _, err := c.Hypothesize(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("400: %v", err)
	}
}

// FuzzCompleteAnswer feeds arbitrary answers of a model server to the chat
// client: a reply or an error, never a panic.
func FuzzCompleteAnswer(f *testing.F) {
	srv := fakeoai.NewRaw()
	f.Cleanup(srv.Close)
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"choices":[]}`))
	f.Add([]byte(`{"choices":[{"message":null}],"usage":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		srv.Set(b)
		c := New(srv.URL, "", "m")
		c.Transport().MaxRetries = 0
		if reply, _, err := c.Complete(context.Background(), []Message{{"user", "q"}}, 10); err == nil && !utf8.ValidString(reply) {
			t.Fatalf("invalid UTF-8 reply %q from %q", reply, b)
		}
	})
}

func TestStream(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("pool", "Set max_open_conns below max_connections [1].")
	c := New(srv.URL, "key", "tiny")
	c.Transport().Backoff = time.Millisecond
	srv.Fail(503) // retried: the answer has not started
	var pieces []string
	usage, err := c.Stream(context.Background(), []Message{{"system", "be brief"}, {"user", "my pool is exhausted"}}, 300, func(s string) error {
		pieces = append(pieces, s)
		return nil
	})
	if err != nil || strings.Join(pieces, "") != "Set max_open_conns below max_connections [1]." || len(pieces) != 5 {
		t.Fatalf("%q %v", pieces, err)
	}
	if usage == nil || usage.CompletionTokens != 5 || usage.TotalTokens != 45 {
		t.Fatalf("usage %+v", usage)
	}
	req := srv.Received()[1]
	opts, _ := req.Body["stream_options"].(map[string]any)
	if req.Body["stream"] != true || opts["include_usage"] != true || req.Body["max_tokens"] != 300.0 || req.Auth != "Bearer key" {
		t.Fatalf("request %+v", req.Body)
	}
}

func TestStreamFailures(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("q", "one two three four five")
	c := New(srv.URL, "", "tiny")
	c.Transport().Backoff = time.Millisecond
	collect := func() (string, error) {
		var b strings.Builder
		_, err := c.Stream(context.Background(), []Message{{"user", "q"}}, 0, func(s string) error { b.WriteString(s); return nil })
		return b.String(), err
	}
	// An error event mid-stream (vLLM) fails the answer; nothing is retried
	// once pieces went out.
	srv.FailStreamAfter(2)
	if got, err := collect(); err == nil || got != "one two " || !strings.Contains(err.Error(), "mid-stream") {
		t.Fatalf("error event: %q %v", got, err)
	}
	srv.FailStreamAfter(-1)
	// A 400 is not retried.
	srv.Fail(400)
	before := len(srv.Received())
	if _, err := collect(); err == nil || len(srv.Received())-before != 1 {
		t.Fatalf("400: %v after %d requests", err, len(srv.Received())-before)
	}
	// onToken's error stops the stream and closes the connection, so the
	// server stops generating.
	srv.SetTokenDelay(20 * time.Millisecond)
	stop := errors.New("client gone")
	n := 0
	_, err := c.Stream(context.Background(), []Message{{"user", "q"}}, 0, func(string) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("onToken error: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, cancelled := srv.Streams(); cancelled == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server was not told the client left")
		}
	}
	// Silence longer than StreamIdle fails the answer.
	defer func(d time.Duration) { StreamIdle = d }(StreamIdle)
	StreamIdle = 5 * time.Millisecond
	if _, err := collect(); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("idle: %v", err)
	}
}

func TestStreamQuirks(t *testing.T) {
	srv := fakeoai.NewRaw()
	defer srv.Close()
	c := New(srv.URL, "", "m")
	c.Transport().MaxRetries = 0
	run := func(body string) (string, *Usage, error) {
		srv.Set([]byte(body))
		srv.SetContentType("text/event-stream")
		if strings.HasPrefix(body, "{") {
			srv.SetContentType("application/json")
		}
		var b strings.Builder
		u, err := c.Stream(context.Background(), []Message{{"user", "q"}}, 0, func(s string) error { b.WriteString(s); return nil })
		return b.String(), u, err
	}
	// Comments, event: lines, no space after "data:", CRLF, a usage chunk
	// with "choices": null (vLLM), a chunk without content.
	quirky := ": ping\r\n\r\nevent: message\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\r\n\r\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":null,\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\ndata: [DONE]\n\n"
	if got, u, err := run(quirky); err != nil || got != "Hi there" || u == nil || u.TotalTokens != 5 {
		t.Fatalf("quirks: %q %+v %v", got, u, err)
	}
	// A stream cut before the end is an error; one that finished without
	// [DONE] is not.
	if _, _, err := run("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("cut: %v", err)
	}
	if got, _, err := run("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"length\"}]}\n\n"); err != nil || got != "Hi" {
		t.Fatalf("no [DONE]: %q %v", got, err)
	}
	// A server that ignores "stream" answers one JSON body: Raw says
	// application/json.
	if got, u, err := run(`{"choices":[{"message":{"content":"whole answer"}}],"usage":{"total_tokens":9}}`); err != nil || got != "whole answer" || u.TotalTokens != 9 {
		t.Fatalf("JSON answer: %q %v", got, err)
	}
}

// FuzzReadSSE: any stream is read without a panic, and each event's data
// is what followed "data:" on its lines.
func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(": c\r\nevent: x\r\ndata:part\r\ndata: two\r\n\r\ndata: {}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		done, err := ReadSSE(bytes.NewReader(b), func(data []byte) error {
			if bytes.Contains(data, []byte("\r")) && !bytes.Contains(b, []byte("\r")) {
				t.Fatalf("data %q not from the input", data)
			}
			n++
			return nil
		})
		if err != nil && !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("%q: %v", b, err)
		}
		if done && !bytes.Contains(b, []byte("[DONE]")) {
			t.Fatalf("done without [DONE] in %q", b)
		}
	})
}

// FuzzStreamAnswer feeds arbitrary event streams to Stream: pieces and
// usage, or an error, never a panic.
func FuzzStreamAnswer(f *testing.F) {
	srv := fakeoai.NewRaw()
	f.Cleanup(srv.Close)
	srv.SetContentType("text/event-stream")
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"boom\"}}\n\n"))
	f.Add([]byte("data: {\"choices\":null,\"usage\":{\"total_tokens\":1}}\n\ndata: [DONE]\n\n"))
	// One client for every input: a client per input would leave its idle
	// connection open, and the fuzzer would run out of file descriptors.
	c := New(srv.URL, "", "m")
	c.Transport().MaxRetries = 0
	f.Fuzz(func(t *testing.T, b []byte) {
		srv.Set(b)
		var got strings.Builder
		if _, err := c.Stream(context.Background(), []Message{{"user", "q"}}, 0, func(s string) error { got.WriteString(s); return nil }); err == nil && !utf8.ValidString(got.String()) {
			t.Fatalf("invalid UTF-8 answer %q", got.String())
		}
	})
}
