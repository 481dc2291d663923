package llm

import (
	"context"
	"strings"
	"testing"
	"time"

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
