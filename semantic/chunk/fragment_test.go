package chunk

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// parseDirective splits a #:~:text= directive per the WICG algorithm.
func parseDirective(t *testing.T, frag string) (prefix, start, end string) {
	t.Helper()
	d, ok := strings.CutPrefix(frag, "#:~:text=")
	if !ok {
		t.Fatalf("fragment %q", frag)
	}
	parts := strings.Split(d, ",")
	dec := func(s string) string {
		u, err := url.PathUnescape(s)
		if err != nil {
			t.Fatalf("bad escape in %q", frag)
		}
		return u
	}
	if strings.HasSuffix(parts[0], "-") {
		prefix, parts = dec(strings.TrimSuffix(parts[0], "-")), parts[1:]
	}
	start = dec(parts[0])
	if len(parts) > 1 {
		end = dec(parts[1])
	}
	for _, p := range parts {
		for _, c := range []string{" ", "-", ",", "&"} {
			if strings.Contains(p, c) {
				t.Fatalf("%q left unencoded in %q", c, frag)
			}
		}
	}
	return prefix, start, end
}

// TestTextFragmentsLocateTheirChunk finds each chunk's directive in its
// document as a browser would: the first occurrence of prefix+start (or
// start), then end after it; the match must fall inside the chunk.
func TestTextFragmentsLocateTheirChunk(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "Sentence %d of the first part. ", i)
	}
	b.WriteString("Each node opens the pool.\n\n## Limits\n\n")
	for i := 0; i < 70; i++ {
		fmt.Fprintf(&b, "Limit line %d, with a clause. ", i)
	}
	b.WriteString("Then, again: Each node opens the pool. Tail words end here.")
	content := b.String()
	for _, sp := range SplitDocument(content) {
		frag := TextFragment(content, sp.Start, sp.End)
		prefix, start, end := parseDirective(t, frag)
		at := strings.Index(content, start)
		if prefix != "" {
			if at = strings.Index(content, prefix+" "+start); at >= 0 {
				at += len(prefix) + 1
			}
		}
		if at < sp.Start || at >= sp.End {
			t.Fatalf("chunk [%d,%d): %q matches at %d", sp.Start, sp.End, frag, at)
		}
		if end != "" {
			if e := strings.Index(content[at:], end); e < 0 || at+e+len(end) > sp.End {
				t.Fatalf("chunk [%d,%d): end of %q not inside", sp.Start, sp.End, frag)
			}
		}
	}
	repeated := "alpha beta gamma delta. Then x, alpha beta gamma delta end"
	at := strings.LastIndex(repeated, "alpha")
	if got := TextFragment(repeated, at, len(repeated)); got != "#:~:text=delta.%20Then%20x%2C-,alpha%20beta%20gamma%20delta" {
		t.Errorf("repeated start text: %s", got)
	}
	// Markdown marks do not show on the rendered page: never a prefix.
	md := "Retry the job now.\n\n## Retry the job\n\nmore"
	at = strings.LastIndex(md, "Retry")
	if got := TextFragment(md, at, len(md)); strings.Contains(got, "%23") || strings.Contains(got, "-,") {
		t.Errorf("a heading's passage: %s", got)
	}
	if got := encodeDirective("a-b, c&d%é~"); got != "a%2Db%2C%20c%26d%25%C3%A9~" {
		t.Errorf("encoding: %s", got)
	}
}
