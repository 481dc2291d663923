package mdtext

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlain(t *testing.T) {
	f := func(name, md, want string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			if got := Plain(md); got != want {
				t.Errorf("Plain(%q)\n got %q\nwant %q", md, got, want)
			}
		})
	}
	f("empty", "", "")
	f("headings", "# Installing Heron\n\nIntro text.\n\n## Raspberry Pi ##\n\nSetext\n------\n", "Installing Heron\nIntro text.\nRaspberry Pi\nSetext")
	f("emphasis", "Some **bold**, _italic_, *em*, __strong__ and ~~struck~~ words.", "Some bold, italic, em, strong and struck words.")
	f("soft breaks", "one\ntwo  \nthree\\\nfour", "one two\nthree\nfour")
	f("links", "See [the guide](guide.md#step-2 \"Guide\") and <https://example.com/x> or [ref][r].\n\n[r]: https://example.com", "See the guide and https://example.com/x or ref.")
	f("images", "Logo: ![the logo](logo.png) here.\n\n![only](x.png)\n\nAfter.", "Logo: here.\nAfter.")
	f("inline code", "Run `wren doctor` now; `**not bold**`.", "Run wren doctor now; **not bold**.")
	f("fenced code", "Before:\n\n```sh\n$ wren doctor\n  checks   \n```\n\nAfter.", "Before:\n$ wren doctor\n  checks\nAfter.")
	f("indented code", "Text.\n\n    code line\n    second\n\nMore.", "Text.\ncode line\nsecond\nMore.")
	f("table", "| Flag | Meaning |\n|------|:-------:|\n| `-v` | **verbose** |\n| -q | quiet \\| silent |\n", "Flag · Meaning\n-v · verbose\n-q · quiet | silent")
	f("table with heading", "## Options\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEnd.", "Options\na · b\n1 · 2\nEnd.")
	f("empty cells", "| a | | c | |\n|---|---|---|---|\n| | b | | |\n", "a · c\nb")
	f("nested lists", "- one\n- two\n  - two a\n  - two b\n    1. deep\n- [x] done\n- [ ] todo\n\n3. three\n", "one\ntwo\ntwo a\ntwo b\ndeep\ndone\ntodo\nthree")
	f("loose list", "* a\n\n* b\n", "a\nb")
	f("quote", "> quoted **text**\n> more\n\nafter", "quoted text more\nafter")
	f("html", "<div class=\"x\">\n<p>hidden</p>\n</div>\n\nText <b>bold</b> &amp; &copy; &#65;.", "Text bold & © A.")
	f("escapes", "Not \\*emphasis\\* and \\# hash and \\[x\\](y)", "Not *emphasis* and # hash and [x](y)")
	f("thematic break", "a\n\n---\n\nb", "a\nb")
	f("script", "<script>alert(1)</script>\n\nok", "ok")
}

func TestPlainLine(t *testing.T) {
	f := func(md string, max int, want string) {
		t.Helper()
		if got := PlainLine(md, max); got != want {
			t.Errorf("PlainLine(%q, %d) = %q, want %q", md, max, got, want)
		}
	}
	f("# Title\n\nA **short** text.", 100, "Title A short text.")
	f("# Title\n\nA **short** text.", 16, "Title A short…")
	f("# Title\n\nA **short** text.", 14, "Title A…")
	f("abcdefghijkl", 8, "abcde…")
	f("日本語の文章です", 10, "日本…")
	f("abc", 2, "ab")
	f("abc", -1, "")
	f("**Long** "+strings.Repeat("word ", 10000), 20, "Long word word…")
}

// plainCorpus is Markdown of the kinds documents hold, for the fuzz seeds
// and the benchmark.
var plainCorpus = []string{
	"# Installing Heron\n\n## Raspberry Pi\n\nInstall with `apt install heron`:\n\n```sh\nsudo apt install heron\n```\n",
	"| Flag | Meaning |\n|---|---|\n| `-v` | **verbose** |\n",
	"- one\n  - [two](two.md#x)\n    1. ![img](i.png)\n",
	"<div>raw</div>\n\n> quote *em* ~~s~~ &amp; \\*\n\n---\n",
	"Setext\n===\n\n    indented\n\n[ref]: http://x\n[ref] <http://a.b>",
	"*a **b _c ~~d `e",
	"|",
	"- [ ] \n",
}

func FuzzPlain(f *testing.F) {
	for _, s := range plainCorpus {
		f.Add(s, 40)
	}
	f.Add("# a", -140)
	f.Fuzz(func(t *testing.T, md string, max int) {
		p := Plain(md)
		if utf8.ValidString(md) && !utf8.ValidString(p) {
			t.Fatalf("Plain(%q) = %q: not UTF-8", md, p)
		}
		if strings.HasSuffix(p, "\n") || strings.Contains(p, " \n") {
			t.Fatalf("Plain(%q) = %q: trailing space or line", md, p)
		}
		max = max%1000 + 1
		if l := PlainLine(md, max); len(l) > max && max >= len("…") || strings.Contains(l, "\n") || utf8.ValidString(md) && !utf8.ValidString(l) {
			t.Fatalf("PlainLine(%q, %d) = %q", md, max, l)
		}
	})
}

func BenchmarkPlain(b *testing.B) {
	for _, size := range []int{1 << 10, 16 << 10, 256 << 10} {
		var sb strings.Builder
		for i := 0; sb.Len() < size; i++ {
			sb.WriteString(plainCorpus[i%len(plainCorpus)])
			sb.WriteString("\n\nA paragraph of ordinary prose with a [link](x.md) and **some** words.\n\n")
		}
		md := sb.String()
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(md)))
			for b.Loop() {
				Plain(md)
			}
		})
	}
}

// TestTooDeep: Markdown nested past MaxDepth — block quotes, lists by
// marker or by indentation, brackets — is plain text, cheaply; real
// documents are not.
func TestTooDeep(t *testing.T) {
	nestedList := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(strings.Repeat("  ", i) + "- x\n")
		}
		return b.String()
	}
	for src, want := range map[string]bool{
		strings.Repeat(">", 50_000) + " x":                                 true,
		strings.Repeat("> ", 50_000) + "x":                                 true,
		strings.Repeat("- ", 50_000) + "x":                                 true,
		strings.Repeat("1. ", 50_000) + "x":                                true,
		nestedList(500):                                                    true,
		strings.Repeat("[", 50_000) + "x" + strings.Repeat("](u)", 50_000): true,
		nestedList(10):                                                     false,
		"> quote\n> > nested\n\n- a\n  - b\n    - c\n":                     false,
		"    code block\n        deeper code\n":                            false,
		"[a] [b] [c] " + strings.Repeat("[x](y) ", 1000):                   false,
		"1999. was a year\n2. item":                                        false,
	} {
		if got := TooDeep(src); got != want {
			t.Errorf("TooDeep(%.40q…) = %v, want %v", src, got, want)
		}
	}
	// A deep text costs what its size costs.
	src := nestedList(5000)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	Plain(src)
	runtime.ReadMemStats(&m1)
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 4*uint64(len(src)) {
		t.Errorf("Plain of a 25 MB list nested 5,000 deep allocated %d MB", alloc>>20)
	}
}

func FuzzTooDeep(f *testing.F) {
	f.Add("> > - 1. x")
	f.Add("[[[a]]]")
	f.Fuzz(func(t *testing.T, src string) {
		if TooDeep(src) {
			if got := Plain(src); len(got) > len(src)*3+3 {
				t.Fatalf("plain fallback of %q grew to %d bytes", src, len(got))
			}
		}
	})
}
