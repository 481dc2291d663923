// Package fakeoai is a local stand-in for an OpenAI-compatible API server,
// for tests: POST /v1/embeddings and POST /v1/chat/completions with the real
// request and response shapes, an unknown field in every object (so strict
// decoders fail), results out of order, and scripted failures.
package fakeoai

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake OpenAI-compatible server.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	dims     int               // of the embeddings; 8 by default
	failures []int             // statuses to answer, one per request, before succeeding
	answers  map[string]string // chat answers by a substring of the last user message
	refuse   string            // embeddings requests with an input containing this answer 400
	held     chan struct{}     // while not nil, embeddings requests wait for it to close
	Requests []Request         // every request received

	tokenDelay time.Duration // between the pieces of a streamed answer
	failAfter  int           // a streamed answer sends an error event after this many pieces; < 0 = never
	cancelled  int           // streamed answers the client abandoned
	streamed   int           // streamed answers completed
}

// Request is what the server received.
type Request struct {
	Path  string
	Auth  string
	Body  map[string]any
	Input []string
}

// New starts a server; Close it when done.
func New() *Server {
	s := &Server{dims: 8, answers: map[string]string{}, failAfter: -1}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.Server = httptest.NewServer(mux)
	return s
}

// Fail makes the next requests answer these statuses, in order.
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, statuses...)
}

// SetDims changes the size of the embeddings, as a changed model would.
func (s *Server) SetDims(d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dims = d
}

// Refuse makes embeddings requests with an input containing substr answer
// 400, as servers do for an input longer than the model's context.
func (s *Server) Refuse(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = substr
}

// Hold makes embeddings requests wait until Release.
func (s *Server) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(chan struct{})
	}
}

// Release lets held requests, and later ones, through.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		close(s.held)
		s.held = nil
	}
}

// SetTokenDelay makes streamed answers wait d before each piece.
func (s *Server) SetTokenDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenDelay = d
}

// FailStreamAfter makes streamed answers send an error event, as vLLM
// does, after n pieces; n < 0 turns it off.
func (s *Server) FailStreamAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAfter = n
}

// Streams returns how many streamed answers were completed and how many
// the client abandoned before the end.
func (s *Server) Streams() (completed, cancelled int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streamed, s.cancelled
}

// Answer sets the chat completion for user messages containing substr.
func (s *Server) Answer(substr, answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[substr] = answer
}

// Received returns a copy of the requests so far.
func (s *Server) Received() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.Requests...)
}

// Vector is the embedding the server gives text: deterministic, unit length.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		v[x%uint64(dims)] += 1
		v[(x>>20)%uint64(dims)] += 0.5
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

// begin records the request and answers a scripted failure if one is due.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, 400)
		return nil, false
	}
	s.mu.Lock()
	req := Request{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body}
	if in, ok := body["input"].([]any); ok {
		for _, x := range in {
			str, _ := x.(string)
			req.Input = append(req.Input, str)
		}
	}
	s.Requests = append(s.Requests, req)
	var status int
	if len(s.failures) > 0 {
		status, s.failures = s.failures[0], s.failures[1:]
	}
	s.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		if status == 429 {
			w.Header().Set("Retry-After", "0")
		}
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "scripted failure", "type": "api_error", "code": status}})
		return nil, false
	}
	return body, true
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, ok := s.begin(w, r)
	if !ok {
		return
	}
	var inputs []string
	switch in := body["input"].(type) {
	case string:
		inputs = []string{in}
	case []any:
		for _, x := range in {
			str, _ := x.(string)
			inputs = append(inputs, str)
		}
	}
	s.mu.Lock()
	dims, refuse, held := s.dims, s.refuse, s.held
	s.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
			return
		}
	}
	for _, in := range inputs {
		if refuse != "" && strings.Contains(in, refuse) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"message":"input is too large to process. increase the physical batch size","type":"invalid_request_error"}}`))
			return
		}
	}
	data := make([]map[string]any, 0, len(inputs))
	for i := len(inputs) - 1; i >= 0; i-- { // reversed: clients must order by index
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": Vector(inputs[i], dims), "extra": true})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": body["model"], "unknown_field": 1,
		"usage": map[string]any{"prompt_tokens": len(inputs), "total_tokens": len(inputs)},
	})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, ok := s.begin(w, r)
	if !ok {
		return
	}
	last := ""
	if msgs, ok := body["messages"].([]any); ok {
		for _, m := range msgs {
			if mm, ok := m.(map[string]any); ok && mm["role"] == "user" {
				last, _ = mm["content"].(string)
			}
		}
	}
	answer := "I do not know."
	s.mu.Lock()
	for sub, a := range s.answers {
		if strings.Contains(last, sub) {
			answer = a
		}
	}
	s.mu.Unlock()
	if body["stream"] == true {
		s.stream(w, r, body, answer)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "c1", "object": "chat.completion", "created": 1, "model": body["model"], "unknown_field": true,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}

// Raw is a server answering every request with status 200 and the body
// last given to Set, as is: for fuzzing what clients make of answers.
type Raw struct {
	*httptest.Server
	body  atomic.Value // []byte
	ctype atomic.Value // string
}

// NewRaw starts a Raw server; Close it when done.
func NewRaw() *Raw {
	r := &Raw{}
	r.body.Store([]byte{})
	r.ctype.Store("application/json")
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", r.ctype.Load().(string))
		w.Write(r.body.Load().([]byte))
	}))
	return r
}

// Set makes b the answer to the next requests.
func (r *Raw) Set(b []byte) { r.body.Store(b) }

// SetContentType makes ct the answers' Content-Type (application/json
// until set).
func (r *Raw) SetContentType(ct string) { r.ctype.Store(ct) }

// stream answers a chat completion as server-sent events the way OpenAI
// does: a comment, one chunk per word (the first with the role, the last
// with finish_reason), the usage chunk with empty choices when
// stream_options.include_usage is set, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, body map[string]any, answer string) {
	s.mu.Lock()
	delay, failAfter := s.tokenDelay, s.failAfter
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	abandoned := func() {
		s.mu.Lock()
		s.cancelled++
		s.mu.Unlock()
	}
	io.WriteString(w, ": stream starts\n\n")
	pieces := strings.SplitAfter(answer, " ")
	for i, p := range pieces {
		if delay > 0 {
			select {
			case <-r.Context().Done():
				abandoned()
				return
			case <-time.After(delay):
			}
		}
		if i == failAfter {
			send(map[string]any{"error": map[string]any{"message": "scripted failure mid-stream", "type": "api_error", "code": 500}})
			return
		}
		delta := map[string]any{"content": p}
		if i == 0 {
			delta["role"] = "assistant"
		}
		var finish any
		if i == len(pieces)-1 {
			finish = "stop"
		}
		if !send(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}) || r.Context().Err() != nil {
			abandoned()
			return
		}
	}
	if opts, _ := body["stream_options"].(map[string]any); opts["include_usage"] == true {
		n := len(pieces)
		send(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body["model"], "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 40, "completion_tokens": n, "total_tokens": 40 + n}})
	}
	io.WriteString(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
	s.mu.Lock()
	s.streamed++
	s.mu.Unlock()
}
