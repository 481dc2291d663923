package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sift-search/sift/internal/fakeoai"
)

func TestDemoContentIsSearchable(t *testing.T) {
	p := startSift(t, t.TempDir(), "--demo")
	defer p.kill()
	for _, q := range []string{"webhook signature mismatch", "too many connections", "max_attempts", `"wren migrate"`} {
		var res struct {
			Messages  []struct{ Content string }
			Documents []struct{ Title string }
		}
		p.getJSON(t, "/api/search?q="+url.QueryEscape(q), &res)
		if len(res.Messages) == 0 || len(res.Documents) == 0 {
			t.Errorf("%q: %d messages, %d documents", q, len(res.Messages), len(res.Documents))
		}
	}
	var docs struct{ Total int }
	p.getJSON(t, "/api/documents", &docs)
	if docs.Total != 12 {
		t.Errorf("demo documents: %d", docs.Total)
	}
}

func TestSIGTERMDrainsAndSnapshots(t *testing.T) {
	dir := t.TempDir()
	p := startSift(t, dir)
	if status, body, err := p.post("/api/documents", map[string]string{"title": "before shutdown", "content": "kept"}); err != nil || status != 201 {
		t.Fatalf("%d %s %v", status, body, err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshot-*.sift"))
	if len(snaps) != 1 {
		t.Fatalf("want a final snapshot, have %v", snaps)
	}
	q := startSift(t, dir)
	defer q.kill()
	var res struct{ Documents []struct{ Title string } }
	q.getJSON(t, "/api/search?q=kept", &res)
	if len(res.Documents) != 1 {
		t.Fatal("document lost across a clean restart")
	}
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(siftBin, args...).CombinedOutput()
	return string(out), err
}

func TestBackupAndRestoreCommands(t *testing.T) {
	dir := t.TempDir()
	p := startSift(t, dir, "--demo")
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	file := filepath.Join(t.TempDir(), "backup.sift")
	out, err := run(t, "backup", "--data-dir", dir, "--out", file)
	if err != nil || !strings.Contains(out, "320 messages, 12 documents") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := run(t, "restore", "--data-dir", restored, file); err != nil || !strings.Contains(out, "320 messages") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if out, err := run(t, "restore", "--data-dir", restored, file); err == nil || !strings.Contains(out, "not empty") {
		t.Fatalf("restore into a non-empty dir: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(file)
	b[len(b)/2] ^= 0xff
	os.WriteFile(file, b, 0o600)
	if out, err := run(t, "restore", "--data-dir", filepath.Join(t.TempDir(), "x"), file); err == nil || !strings.Contains(out, "verify") {
		t.Fatalf("restore of a damaged file: %v\n%s", err, out)
	}
	q := startSift(t, restored)
	defer q.kill()
	var res struct{ Messages []struct{ ID string } }
	q.getJSON(t, "/api/search?q=webhook", &res)
	if len(res.Messages) == 0 {
		t.Fatal("restored data dir lacks the demo messages")
	}
	if out, err := run(t, "backup", "--data-dir", restored, "--out", file); err == nil || !strings.Contains(out, "in use") {
		t.Fatalf("backup of a dir in use: %v\n%s", err, out)
	}
}

func TestBadSettings(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"serve", "--port", "0"}, "", "port 0"},
		{[]string{"serve", "--search-access", "everyone"}, "", "search access"},
		{[]string{"serve"}, "METRICS_ACCESS=everyone", "metrics access"},
		{[]string{"serve"}, "PORT=eighty", "PORT"},
		{[]string{"serve", "--admin-user", "x"}, "", "ADMIN_PASSWORD"},
		{[]string{"serve", "--base-url", "localhost"}, "", "base URL"},
		{[]string{"serve", "extra"}, "", "unexpected"},
		{[]string{"frobnicate"}, "", "unknown command"},
	} {
		cmd := exec.Command(siftBin, c.args...)
		cmd.Env = append(os.Environ(), c.env)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v %s: %v\n%s", c.args, c.env, err, out)
		}
	}
	if out, err := run(t, "version"); err != nil || !strings.HasPrefix(out, "sift ") {
		t.Errorf("version: %v %s", err, out)
	}
}

func TestFlagWinsOverEnv(t *testing.T) {
	cmd := exec.Command(siftBin, "serve", "--search-access", "bogus")
	cmd.Env = append(os.Environ(), "SEARCH_ACCESS=public")
	if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), `"bogus"`) {
		t.Errorf("the flag did not win: %s", out)
	}
}

// TestModelServers runs the binary against a fake OpenAI-compatible server
// for embeddings and HyDE.
func TestModelServers(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("clocks", "Upgrade to 2.0.1: the DST double-run bug is fixed there.")
	p := startSift(t, t.TempDir(), "--demo", "--embed-base-url", srv.URL, "--embed-model", "fake-embed",
		"--llm-base-url", srv.URL+"/v1/", "--llm-model", "tiny")
	defer p.kill()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var h struct {
			Semantic struct {
				Embedder string
				Vectors  int
				Pending  int
				Building string
			}
		}
		p.getJSON(t, "/healthz", &h)
		if h.Semantic.Embedder == "openai:fake-embed" && h.Semantic.Pending == 0 && h.Semantic.Vectors > 100 && h.Semantic.Building == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("semantic index not filled from the model server: %+v\n%s", h.Semantic, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var res struct {
		Results []struct{ Type, Title, URL string }
	}
	p.getJSON(t, "/api/semantic-search?q="+url.QueryEscape("jobs run twice when the clocks change"), &res)
	if len(res.Results) == 0 {
		t.Fatal("no semantic results")
	}
	chats, embeds := 0, 0
	for _, r := range srv.Received() {
		switch r.Path {
		case "/v1/chat/completions":
			chats++
		case "/v1/embeddings":
			embeds++
		}
	}
	if chats != 1 || embeds < 2 {
		t.Fatalf("%d chat and %d embedding requests", chats, embeds)
	}
	// Questions are answered by the model, streamed from its server.
	srv.Answer("DST", "Upgrade to 2.0.1 [1].")
	res2, err := http.Post(p.url+"/api/ask", "application/json", strings.NewReader(`{"question":"Why did my job run twice after the DST change?"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	var answer struct {
		Answer  string
		Sources []struct{ SourceURL string }
		Usage   struct {
			TotalTokens int `json:"total_tokens"`
		}
	}
	if err := json.NewDecoder(res2.Body).Decode(&answer); err != nil || res2.StatusCode != 200 ||
		answer.Answer != "Upgrade to 2.0.1 [1]." || len(answer.Sources) == 0 || answer.Usage.TotalTokens == 0 {
		t.Fatalf("ask: %d %v %+v", res2.StatusCode, err, answer)
	}
	if last := srv.Received()[len(srv.Received())-1]; last.Body["stream"] != true || last.Body["model"] != "tiny" {
		t.Fatalf("the chat request %+v", last.Body)
	}
	// GET /metrics counts the model servers' calls (admin access by default).
	req, _ := http.NewRequest("GET", p.url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	res3, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res3.Body.Close()
	metrics, _ := io.ReadAll(res3.Body)
	for _, want := range []string{`sift_model_calls_total{kind="chat",outcome="ok"} 2`, `sift_model_calls_total{kind="embeddings",outcome="ok"}`,
		`sift_http_requests_total{code="200",method="POST",route="/api/ask"} 1`} {
		if res3.StatusCode != 200 || !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics: %d, no %s", res3.StatusCode, want)
		}
	}
}

// TestPublicRateLimit runs the binary with the default limit of the public
// tier: ten requests a minute per client, then 429; the API key lifts it.
func TestPublicRateLimit(t *testing.T) {
	p := startSiftEnv(t, t.TempDir(), []string{"PUBLIC_RATE_LIMIT="}) // empty: the default
	defer p.kill()
	for i := 1; i <= 11; i++ {
		res, err := http.Get(p.url + "/api/documents")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if want := 200; i == 11 && res.StatusCode != 429 || i < 11 && res.StatusCode != want {
			t.Fatalf("request %d: %d", i, res.StatusCode)
		}
		if i == 11 && res.Header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	req, _ := http.NewRequest("GET", p.url+"/api/documents", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("with the key: %d", res.StatusCode)
	}
}

// TestImportCommand imports a chat export into an offline data dir, twice,
// then serves it.
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	export := filepath.Join("..", "..", "internal", "demo", "discord-export.json")
	out, err := run(t, "import", "--data-dir", dir, "--source", "chat", "--name", "Team chat", export)
	if err != nil || !strings.Contains(out, "created source chat (type discord)") || !strings.Contains(out, "discord export") {
		t.Fatalf("%v: %s", err, out)
	}
	out, err = run(t, "import", "--data-dir", dir, "--source", "chat", export)
	if err != nil || !strings.Contains(out, "(0 new or changed)") {
		t.Fatalf("second import: %v: %s", err, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"guild":{"id":"1"},"channel":{"id":"2","name":"x"},"messages":[{"id":"3","type":"Default","timestamp":"nope","content":"hi"}]}`), 0o644)
	if out, err := run(t, "import", "--data-dir", dir, "--source", "chat", bad); err == nil || !strings.Contains(out, "timestamp") {
		t.Fatalf("malformed export: %v: %s", err, out)
	}
	if out, err := run(t, "import", "--data-dir", dir, export); err == nil || !strings.Contains(out, "usage") {
		t.Fatalf("without --source: %v: %s", err, out)
	}
	p := startSift(t, dir)
	defer p.kill()
	res, err := http.Get(p.url + "/api/search?q=daylight+saving")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var found struct {
		Messages []struct {
			PlatformName string `json:"platformName"`
		} `json:"messages"`
	}
	json.NewDecoder(res.Body).Decode(&found)
	if len(found.Messages) == 0 {
		t.Fatal("the imported messages are not found")
	}
}
