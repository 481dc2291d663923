package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/internal/fakeoai"
	"github.com/sift-search/sift/llm"
)

// startAsk serves the demo content, semantically indexed; with srv, its
// answers come from that fake model server.
func startAsk(t *testing.T, srv *fakeoai.Server, mod ...func(*Options, *ask.Options)) *testServer {
	t.Helper()
	eng, idx := semanticDemo(t, nil)
	opts := Options{APISecretKey: testKey, AdminUser: testUser, AdminPassword: testPass}
	var aopts ask.Options
	if srv != nil {
		c := llm.New(srv.URL, "k", "tiny")
		c.Transport().Backoff = time.Millisecond
		aopts.Model = c
	}
	for _, m := range mod {
		m(&opts, &aopts)
	}
	return serveAsking(t, eng, idx, opts, aopts)
}

func askBody(question string, history ...string) io.Reader {
	req := map[string]any{"question": question}
	var msgs []map[string]string
	for i, h := range history {
		msgs = append(msgs, map[string]string{"role": []string{"user", "assistant"}[i%2], "content": h})
	}
	if msgs != nil {
		req["messages"] = msgs
	}
	b, _ := json.Marshal(req)
	return strings.NewReader(string(b))
}

var jsonCT = []string{"Content-Type", "application/json"}

// askJSON posts a question and decodes the JSON answer.
func (ts *testServer) askJSON(t *testing.T, path, question string, header ...string) map[string]any {
	t.Helper()
	r := ts.do(t, "POST", path, askBody(question), append(slices.Clone(jsonCT), header...)...)
	if r.status != 200 {
		t.Fatalf("%s: %d %s", path, r.status, r.body)
	}
	return r.json(t)
}

// event is one server-sent event of an answer.
type event struct {
	Type    string
	Sources []map[string]any
	Token   *string
	Usage   map[string]any
	Error   string
	raw     map[string]any
}

// askSSE posts a question accepting text/event-stream and reads every
// event to the end of the stream.
func (ts *testServer) askSSE(t *testing.T, path string, body io.Reader, header ...string) (http.Header, []event) {
	t.Helper()
	res := ts.send(t, "POST", path, body, append([]string{"Content-Type", "application/json", "Accept", "text/event-stream"}, header...)...)
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("%s: %d %s", path, res.StatusCode, b)
	}
	var evs []event
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q", line)
		}
		var ev event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		json.Unmarshal([]byte(data), &ev.raw)
		evs = append(evs, ev)
	}
	return res.Header, evs
}

// checkEvents checks the order sources, token…, done and returns the answer.
func checkEvents(t *testing.T, evs []event) string {
	t.Helper()
	if len(evs) < 3 || evs[0].Type != "sources" || evs[len(evs)-1].Type != "done" {
		t.Fatalf("events %+v", evs)
	}
	var b strings.Builder
	for _, ev := range evs[1 : len(evs)-1] {
		if ev.Type != "token" || ev.Token == nil || len(ev.raw) != 2 {
			t.Fatalf("not a token event: %+v", ev.raw)
		}
		b.WriteString(*ev.Token)
	}
	return b.String()
}

func TestAskExtractive(t *testing.T) {
	ts := startAsk(t, nil)
	const q = "Why did my job run twice after the DST change?"
	out := ts.askJSON(t, "/api/ask", q)
	if got := keys(out); !slices.Equal(got, []string{"answer", "sources", "usage"}) {
		t.Fatalf("keys %v", got)
	}
	answer := out["answer"].(string)
	if !strings.Contains(answer, "twice") || !strings.Contains(answer, "[1]") {
		t.Errorf("answer %q", answer)
	}
	sources := out["sources"].([]any)
	if len(sources) == 0 {
		t.Fatal("no sources")
	}
	for _, s := range sources {
		src := s.(map[string]any)
		if got := keys(src); !slices.Equal(got, []string{"metadata", "preview", "score", "sourceUrl", "type"}) {
			t.Fatalf("source keys %v", got)
		}
		if src["metadata"] == "" || src["preview"] == "" || !strings.HasPrefix(src["sourceUrl"].(string), "http") {
			t.Errorf("source %v", src)
		}
	}
	usage := out["usage"].(map[string]any)
	if got := keys(usage); !slices.Equal(got, []string{"completion_tokens", "prompt_tokens", "total_tokens"}) ||
		usage["completion_tokens"].(float64) <= 0 || usage["total_tokens"] != usage["prompt_tokens"].(float64)+usage["completion_tokens"].(float64) {
		t.Fatalf("usage %v", usage)
	}

	hdr, evs := ts.askSSE(t, "/api/ask", askBody(q))
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") || hdr.Get("Cache-Control") != "no-cache" {
		t.Fatalf("headers %v", hdr)
	}
	if got := checkEvents(t, evs); got != answer {
		t.Fatalf("streamed %q, JSON %q", got, answer)
	}
	if len(evs[0].Sources) != len(sources) || evs[len(evs)-1].Usage["total_tokens"] != usage["total_tokens"] {
		t.Fatalf("sources %d vs %d, usage %v vs %v", len(evs[0].Sources), len(sources), evs[len(evs)-1].Usage, usage)
	}
}

func TestAskWithModel(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("DST", "Upgrade to 2.0.1 [1]: bug #812 [2].")
	ts := startAsk(t, srv)
	r := ts.do(t, "POST", "/api/ask", askBody("Why did my job run twice after the DST change?", "We run 2.0.0.", "Noted."), jsonCT...)
	out := r.json(t)
	if r.status != 200 || out["answer"] != "Upgrade to 2.0.1 [1]: bug #812 [2]." {
		t.Fatalf("%d %v", r.status, out)
	}
	if u := out["usage"].(map[string]any); u["prompt_tokens"] != 40.0 || u["completion_tokens"] != 7.0 || u["total_tokens"] != 47.0 {
		t.Fatalf("usage from the model server: %v", u)
	}
	req := srv.Received()[len(srv.Received())-1]
	msgs := req.Body["messages"].([]any)
	sys := msgs[0].(map[string]any)["content"].(string)
	if len(msgs) != 4 || msgs[1].(map[string]any)["content"] != "We run 2.0.0." || msgs[2].(map[string]any)["role"] != "assistant" ||
		!strings.Contains(sys, "[1] ") || !strings.Contains(sys, "bug (#812)") || req.Body["stream"] != true {
		t.Fatalf("the model got %v", msgs)
	}

	_, evs := ts.askSSE(t, "/api/ask", askBody("Why did my job run twice after the DST change?"))
	if got := checkEvents(t, evs); got != "Upgrade to 2.0.1 [1]: bug #812 [2]." {
		t.Fatalf("streamed %q", got)
	}
	if u := evs[len(evs)-1].Usage; u["total_tokens"] != 47.0 {
		t.Fatalf("done usage %v", u)
	}
}

func TestAskModelFailure(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	ts := startAsk(t, srv)
	srv.Fail(500, 500, 500, 500)
	r := ts.do(t, "POST", "/api/ask", askBody("cron syntax"), jsonCT...)
	wantError(t, r, 502, "model server")
	if r.json(t)["code"] != "upstream_error" || strings.Contains(string(r.body), "127.0.0.1") {
		t.Fatalf("502 body %s", r.body)
	}
	srv.Answer("cron", "one two three four five")
	srv.FailStreamAfter(2)
	_, evs := ts.askSSE(t, "/api/ask", askBody("cron syntax"))
	last := evs[len(evs)-1]
	if evs[0].Type != "sources" || last.Type != "error" || last.Error == "" || len(evs) != 4 || *evs[1].Token != "one " {
		t.Fatalf("events %+v", evs)
	}
}

// TestAskClientGoneCancelsModel reads two events of a slow answer, hangs
// up, and waits for the model server to see the call abandoned.
func TestAskClientGoneCancelsModel(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("cron", strings.Repeat("word ", 200))
	srv.SetTokenDelay(20 * time.Millisecond)
	ts := startAsk(t, srv)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"question":"cron syntax"}`
	fmt.Fprintf(conn, "POST /api/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	rd := bufio.NewReader(conn)
	tokens := 0
	for tokens < 2 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"type":"token"`) {
			tokens++
		}
	}
	conn.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if completed, cancelled := srv.Streams(); cancelled == 1 && completed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the model call went on after the client left")
		}
	}
}

func TestAskV1(t *testing.T) {
	ts := startAsk(t, nil)
	wantError(t, ts.do(t, "POST", "/api/v1/ask", askBody("cron syntax"), jsonCT...), 401)
	out := ts.askJSON(t, "/api/v1/ask", "How do I configure the Postgres connection pool?", bearer...)
	if got := keys(out); !slices.Equal(got, []string{"answer", "sources"}) {
		t.Fatalf("v1 keys %v", got)
	}
	for _, s := range out["sources"].([]any) {
		src := s.(map[string]any)
		if got := keys(src); !slices.Equal(got, []string{"metadata", "preview", "score", "type"}) {
			t.Fatalf("v1 source keys %v", got)
		}
		// Profile B's metadata also names the platform and the date.
		if src["type"] == "message" && (!strings.Contains(src["metadata"].(string), "Wren Community Discord") || !strings.Contains(src["metadata"].(string), "2026-")) {
			t.Errorf("v1 message metadata %q", src["metadata"])
		}
	}
	_, evs := ts.askSSE(t, "/api/v1/ask", askBody("cron syntax"), bearer...)
	checkEvents(t, evs)
	if last := evs[len(evs)-1]; len(last.raw) != 1 {
		t.Fatalf("v1 done event %v", last.raw)
	}
	if _, ok := evs[0].Sources[0]["sourceUrl"]; ok {
		t.Fatal("v1 sources carry sourceUrl")
	}
}

func TestAskValidation(t *testing.T) {
	ts := start(t)
	post := func(body string, header ...string) resp {
		return ts.do(t, "POST", "/api/ask", strings.NewReader(body), header...)
	}
	wantError(t, post(`{"question":"a"}`, "Content-Type", "text/plain"), 415, "application/json")
	for body, words := range map[string][]string{
		`{"question":`:        {"body"},
		`[1,2]`:               {"body"},
		`{"question":"a"} {}`: {"body"},
		`{}`:                  {"question", "required"},
		`{"question":"  "}`:   {"question"},
		`{"question":5}`:      {"body"},
		`{"question":"` + strings.Repeat("é", 4001) + `"}`:                                                                          {"question", "4000"},
		`{"question":"a","messages":[{"role":"system","content":"x"}]}`:                                                             {"messages[0].role"},
		`{"question":"a","messages":[{"role":"user","content":"` + strings.Repeat("x", 16001) + `"}]}`:                              {"messages[0].content", "16000"},
		`{"question":"a","messages":` + "[" + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"x"},`, 101), ",") + "]}": {"messages", "100"},
	} {
		wantError(t, post(body, jsonCT...), 400, words...)
	}
	wantError(t, post(`{"question":"`+strings.Repeat("a", 300<<10)+`"}`, jsonCT...), 413)
	wantError(t, ts.do(t, "GET", "/api/ask", nil), 405)
	if r := post(`{"question":"anything at all","messages":[]}`, "Content-Type", "application/json; charset=utf-8"); r.status != 200 {
		t.Fatalf("valid question: %d %s", r.status, r.body)
	}
}

func TestAskBusy(t *testing.T) {
	srv := fakeoai.New()
	defer srv.Close()
	srv.Answer("cron", strings.Repeat("word ", 100))
	srv.SetTokenDelay(20 * time.Millisecond)
	ts := startAsk(t, srv, func(_ *Options, a *ask.Options) { a.MaxConcurrent, a.MaxQueued = 1, 1 })
	// Two slow streamed answers take the one running and the one queued place.
	for i := 0; i < 2; i++ {
		res := ts.send(t, "POST", "/api/ask", askBody("cron syntax"), "Content-Type", "application/json", "Accept", "text/event-stream")
		defer res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("stream %d: %d", i, res.StatusCode)
		}
	}
	r := ts.do(t, "POST", "/api/ask", askBody("cron syntax"), jsonCT...)
	wantError(t, r, 503, "waiting")
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
}

// FuzzAskBody feeds arbitrary bodies to POST /api/ask: never a 5xx.
func FuzzAskBody(f *testing.F) {
	ts := start(f)
	seedChat(f, ts.eng)
	h := ts.srv.Handler()
	f.Add(`{"question":"nginx raw body","messages":[{"role":"user","content":"hi"}]}`)
	f.Add(`{"question":""}`)
	f.Fuzz(func(t *testing.T, body string) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/api/ask")
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBodyString(body)
		h(&ctx)
		if st := ctx.Response.StatusCode(); st >= 500 {
			t.Fatalf("%q: status %d: %s", body, st, ctx.Response.Body())
		}
	})
}

// TestAskNothingFound asks an empty index: the sources event still carries
// its (empty) list, in both forms.
func TestAskNothingFound(t *testing.T) {
	ts := start(t)
	body := `{"question":"anything at all?"}`
	r := ts.raw(t, fmt.Sprintf("POST /api/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body))
	if r.status != 200 || !strings.Contains(string(r.body), `data: {"type":"sources","sources":[]}`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
	out := ts.askJSON(t, "/api/ask", "anything at all?")
	if s, ok := out["sources"].([]any); !ok || len(s) != 0 || out["answer"] == "" {
		t.Fatalf("%v", out)
	}
}
