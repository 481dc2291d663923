package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

const (
	insightsUser = "admin"
	insightsPass = "insights-pass"
	clientAddr   = "203.0.113.77"
)

// request sends a request with the client address a proxy would add, and
// returns the answer's status and body.
func (p *proc) request(t *testing.T, method, path, body string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", clientAddr)
	req.Header.Set("User-Agent", "insights-test-agent/"+clientAddr)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	status, b, err := do(req)
	if err != nil {
		t.Fatal(err)
	}
	return status, b
}

// insights reads the report as the operator (Basic Auth).
func (p *proc) insights(t *testing.T, query string) ([]byte, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url+"/api/admin/insights"+query, nil)
	req.SetBasicAuth(insightsUser, insightsPass)
	status, b, err := do(req)
	if err != nil || status != 200 {
		t.Fatalf("insights: %d %s %v", status, b, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return b, m
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.killOnce.Do(func() {}) // gone: nothing to kill
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatal("no exit after SIGTERM")
	}
}

// TestInsightsSurviveRestart: what a server counted survives its graceful
// stop and a restart on the same data dir; the client's address (behind a
// trusted proxy) is nowhere — not in the report, not in any file of the
// data dir, its zstd streams decompressed.
func TestInsightsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	env := []string{"ADMIN_USER=" + insightsUser, "ADMIN_PASSWORD=" + insightsPass, "TRUST_PROXY=true", "SIFT_INSIGHTS_FLUSH=200ms"}
	p := startSiftEnv(t, dir, env, "--demo")
	defer p.kill()
	for _, path := range []string{
		"/api/search?q=Webhook+Signature", "/api/search?q=webhook+signature", "/?q=webhook+signature",
		"/api/search?q=zqxj+vbnm", "/api/semantic-search?q=jobs+run+twice",
	} {
		if status, b := p.request(t, "GET", path, ""); status != 200 {
			t.Fatalf("%s: %d %s", path, status, b)
		}
	}
	if status, b := p.request(t, "POST", "/api/ask", `{"question": "What is the boiling point of mercury in kelvin?"}`,
		"Content-Type", "application/json"); status != 200 {
		t.Fatalf("ask: %d %s", status, b)
	}
	if status, b := p.request(t, "GET", "/api/search?q=retry+backoff", "", "Authorization", "Bearer "+testKey); status != 200 {
		t.Fatalf("bearer search: %d %s", status, b)
	}
	before, m := p.insights(t, "?days=7")
	if m["searches"] != 6.0 || m["asks"] != 1.0 {
		t.Fatalf("before the restart: %s", before)
	}
	time.Sleep(500 * time.Millisecond) // a flush or two while serving, then the last at the stop
	p.stop(t)

	q := startSiftEnv(t, dir, env)
	after, _ := q.insights(t, "?days=7")
	if !bytes.Equal(after, before) {
		t.Errorf("after the restart\n%s\nbefore\n%s", after, before)
	}
	q.stop(t)
	for _, b := range [][]byte{before, after} {
		if bytes.Contains(b, []byte(clientAddr)) || bytes.Contains(b, []byte("insights-test-agent")) {
			t.Errorf("the report names the client: %s", b)
		}
	}
	// Every file, and every zstd stream in it, decompressed: the queries
	// are there (the search is not blind), the address never.
	found := false
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range append([][]byte{raw}, zstdStreams(t, raw)...) {
			if bytes.Contains(b, []byte(clientAddr)) || bytes.Contains(b, []byte("insights-test-agent")) {
				t.Errorf("%s holds the client's address or agent", path)
			}
			if bytes.Contains(b, []byte("zqxj vbnm")) {
				found = true
			}
		}
		return nil
	})
	if !found {
		t.Error("no file holds the queries: the search for the address proves nothing")
	}
}

// zstdStreams decompresses every zstd stream that starts somewhere in b.
func zstdStreams(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	for off := 0; ; off++ {
		i := bytes.Index(b[off:], magic)
		if i < 0 {
			return out
		}
		off += i
		zr, err := zstd.NewReader(bytes.NewReader(b[off:]), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr) // up to where it breaks, if a stray magic starts no stream
		zr.Close()
		if len(plain) > 0 {
			out = append(out, plain)
		}
	}
}

// TestInsightsOffRecordsNothing: INSIGHTS=off counts nothing, and the
// report says so with zeros.
func TestInsightsOffRecordsNothing(t *testing.T) {
	p := startSiftEnv(t, t.TempDir(), []string{"ADMIN_USER=" + insightsUser, "ADMIN_PASSWORD=" + insightsPass, "INSIGHTS=off"}, "--demo")
	defer p.kill()
	p.request(t, "GET", "/api/search?q=webhook+signature", "")
	p.request(t, "POST", "/api/ask", `{"question": "What is the boiling point of mercury in kelvin?"}`, "Content-Type", "application/json")
	b, m := p.insights(t, "")
	if m["recording"] != false || m["searches"] != 0.0 || m["asks"] != 0.0 || len(m["topQueries"].([]any)) != 0 ||
		len(m["unansweredQuestions"].([]any)) != 0 || m["days"] != 30.0 {
		t.Errorf("INSIGHTS=off: %s", b)
	}
}

func TestInsightsSettings(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		on   string
		keep time.Duration
		bad  string
	}{
		{on: "on", keep: 90 * 24 * time.Hour},
		{env: []string{"INSIGHTS=off", "INSIGHTS_RETENTION=30d"}, on: "off", keep: 30 * 24 * time.Hour},
		{env: []string{"INSIGHTS_RETENTION=720h"}, on: "on", keep: 30 * 24 * time.Hour},
		{env: []string{"INSIGHTS_RETENTION=7d"}, args: []string{"--insights-retention", "14d", "--insights", "off"}, on: "off", keep: 14 * 24 * time.Hour},
		{env: []string{"INSIGHTS=maybe"}, bad: `insights "maybe" must be on or off`},
		{env: []string{"INSIGHTS_RETENTION=ninety"}, bad: "INSIGHTS_RETENTION="},
		{env: []string{"INSIGHTS_RETENTION=0d"}, bad: "insights retention 0d must be from 1d to 3650d"},
		{env: []string{"INSIGHTS_RETENTION=4000d"}, bad: "must be from 1d to 3650d"},
		{args: []string{"--insights-retention", "-5h"}, bad: "must be from 1d"},
	} {
		for _, kv := range c.env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		cfg, err := parseServe(c.args)
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%v %v: %v, want %q", c.env, c.args, err, c.bad)
		case c.bad == "" && err != nil:
			t.Errorf("%v %v: %v", c.env, c.args, err)
		case c.bad == "" && (cfg.Insights != c.on || cfg.InsightsRetention != c.keep):
			t.Errorf("%v %v: %s %s", c.env, c.args, cfg.Insights, cfg.InsightsRetention)
		}
		for _, kv := range c.env {
			k, _, _ := strings.Cut(kv, "=")
			os.Unsetenv(k)
		}
	}
}
