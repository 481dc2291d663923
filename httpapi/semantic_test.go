package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// startSemantic serves an engine holding documents and a chat channel,
// semantically indexed. hydeCalls counts HyDE model calls.
func startSemantic(t *testing.T) (*testServer, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	eng, idx, err := semantic.Open(engine.Options{}.OpenWith, semantic.Options{Hypothesize: func(context.Context, string) (string, error) {
		calls.Add(1)
		return "Set max_open_conns below max_connections.", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey})
	var docs []record.Document
	for i := 0; i < 14; i++ {
		part := strings.Repeat(fmt.Sprintf("Paragraph about connection pools and schedules, part %d. ", i), 30)
		docs = append(docs, record.Document{Title: fmt.Sprintf("Guide %d", i), Content: "## Pools\n\n" + part + "\n\n## Schedules\n\n" + part}) // two sections, two results
	}
	docs = append(docs, record.Document{Title: "Origin page", URL: "https://docs.example/origin", Content: "Crawled page about webhooks and signatures."},
		record.Document{Title: "Section page", URL: "https://docs.example/guide#install", Content: "Installing the zephyr agent on a fresh host."})
	if _, err := eng.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	seedChat(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := idx.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return ts, &calls
}

type semanticOut struct {
	Query      string
	Results    []map[string]any
	DurationMs float64
}

func (ts *testServer) semantic(t *testing.T, params string) semanticOut {
	t.Helper()
	r := ts.get(t, "/api/semantic-search?"+params)
	if r.status != 200 {
		t.Fatalf("%s: %d %s", params, r.status, r.body)
	}
	var raw map[string]any
	json.Unmarshal(r.body, &raw)
	if got := keys(raw); !slices.Equal(got, []string{"durationMs", "query", "results"}) {
		t.Fatalf("top-level keys %v", got)
	}
	var out semanticOut
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSemanticSearchAPI(t *testing.T) {
	ts, hyde := startSemantic(t)
	out := ts.semantic(t, "q="+url.QueryEscape("connection pools"))
	if out.Query != "connection pools" || out.DurationMs <= 0 || len(out.Results) != 10 {
		t.Fatalf("default: query %q, %v ms, %d results", out.Query, out.DurationMs, len(out.Results))
	}
	want := []string{"content", "contentLength", "score", "source", "title", "truncated", "type", "url"}
	for i, r := range out.Results {
		if got := keys(r); !slices.Equal(got, want) {
			t.Fatalf("result keys %v", got)
		}
		s := r["score"].(float64)
		if s < 0 || s > 1 || (i > 0 && s > out.Results[i-1]["score"].(float64)) {
			t.Fatalf("score %v at %d", s, i)
		}
		content := r["content"].(string)
		if n := utf8.RuneCountInString(content); n > 2000 || int(r["contentLength"].(float64)) < n ||
			r["truncated"].(bool) != (int(r["contentLength"].(float64)) > n) {
			t.Fatalf("content %d of %v, truncated %v", n, r["contentLength"], r["truncated"])
		}
		if r["type"] == "document" && !strings.HasPrefix(r["url"].(string), ts.url+"/d/") {
			t.Fatalf("document url %v", r["url"])
		}
	}
	if !strings.Contains(out.Results[0]["url"].(string), "#:~:text=") {
		t.Errorf("no text fragment: %v", out.Results[0]["url"])
	}
	if hyde.Load() != 1 {
		t.Errorf("HyDE on by default: %d model calls", hyde.Load())
	}
	ts.semantic(t, "hyde=0&q=another+query")
	if hyde.Load() != 1 {
		t.Errorf("hyde=0 still asked the model")
	}

	if out := ts.semantic(t, "limit=20&q=pools"); len(out.Results) != 20 {
		t.Errorf("limit 20: %d", len(out.Results))
	}
	if out := ts.semantic(t, "limit=1&q=pools"); len(out.Results) != 1 {
		t.Errorf("limit 1: %d", len(out.Results))
	}
	out = ts.semantic(t, "max_chars=200&q=pools")
	for _, r := range out.Results {
		if c := r["content"].(string); utf8.RuneCountInString(c) > 200 || !r["truncated"].(bool) || r["contentLength"].(float64) <= 200 {
			t.Fatalf("max_chars 200: %d chars, truncated %v", utf8.RuneCountInString(c), r["truncated"])
		}
	}
	out = ts.semantic(t, "max_chars=10000&q=pools")
	if r := out.Results[0]; r["truncated"].(bool) {
		t.Errorf("max_chars 10000 cut a %v-character chunk", r["contentLength"])
	}

	// Other link forms: an origin URL, a message anchor.
	out = ts.semantic(t, "q=webhooks+signatures+crawled")
	if u := out.Results[0]["url"].(string); !strings.HasPrefix(u, "https://docs.example/origin#:~:text=") {
		t.Errorf("origin url %q", u)
	}
	out = ts.semantic(t, "q=zephyr+agent+install")
	if u := out.Results[0]["url"].(string); !strings.HasPrefix(u, "https://docs.example/guide#install:~:text=") {
		t.Errorf("origin url with a fragment %q", u)
	}
	out = ts.semantic(t, "q=nginx+raw+body&source=wren-discord")
	if len(out.Results) == 0 || out.Results[0]["type"] != "message" || out.Results[0]["url"] != ts.url+"/c/help#m-11" || out.Results[0]["source"] != "Wren Discord" {
		t.Errorf("message result: %+v", out.Results)
	}
}

func TestSemanticBoost(t *testing.T) {
	ts, _ := startSemantic(t)
	plain := ts.semantic(t, "q=nginx+raw+body")
	top := plain.Results[0]
	boosted := ts.semantic(t, "q=nginx+raw+body&boost=wren-discord,unknown-source:0.5")
	var b map[string]any
	for _, r := range boosted.Results {
		if r["title"] == top["title"] && r["content"] == top["content"] {
			b = r
		}
	}
	if top["source"] != "Wren Discord" || b == nil || math.Abs(b["score"].(float64)-2*top["score"].(float64)) > 1e-3 {
		t.Fatalf("a bare id doubles the score: %v -> %v", top["score"], b)
	}
	demoted := ts.semantic(t, "q=nginx+raw+body&boost=wren-discord:0.1&limit=20")
	at := slices.IndexFunc(demoted.Results, func(r map[string]any) bool {
		return r["title"] == top["title"] && r["content"] == top["content"]
	})
	if at == 0 {
		t.Fatal("0.1 left the top result first")
	}
	// Among that source's results alone, the same result comes first, at a
	// tenth of its score.
	only := ts.semantic(t, "q=nginx+raw+body&boost=wren-discord:0.1&source=wren-discord")
	if r := only.Results[0]; r["content"] != top["content"] || math.Abs(r["score"].(float64)-0.1*top["score"].(float64)) > 1e-3 {
		t.Fatalf("0.1 multiplies the score: %v -> %v", top["score"], r["score"])
	}
}

func TestSemanticValidation(t *testing.T) {
	ts := start(t)
	for _, c := range []struct {
		query string
		words []string
	}{
		{"", []string{"q", "required"}},
		{"q=", []string{"q"}},
		{"q=" + strings.Repeat("a", 3000), []string{"q", "2048"}},
		{"q=a&limit=0", []string{"limit", "1", "20"}},
		{"q=a&limit=21", []string{"limit", "1", "20"}},
		{"q=a&limit=x", []string{"limit"}},
		{"q=a&max_chars=199", []string{"max_chars", "200", "10000"}},
		{"q=a&max_chars=10001", []string{"max_chars", "200", "10000"}},
		{"q=a&max_chars=lots", []string{"max_chars"}},
		{"q=a&boost=src:abc", []string{"boost", "0.1", "10"}},
		{"q=a&boost=src:0.05", []string{"boost", "0.1"}},
		{"q=a&boost=src:11", []string{"boost", "10"}},
		{"q=a&boost=src:NaN", []string{"boost"}},
		{"q=a&boost=:2", []string{"boost"}},
		{"q=a&boost=a,,b", []string{"boost"}},
		{"q=%ff", []string{"q", "UTF-8"}},
		{"q=a&source=" + strings.Repeat("s,", 65), []string{"source", "64"}},
	} {
		wantError(t, ts.get(t, "/api/semantic-search?"+c.query), 400, c.words...)
	}
	// The query is plain text: what looks like search syntax is searched.
	for _, ok := range []string{"q=a&boost=src:0.1", "q=a&boost=src:10,other", "q=a&hyde=1", "q=a&hyde=0", "q=!!!",
		"q=--dry-run", "q=-v", "q=%22unclosed", "q=in:prod+from:x+after:never"} {
		if r := ts.get(t, "/api/semantic-search?"+ok); r.status != 200 {
			t.Errorf("%s: %d %s", ok, r.status, r.body)
		}
	}
}

func TestParseBoost(t *testing.T) {
	got, err := parseBoost(" a:1.5 , b ,c:10")
	if err != nil || got["a"] != 1.5 || got["b"] != 2 || got["c"] != 10 || len(got) != 3 {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := parseBoost(""); got != nil || err != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
}
