package tokenizer

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// render shows tokens as "term@pos" with a flag suffix: !stop, =whole, +part.
func render(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s@%d", t.Term, t.Pos)
		if t.Flags&Stop != 0 {
			b.WriteString("!")
		}
		if t.Flags&Whole != 0 {
			b.WriteString("=")
		}
		if t.Flags&Part != 0 {
			b.WriteString("+")
		}
	}
	return b.String()
}

func TestAnalyzer(t *testing.T) {
	a := New(DefaultOptions())
	f := func(in, want string) {
		t.Helper()
		if got := render(a.Append(nil, in, 0)); got != want {
			t.Errorf("%q:\n got  %s\n want %s", in, got, want)
		}
	}
	f("", "")
	f("  ,;  ", "")
	f("Hello, World!", "hello@0! world@1")
	f("The runners were running quickly", "the@0! runner@1 were@2! run@3 quick@4")
	f("Café naïve Ærøskøbing ŁÓDŹ", "cafe@0 naiv@1 aeroskob@2 lodz@3")
	f("cafe\u0301", "cafe@0") // decomposed accent
	f("Straße", "strass@0")
	f("Привет МИР", "привет@0 мир@1")
	f("Ελληνικά", "ελληνικα@0")
	f("getUserById", "getuserbyid@0= get@0!+ user@1+ by@2!+ id@3+")
	f("snake_case_name", "snake_case_name@0= snake@0+ case@1+ name@2!+")
	f("pkg.Func()", "pkg.func@0= pkg@0+ func@1+")
	f("see path/to/file.go now", "see@0! path/to/file.go@1= path@1+ to@2!+ file@3+ go@4+ now@5!")
	f("HTTPServer", "httpserver@0= http@0+ server@1+")
	f("std::vector", "std::vector@0= std@0+ vector@1+")
	f("__init__", "__init__@0= init@0+")
	f("utf8 ipv6 v2", "utf8@0 ipv6@1 v2@2")
	f("2016-01-31", "2016@0+ 01@1+ 31@2+")
	f("high-speed e.g. U.S. zero/one", "high@0+ speed@1+ e@2!+ g@3!+ u@4!+ s@5!+ zero/one@6= zero@6!+ one@7!+")
	f("bob@example.com", "bob@example.com@0= bob@0+ example@1!+ com@2!+")
	f("https://sift.dev/docs", "https@0 sift.dev/docs@1= sift@1+ dev@2+ doc@3+")
	f("the end. Next", "the@0! end@1 next@2!")
	f("don't stop", "don't@0! stop@1")
	f("user’s guide", "user@0 guid@1")
	f("-flag --long", "flag@0 long@1")
	f("東京都", "東京@0 京都@1")
	f("日本語のテキスト", "日本@0 本語@1 語の@2 のテ@3 テキ@4 キス@5 スト@6")
	f("Go语言", "go@0 语言@1")
	f("字", "字@0")
	f("한국어 텍스트", "한국@0 국어@1 텍스@2 스트@3") // Hangul as bigrams: 재시작 is found in 재시작한
	f("ภาษาไทย", "ภา@0 าษ@1 ษา@2 าไ@3 ไท@4 ทย@5")
	f("a\xffb", "a@0! b@1!")
	f("x"+strings.Repeat("y", 200), "")
}

func TestPositionsAndOffsets(t *testing.T) {
	a := New(DefaultOptions())
	text := "Call getUserById, then café."
	toks := a.Append(nil, text, 10)
	for _, tk := range toks {
		if tk.Pos < 10 {
			t.Errorf("%q: position %d before firstPos", tk.Term, tk.Pos)
		}
		src := text[tk.Start:tk.End]
		if Fold(src) != tk.Term && tk.Flags&(Whole) == 0 && !strings.HasPrefix(Fold(src), tk.Term) {
			t.Errorf("%q: offsets point at %q", tk.Term, src)
		}
	}
	if got := NextPos(toks, 10); got != 17 {
		t.Errorf("NextPos = %d, want 17", got)
	}
	if got := NextPos(nil, 3); got != 3 {
		t.Errorf("NextPos(nil) = %d", got)
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "ÀÉÎÕÜ": "aeiou", "Ångström": "angstrom", "ǅ": "ǆ",
		"Việt Nam": "viet nam", "İstanbul": "istanbul", "ΣΊΣΥΦΟΣ": "σισυφοσ",
		"it’s": "it's",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStemCacheBounded(t *testing.T) {
	a := New(Options{Stem: true, StemCacheSize: 8})
	for i := 0; i < 100; i++ {
		a.Append(nil, fmt.Sprintf("Walking%c talked%c", 'a'+i%26, 'a'+i/26), 0)
		if a.stems.len() > 8 || a.folds.len() > 8 {
			t.Fatalf("cache grew to %d/%d entries", a.stems.len(), a.folds.len())
		}
	}
}

func TestNoStem(t *testing.T) {
	a := New(Options{Stem: false})
	if got := render(a.Append(nil, "Running", 0)); got != "running@0" {
		t.Errorf("got %s", got)
	}
}

func FuzzAnalyzer(f *testing.F) {
	for _, s := range []string{"getUserById", "path/to/file.go", "東京都 café", "a\xffb::c", "x.-y", "’s"} {
		f.Add(s)
	}
	a := New(DefaultOptions())
	f.Fuzz(func(t *testing.T, s string) {
		toks := a.Append(nil, s, 0)
		var last uint32
		for i, tk := range toks {
			if tk.Start < 0 || tk.End > int32(len(s)) || tk.Start >= tk.End {
				t.Fatalf("token %d %q: bad offsets [%d,%d) in %d bytes", i, tk.Term, tk.Start, tk.End, len(s))
			}
			if tk.Term == "" || !utf8.ValidString(tk.Term) {
				t.Fatalf("token %d: bad term %q", i, tk.Term)
			}
			if tk.Pos < last {
				t.Fatalf("token %d %q: position %d goes back from %d", i, tk.Term, tk.Pos, last)
			}
			last = tk.Pos
		}
		// Analysis is deterministic, cache or not.
		if again := New(DefaultOptions()).Append(nil, s, 0); render(again) != render(toks) {
			t.Fatalf("cached and fresh analyzers disagree:\n%s\n%s", render(toks), render(again))
		}
	})
}

func BenchmarkAnalyzer(b *testing.B) {
	text := "Has anyone seen `wren job add` fail with error: lock not acquired? I set max_attempts: 5 in wren.yaml and the retries still pile up on the queue after the DST change."
	a := New(DefaultOptions())
	var toks []Token
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		toks = a.Append(toks[:0], text, 0)
	}
}
