package chunk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func checkSpans(t *testing.T, name, text string, spans []Span) {
	t.Helper()
	covered := make([]bool, len(text))
	for i, s := range spans {
		if s.Start < 0 || s.End > len(text) || s.Start >= s.End {
			t.Fatalf("%s: span %d [%d,%d) out of range", name, i, s.Start, s.End)
		}
		if !utf8.ValidString(text[s.Start:s.End]) {
			t.Fatalf("%s: span %d splits a character", name, i)
		}
		if n := s.End - s.Start; n > MaxBytes+OverlapBytes+200 {
			t.Errorf("%s: span %d is %d bytes", name, i, n)
		}
		if i > 0 && s.Start < spans[i-1].Start {
			t.Errorf("%s: span %d starts before the previous one", name, i)
		}
		for j := s.Start; j < s.End; j++ {
			covered[j] = true
		}
	}
	end := 0 // headings after the last chunk may be left out
	if len(spans) > 0 {
		end = spans[len(spans)-1].End
	}
	for i, c := range covered {
		if !c && !strings.ContainsRune(" \n\t", rune(text[i])) && (i < end || !HeadingsOnly(text[end:])) {
			t.Fatalf("%s: byte %d (%q) in no chunk", name, i, text[max(0, i-20):min(len(text), i+20)])
		}
	}
}

func TestSplitDocument(t *testing.T) {
	files, _ := filepath.Glob("../../internal/demo/docs/*.md")
	if len(files) == 0 {
		t.Fatal("no demo docs")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		spans := SplitDocument(string(b))
		checkSpans(t, f, string(b), spans)
		if len(spans) < 2 {
			t.Errorf("%s: %d chunks", f, len(spans))
		}
	}
	text := "# Title\n\nIntro paragraph.\n\n## Setup\n\n```yaml\nretry:\n\n  max_attempts: 5\n```\n\nAfter the code.\n"
	spans := SplitDocument(text)
	checkSpans(t, "small", text, spans)
	if len(spans) != 2 || spans[1].Heading != "Setup" || !strings.Contains(text[spans[1].Start:spans[1].End], "max_attempts: 5\n```\n\nAfter") {
		t.Fatalf("headings and fences: %+v", spans)
	}
	long := strings.Repeat("A sentence of some length goes here. ", 100) + strings.Repeat("x", 3000) + " é"
	spans = SplitDocument(long)
	checkSpans(t, "long", long, spans)
	if len(spans) < 4 {
		t.Fatalf("long text in %d chunks", len(spans))
	}
	if !strings.HasPrefix(long[spans[1].Start:], "A sentence") {
		t.Errorf("overlap does not start at a sentence: %q", long[spans[1].Start:spans[1].Start+30])
	}
	// A heading and an intro line are not a chunk of their own when the
	// list they introduce is too long to join them whole.
	var list strings.Builder
	list.WriteString("## Why it fails\n\nIf verification fails for every request, it is nearly always one of the causes below, roughly in the order support sees them, one of these:\n\n")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&list, "- **Cause %d.** A line of explanation that runs on for a while, like a real one.\n", i)
	}
	text = list.String()
	spans = SplitDocument(text)
	checkSpans(t, "intro and list", text, spans)
	if first := text[spans[0].Start:spans[0].End]; len(spans) < 2 || !strings.Contains(first, "one of these:") || !strings.Contains(first, "Cause 0.") {
		t.Errorf("the intro stands alone: %q", first)
	}
	// Overlaps start after a space of more than one byte, not inside it.
	for _, sep := range []string{"\u00a0", "\u3000", "\u2003"} {
		text := strings.Repeat("wörd"+sep, 900)
		checkSpans(t, "separator "+sep, text, SplitDocument(text))
	}
	if got := SplitDocument("   \n\n  "); len(got) != 0 {
		t.Errorf("blank text: %+v", got)
	}
}

// TestHeadingOnlyChunks: a heading with nothing under it is no chunk of its
// own; it leads the next section's chunk, or is left out at the end.
func TestHeadingOnlyChunks(t *testing.T) {
	text := "# FAQ\n\n## General\n\n**Is it free?**\nYes.\n\n## Last\n\nEnd.\n\n## Empty\n"
	spans := SplitDocument(text)
	checkSpans(t, "headings", text, spans)
	var got []string
	for _, s := range spans {
		got = append(got, s.Heading+"="+text[s.Start:s.End])
		if HeadingsOnly(text[s.Start:s.End]) {
			t.Errorf("heading-only chunk %q", text[s.Start:s.End])
		}
	}
	want := []string{"General=# FAQ\n\n## General\n\n**Is it free?**\nYes.\n", "Last=## Last\n\nEnd.\n"}
	if !slices.Equal(got, want) {
		t.Errorf("chunks %q, want %q", got, want)
	}
	if spans := SplitDocument("# Only a title\n"); len(spans) != 0 {
		t.Errorf("a lone title: %+v", spans)
	}
	if HeadingsOnly("## A\n\ntext") || !HeadingsOnly("## A\n\n### B\n") {
		t.Error("headingsOnly")
	}
}

func FuzzSplitDocument(f *testing.F) {
	f.Add("# T\n\npara\n\n```\ncode\n\n```\n" + strings.Repeat("word ", 500))
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		checkSpans(t, "fuzz", text, SplitDocument(text))
	})
}
