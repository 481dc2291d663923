package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeArgs(t *testing.T) {
	for _, c := range []struct {
		tool, raw, want string
		v               any
	}{
		{"search", `{"q":"retry","limit":5}`, "", &SearchArgs{}},
		{"search", ``, "", &SearchArgs{}},
		{"search", `null`, "", &SearchArgs{}},
		{"search", `{"limit":"five"}`, "limit must be an integer from 1 to 100", &SearchArgs{}},
		{"semantic_search", `{"max_chars":1.5}`, "max_chars must be an integer from 200 to 10000", &SemanticArgs{}},
		{"semantic_search", `{"hyde":"yes"}`, "hyde: expected true or false", &SemanticArgs{}},
		{"ask", `{"messages":{}}`, "messages: expected an array", &AskArgs{}},
		{"read_document", `[1,2]`, "arguments: not a JSON object of read_document's arguments", &ReadDocumentArgs{}},
		{"read_channel", `{"channel":`, "arguments: not a JSON object", &ReadChannelArgs{}},
	} {
		err := decodeArgs(c.tool, json.RawMessage(c.raw), c.v)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.tool, c.raw, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: %v, want %q", c.tool, c.raw, err, c.want)
		}
	}
}

// FuzzDecodeArgs: any arguments decode or get an error in words, never a
// panic, for every tool's argument type.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{`{"q":"x","limit":3}`, `{"messages":[{"role":"user","content":"hi"}]}`, `{"offset":-1}`, `{"limit":1e99}`, `"x"`, ``, `{"boost":{"a":2}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for tool, v := range map[string]any{"search": &SearchArgs{}, "semantic_search": &SemanticArgs{}, "ask": &AskArgs{},
			"read_document": &ReadDocumentArgs{}, "read_channel": &ReadChannelArgs{}, "list_sources": &ListSourcesArgs{}} {
			if err := decodeArgs(tool, json.RawMessage(raw), v); err != nil && err.Error() == "" {
				t.Fatalf("%s: an error without words", tool)
			}
		}
	})
}
