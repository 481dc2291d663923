package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAskCorrectsTypos: sift serve's extractive answerer reads a question
// with typos as full-text search does — "rotaet the webhok secret" is
// answered as "rotate the webhook secret" would be.
func TestAskCorrectsTypos(t *testing.T) {
	p := startSiftEnv(t, t.TempDir(), nil, "--demo")
	defer p.kill()
	for _, q := range []string{"How do I rotate the webhook secret?", "How do I rotaet the webhok secret?"} {
		status, b := p.request(t, "POST", "/api/ask", `{"question": "`+q+`"}`, "Content-Type", "application/json")
		var ans struct{ Answer string }
		if err := json.Unmarshal(b, &ans); err != nil || status != 200 {
			t.Fatalf("%s: %d %s", q, status, b)
		}
		if !strings.Contains(ans.Answer, "previous_secret") {
			t.Errorf("%s: %s", q, ans.Answer)
		}
	}
}
