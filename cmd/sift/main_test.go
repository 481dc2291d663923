package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

// These tests run the real binary, built once for the package.

var siftBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sift-bin")
	if err != nil {
		panic(err)
	}
	siftBin = filepath.Join(dir, "sift")
	if out, err := exec.Command("go", "build", "-o", siftBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build sift: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type proc struct {
	killOnce sync.Once
	cmd      *exec.Cmd
	url      string
	stderr   *syncBuffer
	exited   chan error
}

const testKey = "kill-test-key"

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startSift starts sift serve on dataDir and waits until it answers.
// syncBuffer is a bytes.Buffer safe to read while the process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startSift(t testing.TB, dataDir string, args ...string) *proc {
	t.Helper()
	return startSiftEnv(t, dataDir, nil, args...)
}

// startSiftEnv is startSift with more environment variables, which win
// over the harness's own.
func startSiftEnv(t testing.TB, dataDir string, env []string, args ...string) *proc {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(siftBin, append([]string{"serve", "--data-dir", dataDir, "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--port", fmt.Sprint(port)}, args...)...)
	// The public tier is not limited here (its own test sets the limit):
	// the tests read faster than ten requests a minute.
	cmd.Env = append(os.Environ(), "API_SECRET_KEY="+testKey, "LOG_LEVEL=warn", "PUBLIC_RATE_LIMIT=0")
	cmd.Env = append(cmd.Env, env...)
	p := &proc{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", port), stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get(p.url + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		select {
		case err := <-p.exited:
			t.Fatalf("sift exited at start: %v\n%s", err, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("sift did not start\n%s", p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requestIDs finds the request id a 500's message names.
var requestIDs = regexp.MustCompile(`request id ([0-9a-f]+)`)

// logOf returns the server's log lines about the failed request whose
// answer is body (its request id), to show why it failed.
func (p *proc) logOf(body []byte) string {
	m := requestIDs.FindSubmatch(body)
	if m == nil {
		return ""
	}
	var out []string
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, string(m[1])) {
			out = append(out, line)
		}
	}
	return "\n\tserver log: " + strings.Join(out, "\n\t")
}

// kill kills the process and waits for it; killing it again does nothing.
func (p *proc) kill() {
	p.killOnce.Do(func() {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	})
}

func (p *proc) post(path string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", p.url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	return do(req)
}

func (p *proc) delete(path string) (int, []byte, error) {
	req, _ := http.NewRequest("DELETE", p.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	return do(req)
}

func do(req *http.Request) (int, []byte, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func (p *proc) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	res, err := http.Get(p.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
}

// documentIDs lists every document id with its content length.
func (p *proc) documentIDs(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for offset := 0; ; offset += 1000 {
		var page struct {
			Documents []struct {
				ID            string
				ContentLength int
			}
			Total int
		}
		p.getJSON(t, fmt.Sprintf("/api/documents?limit=1000&offset=%d", offset), &page)
		for _, d := range page.Documents {
			out[d.ID] = d.ContentLength
		}
		if offset+1000 >= page.Total {
			return out
		}
	}
}

// ledger records what the server acknowledged.
type ledger struct {
	mu       sync.Mutex
	present  map[string]string // id -> unique token of its acknowledged content
	deleted  map[string]bool   // acknowledged deletions
	inflight map[string]string // writes unanswered at the kill: either outcome is right
}

// TestKillLoop is the crash test: writers upload and delete documents while
// the process is killed with SIGKILL at a random moment, 24 times over one
// data dir, with snapshots every second; after each restart every
// acknowledged write must be there and every acknowledged delete must stay
// deleted.
func TestKillLoop(t *testing.T) {
	rounds := 24
	if testing.Short() {
		rounds = 5
	}
	dir := t.TempDir()
	led := &ledger{present: map[string]string{}, deleted: map[string]bool{}, inflight: map[string]string{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for round := 0; round < rounds; round++ {
		p := startSift(t, dir, "--snapshot-interval", "1s")
		led.verify(t, p, round)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			seed := rng.Uint64()
			go func() {
				defer wg.Done()
				led.write(p, round, w, seed, stop)
			}()
		}
		time.Sleep(time.Duration(50+rng.IntN(600)) * time.Millisecond)
		p.kill()
		close(stop)
		wg.Wait()
	}
	p := startSift(t, dir)
	led.verify(t, p, rounds)
	p.kill()
	t.Logf("%d rounds: %d documents present, %d deleted", rounds, len(led.present), len(led.deleted))
	if len(led.present) < rounds*5 {
		t.Errorf("only %d documents acknowledged over %d rounds: the test did too little", len(led.present), rounds)
	}
}

// write uploads documents (and deletes some) until the server dies or
// stop closes.
func (l *ledger) write(p *proc, round, worker int, seed uint64, stop chan struct{}) {
	rng := rand.New(rand.NewPCG(seed, uint64(worker)))
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		if l.deleteOne(p, rng) {
			continue
		}
		token := fmt.Sprintf("tok%dx%dx%d", round, worker, n)
		title := fmt.Sprintf("doc %d %d %d", round, worker, n)
		id := record.DocumentID(record.UploadsSourceID, title)
		l.mu.Lock()
		l.inflight[id] = token
		l.mu.Unlock()
		status, _, err := p.post("/api/documents", map[string]string{
			"title":   title,
			"content": strings.Repeat("filler words for length ", rng.IntN(40)) + token,
		})
		if err != nil {
			return // the server is gone; this write stays in flight
		}
		if status != 201 {
			// Refused or failed (a cluster node killed under it): this
			// write stays in flight, and the next one goes on.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		l.mu.Lock()
		delete(l.inflight, id)
		l.present[id] = token
		l.mu.Unlock()
	}
}

// deleteOne deletes an acknowledged document one time in five.
func (l *ledger) deleteOne(p *proc, rng *rand.Rand) bool {
	if rng.IntN(5) != 0 {
		return false
	}
	l.mu.Lock()
	var victim, token string
	for victim, token = range l.present {
		break
	}
	if victim == "" {
		l.mu.Unlock()
		return false
	}
	delete(l.present, victim)
	l.inflight[victim] = token
	l.mu.Unlock()
	status, _, err := p.delete("/api/documents/" + victim)
	if err != nil || status != 204 {
		return true // in flight
	}
	l.mu.Lock()
	delete(l.inflight, victim)
	l.deleted[victim] = true
	l.mu.Unlock()
	return true
}

func (l *ledger) verify(t *testing.T, p *proc, round int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	have := p.documentIDs(t)
	for id := range l.present {
		if _, ok := have[id]; !ok {
			t.Fatalf("round %d: acknowledged document %s lost after SIGKILL\n%s", round, id, p.stderr)
		}
	}
	for id := range l.deleted {
		if _, ok := have[id]; ok {
			t.Fatalf("round %d: acknowledged delete of %s undone after SIGKILL", round, id)
		}
	}
	for id := range have {
		_, acked := l.present[id]
		_, flying := l.inflight[id]
		if !acked && !flying {
			t.Fatalf("round %d: document %s was never written", round, id)
		}
	}
	// Writes in flight at the kill settled one way or the other; from now
	// on that outcome must hold.
	for id, tok := range l.inflight {
		if _, ok := have[id]; ok {
			l.present[id] = tok
		} else {
			l.deleted[id] = true
		}
	}
	clear(l.inflight)
	// The indexes came back too: a sample of tokens is searchable.
	checked := 0
	for id, tok := range l.present {
		if checked == 10 {
			break
		}
		checked++
		var res struct{ Documents []struct{ ID string } }
		p.getJSON(t, "/api/search?q="+tok, &res)
		if len(res.Documents) != 1 || res.Documents[0].ID != id {
			t.Fatalf("round %d: search for %s finds %v, want %s", round, tok, res.Documents, id)
		}
	}
}
