package oai

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorMessageShapes(t *testing.T) {
	long := strings.Repeat("é", 400)
	for body, want := range map[string]string{
		`{"error":{"message":"model not found","type":"not_found_error"}}`:            "model not found",
		`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`: "Loading model",
		`{"object":"error","message":"bad input","code":400}`:                         "bad input",
		`{"error":"plain string"}`:                                                    "plain string",
		`upstream exploded`:                                                           "upstream exploded",
		"  \n":                                                                        "(empty body)",
		``:                                                                            "(empty body)",
		`{"error":{"message":"` + long + `"}}`:                                        strings.Repeat("é", maxMessage/2) + "…",
		"bad \xff byte":                                                               "bad \uFFFD byte",
	} {
		if got := ErrorMessage([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434":     "http://localhost:11434/v1",
		"http://localhost:11434/":    "http://localhost:11434/v1",
		"http://localhost:11434/v1/": "http://localhost:11434/v1",
		"https://api.example.com/v1": "https://api.example.com/v1",
	} {
		if got := BaseURL(in); got != want {
			t.Errorf("BaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzErrorMessage: any error body gives a short, valid, non-empty message.
func FuzzErrorMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"x"}}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`{"message":""}`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg := ErrorMessage(body)
		if msg == "" || len(msg) > maxMessage+len("…") || !utf8.ValidString(msg) {
			t.Fatalf("%q -> %q", body, msg)
		}
	})
}

// TestErrorMessageScrubbed: a server that echoes the key it refused, or
// anything key-like, does not get it into Sift's errors and logs.
func TestErrorMessageScrubbed(t *testing.T) {
	key := "local-ollama-key-2731"
	for body, want := range map[string]string{
		`{"error":{"message":"Incorrect API key provided: local-ollama-key-2731."}}`: "Incorrect API key provided: [redacted].",
		`{"error":"invalid token sk-proj-abcDEF123456"}`:                             "invalid token [redacted]",
		`unauthorized: Bearer abc.def.ghi was refused`:                               "unauthorized: [redacted] was refused",
		`{"message":"bad key 0123456789abcdefABCDEF0123456789"}`:                     "bad key [redacted]",
		`{"error":{"message":"model text-embedding-3-small not found"}}`:             "model text-embedding-3-small not found",
	} {
		if got := ErrorMessage([]byte(body), key); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}
