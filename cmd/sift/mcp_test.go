package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sift-search/sift/agent"
)

// TestMCPStdio drives `sift mcp` over stdio with the SDK's client, against
// a real `sift serve` holding the demo content.
func TestMCPStdio(t *testing.T) {
	p := startSift(t, t.TempDir(), "--demo")
	defer p.kill()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(siftBin, "mcp", "--url", p.url, "--key", testKey)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"ask", "list_sources", "read_channel", "read_document", "search", "semantic_search"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}

	call := func(name string, args any, out any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out != nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		return res
	}

	var sr agent.SearchResult
	if res := call("search", map[string]any{"q": "webhook signature mismatch", "limit": 3}, &sr); res.IsError || len(sr.Documents) == 0 || len(sr.Messages) == 0 {
		t.Fatalf("search: %+v %v", sr, res.Content)
	}
	var api struct{ Documents []struct{ ID string } }
	p.getJSON(t, "/api/search?limit=3&q=webhook+signature+mismatch", &api)
	for i, d := range sr.Documents {
		if d.ID != api.Documents[i].ID || d.URL != p.url+"/d/"+d.Slug || !strings.Contains(d.Snippet, "**") {
			t.Errorf("document %d: %+v", i, d)
		}
	}

	doc := sr.Documents[0]
	var w agent.DocumentWindow
	if res := call("read_document", map[string]any{"document": doc.Slug, "length": 200}, &w); res.IsError || w.ID != doc.ID || w.Length != 200 || w.NextOffset == nil {
		t.Fatalf("read_document: %+v %v", w, res.Content)
	}
	if res := call("read_document", map[string]any{"document": doc.Slug, "length": 0}, nil); !res.IsError ||
		!strings.Contains(res.Content[0].(*mcp.TextContent).Text, "length must be an integer from 1 to 100000") {
		t.Errorf("read_document length 0: %v", res.Content)
	}

	var cw agent.ChannelWindow
	if res := call("read_channel", map[string]any{"channel": sr.Messages[0].ChannelSlug, "around": sr.Messages[0].ID, "limit": 3}, &cw); res.IsError || len(cw.Messages) != 3 {
		t.Errorf("read_channel: %+v %v", cw, res.Content)
	}
	var ls agent.SourceList
	if res := call("list_sources", map[string]any{}, &ls); res.IsError || len(ls.Sources) != 2 {
		t.Errorf("list_sources: %+v %v", ls, res.Content)
	}
	var ar agent.AskResult
	if res := call("ask", map[string]any{"question": "Why does the webhook signature not match?"}, &ar); res.IsError || ar.Answer == "" || len(ar.Sources) == 0 || ar.Sources[0].URL == "" {
		t.Errorf("ask: %+v %v", ar, res.Content)
	}
}

// TestMCPStdioDataDir drives `sift mcp --data-dir` over stdio: it reads a
// data dir no server holds, sees what the server served (private content
// too), and keeps a server out of the directory while it runs.
func TestMCPStdioDataDir(t *testing.T) {
	dir := t.TempDir()
	p := startSift(t, dir, "--demo")
	var api struct{ Documents []struct{ ID string } }
	p.getJSON(t, "/api/search?limit=3&q=webhook+signature+mismatch", &api)
	p.kill() // what was acknowledged is in the log

	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(siftBin, "mcp", "--data-dir", dir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "webhook signature mismatch", "limit": 3}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %v", err, res)
	}
	var sr agent.SearchResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Documents) != len(api.Documents) || len(sr.Documents) == 0 {
		t.Fatalf("search over the data dir: %+v; the server found %v", sr.Documents, api.Documents)
	}
	for i, d := range sr.Documents {
		if d.ID != api.Documents[i].ID || !strings.HasPrefix(d.URL, "http://localhost:8080/d/") {
			t.Errorf("document %d: %+v, the server's %s", i, d, api.Documents[i].ID)
		}
	}

	out, err := exec.Command(siftBin, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another process") {
		t.Errorf("a server started on the directory sift mcp reads: %v\n%s", err, out)
	}
}

// TestMCPHTTP drives POST /mcp of a real `sift serve` with the SDK's
// streamable HTTP client, anonymously: the tools, a search that agrees with
// GET /api/search, and a bad argument answered in the API's words.
func TestMCPHTTP(t *testing.T) {
	p := startSift(t, t.TempDir(), "--demo")
	defer p.kill()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "pool size postgres", "limit": 4}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	var sr agent.SearchResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatal(err)
	}
	var api struct {
		Messages, Documents []struct{ ID string }
	}
	p.getJSON(t, "/api/search?limit=4&q=pool+size+postgres", &api)
	if len(sr.Documents) != len(api.Documents) || len(sr.Messages) != len(api.Messages) || len(sr.Documents) == 0 {
		t.Fatalf("search over MCP: %d documents, %d messages; the API's %d, %d", len(sr.Documents), len(sr.Messages), len(api.Documents), len(api.Messages))
	}
	for i := range sr.Documents {
		if sr.Documents[i].ID != api.Documents[i].ID {
			t.Errorf("document %d: %s, the API's %s", i, sr.Documents[i].ID, api.Documents[i].ID)
		}
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "pool", "limit": 0}})
	if err != nil || !res.IsError || res.Content[0].(*mcp.TextContent).Text != "limit must be an integer from 1 to 100" {
		t.Errorf("search limit 0: %v %+v", err, res)
	}
}

// TestMCPStdioStaysInPath: a read_document argument cannot walk the
// request out of /api/documents/ to another endpoint with the API key.
func TestMCPStdioStaysInPath(t *testing.T) {
	for _, ref := range []string{"../sources", "..", "a/../../sources", `..\sources`} {
		if err := pathSegment("document", ref); err == nil {
			t.Errorf("%q accepted", ref)
		}
	}
	for _, ref := range []string{"d_aed305fb566237b0", "webhooks-and-signatures", "a..b"} {
		if err := pathSegment("document", ref); err != nil {
			t.Errorf("%q: %v", ref, err)
		}
	}
}
