package insights

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	f("", "")
	f("   ", "")
	f("webhook signature", "webhook signature")
	f("  Webhook   SIGNATURE\t\n", "webhook signature")
	f("Ünïcode ÉTÉ", "ünïcode été")
	f("a\x00b\x1fc", "a b c")
	f("tab\there", "tab here")
	f("non\u00a0breaking", "non breaking")
	f("bad \xff byte", "bad \ufffd byte")
	f(`"exact phrase" from:Ana`, `"exact phrase" from:ana`)
	f(strings.Repeat("x", MaxRunes+50), strings.Repeat("x", MaxRunes))
	f(strings.Repeat("é", MaxRunes+1), strings.Repeat("é", MaxRunes))
	f(strings.Repeat("ab ", 100), strings.TrimSpace(strings.Repeat("ab ", 67)))
	f(strings.Repeat("abc ", 60), strings.TrimSpace(strings.Repeat("abc ", 50))) // the cut falls on a space: trimmed
	f(strings.Repeat(" ", 1000)+"late", "late")
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"Hello  World", "  ", "日本語 テキスト", "a\xffb", strings.Repeat("Ab ", 90)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) || utf8.RuneCountInString(n) > MaxRunes || strings.TrimSpace(n) != n ||
			strings.Contains(n, "  ") || Normalize(n) != n {
			t.Fatalf("Normalize(%q) = %q", s, n)
		}
	})
}

func BenchmarkNormalize(b *testing.B) {
	for _, in := range []string{"webhook signature", "Why did my job run TWICE after the DST change?"} {
		b.Run(in[:7], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Normalize(in)
			}
		})
	}
}
