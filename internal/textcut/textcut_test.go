package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"}, // é is two bytes
		{"aé", 3, "aé"},
		{"日本", 4, "日"},
		{"日本", 2, ""},
		{"abc", 0, ""},
		{"abc", -1, ""},
	} {
		if got := Prefix(c.s, c.n); got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func FuzzPrefix(f *testing.F) {
	f.Add("héllo wörld 日本", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		p := Prefix(s, n)
		if len(p) > max(n, 0) && len(p) != len(s) || !strings.HasPrefix(s, p) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
		if utf8.ValidString(s) && (!utf8.ValidString(p) || len(s) > n && n >= 0 && n-len(p) >= utf8.UTFMax) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
	})
}
