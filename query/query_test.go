package query

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseQuery(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }
	f := func(in string, want ParsedQuery) {
		t.Helper()
		got, err := ParseQuery(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got  %+v\n want %+v", in, got, want)
		}
	}
	f("", ParsedQuery{})
	f("  webhook   signature ", ParsedQuery{Text: "webhook signature"})
	f(`"raw body" verify`, ParsedQuery{Text: "verify", Phrases: []string{"raw body"}})
	f(`-nginx -"reverse proxy" x`, ParsedQuery{Text: "x", Exclude: []string{"nginx"}, ExcludePhrases: []string{"reverse proxy"}})
	f(`from:ana channel:help source:wren in:general`, ParsedQuery{From: "ana", Channel: "general", Source: "wren"})
	f(`from:"Ana K" cron`, ParsedQuery{Text: "cron", From: "Ana K"})
	f(`after:2024-01-02 before:2024-02-01`, ParsedQuery{After: day("2024-01-02"), Before: day("2024-02-01")})
	f(`error:timeout FROM:bo`, ParsedQuery{Text: "error:timeout", From: "bo"})
	f(`"unclosed phrase`, ParsedQuery{Phrases: []string{"unclosed phrase"}})
	f(`""  -  - x`, ParsedQuery{Text: "- - x"})
	f(`from: x`, ParsedQuery{Text: "from: x"})
	f("a\u3000-\u3000b", ParsedQuery{Text: "a b"})
	for _, bad := range []string{"after:yesterday", "before:2024-13-01", "\xff", strings.Repeat("a", MaxQueryBytes+1)} {
		if _, err := ParseQuery(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`a "b c" -d -"e f" from:"g h" after:2024-01-01`, `"`, `-`, `from:"`, "x\u3000-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		for _, part := range append(append([]string{q.Text, q.From, q.Channel, q.Source}, q.Phrases...), q.Exclude...) {
			if !utf8.ValidString(part) || len(part) > len(s) {
				t.Fatalf("bad part %q of %q", part, s)
			}
		}
	})
}

func TestSplitQuery(t *testing.T) {
	parts := SplitQuery(`retry "exit code" -docker -"dead letter" from:"Ana K" in:help source: x:y -from:bo`)
	var got []string
	for _, p := range parts {
		got = append(got, p.Raw+"|"+string(rune('0'+p.Kind))+"|"+p.Key+"|"+p.Value)
	}
	want := []string{"retry|0||retry", `"exit code"|1||exit code`, "-docker|2||docker", `-"dead letter"|3||dead letter`,
		`from:"Ana K"|4|from|Ana K`, "in:help|4|in|help", "source:|0||source:", "x:y|0||x:y", "-from:bo|2||from:bo"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parts\n got %q\nwant %q", got, want)
	}
}
