package llm

import (
	"context"
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
