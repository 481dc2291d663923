package mdtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainChat(t *testing.T) {
	f := func(name, msg, want string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			if got := PlainChat(msg); got != want {
				t.Errorf("PlainChat(%q)\n got %q\nwant %q", msg, got, want)
			}
		})
	}
	f("plain", "just text, with max_attempts and 2*3", "just text, with max_attempts and 2*3")
	f("code", "delay is `min(backoff × 2^(k-1), max_backoff)` so", "delay is min(backoff × 2^(k-1), max_backoff) so")
	f("fence", "Table here: ```yaml\nretry:\n  max_attempts: 3\n``` done", "Table here: retry:\n  max_attempts: 3\ndone")
	f("fence alone", "```\nwren doctor\n```", "wren doctor")
	f("unclosed fence", "look ```here", "look here")
	f("emphasis", "**bold**, ~~gone~~, ||spoiler|| and _it_", "bold, gone, spoiler and _it_")
	f("quote and headings", "> quoted\n>>> long quote\n## Heading\n-# small\n>\nnext", "quoted\nlong quote\nHeading\nsmall\n\nnext")
	f("masked link", "see [the **docs**](https://x.example/a_(b) now", "see the docs now")
	f("not a link", "a [b] (c) and [x](not a url)", "a [b] (c) and [x](not a url)")
	f("slack links", "<https://x.example|the site> and <https://y.example> and <@U123>", "the site and https://y.example and <@U123>")
	f("table", "| Flag | Meaning |\n|---|:---:|\n| -v | **verbose** |", "Flag · Meaning\n-v · verbose")
}

func FuzzPlainChat(f *testing.F) {
	for _, s := range []string{
		"Table here: ```yaml\nretry:\n  max_attempts: 3\n``` `x` **b** ~~s~~ ||p||",
		"> q\n## h\n| a | b |\n|---|---|\n[t](https://x) <https://y|z>",
		"```", "`", "[](", "<https://", "|x|", "``` ```\n```",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		p := PlainChat(msg)
		if strings.Contains(p, "`") || utf8.ValidString(msg) && !utf8.ValidString(p) {
			t.Fatalf("PlainChat(%q) = %q", msg, p)
		}
	})
}

func BenchmarkPlainChat(b *testing.B) {
	msg := "…±20% jitter by default. The delay before retry k is `min(backoff × 2^(k-1), max_backoff)`, so with `backoff: 1m` you get ~1m, ~2m, ~4m… capped at **`max_backoff`** (default 5m). Table here: ```yaml\nretry:\n  max_attempts: 3\n``` see [docs](https://x.example)"
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		PlainChat(msg)
	}
}
