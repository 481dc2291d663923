package engine

import (
	"reflect"
	"slices"
	"testing"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

func TestParseSuggest(t *testing.T) {
	f := func(q, head, word string, phrases ...string) {
		t.Helper()
		got := query.ParseSuggest(q)
		want := query.SuggestQuery{Head: head, Word: word, Phrases: phrases}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSuggest(%q) = %+v, want %+v", q, got, want)
		}
	}
	f("", "", "")
	f("   ", "", "")
	f("conf", "", "conf", "conf")
	f("how to Conf", "how to ", "conf", "how to conf", "to conf", "conf")
	f("how to ", "", "", "how to ", "to ")
	f(`say "webh`, `say "`, "webh", "say webh", "webh")
	f("channel:gen", "", "", "channel gen", "gen")
	f("a b c d e", "a b c d ", "e", "b c d e", "c d e", "d e", "e")
	f("Café\u00a0Ré", "Café\u00a0", "re", "cafe re", "re")
	f("!!", "", "", nil...)
}

func TestMatchTitle(t *testing.T) {
	for _, tc := range []struct {
		title, q string
		ok       bool
	}{
		{"Webhooks guide", "webh", true},
		{"Webhooks guide", "gu", true},
		{"Webhooks guide", "how to gu", true},
		{"Webhooks guide", "webhooks gu", true},
		{"Webhooks guide", "uide", false},
		{"Webhooks guide", "webhooks ", true},
		{"Webhooks", "webhooks ", true},
		{"Webhooksx", "webhooks ", false},
		{"Configuring: Wren's CRON (v2)", "cron v", true},
		{"Über uns", "uber", true},
	} {
		_, ok := query.MatchTitle(tc.title, query.ParseSuggest(tc.q).Phrases)
		if ok != tc.ok {
			t.Errorf("MatchTitle(%q, %q) = %v", tc.title, tc.q, ok)
		}
	}
}

// TestSuggestVisibility: words, channel names and document titles of
// private records are suggested to privileged callers only.
func TestSuggestVisibility(t *testing.T) {
	e := openMem(t)
	privSeed(t, e)
	texts := func(q string, private bool) []string {
		t.Helper()
		s, err := e.Suggest(query.SuggestRequest{Query: q, Private: private})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range s {
			out = append(out, x.Kind+":"+x.Text)
		}
		return out
	}
	if got := texts("find marker", false); !slices.Contains(got, "word:find markerpub") || slices.Contains(got, "word:find markerroom") ||
		slices.Contains(got, "word:find markerdm") || slices.Contains(got, "word:find markerprivdoc") {
		t.Errorf("public words: %v", got)
	}
	if got := texts("find marker", true); !slices.Contains(got, "word:find markerroom") || !slices.Contains(got, "word:find markerprivdoc") {
		t.Errorf("private words: %v", got)
	}
	for q, want := range map[string][2][]string{
		"pri": {nil, {"document:Private doc"}},
		"roo": {nil, {"channel:room"}},
		"dm":  {nil, {"channel:dm thread", "channel:dm-ana"}},
		"gen": {{"channel:general"}, {"channel:general"}},
		"doc": {{"document:Public doc"}, {"document:Private doc", "document:Public doc"}},
	} {
		for i, private := range []bool{false, true} {
			var got []string
			for _, s := range texts(q, private) {
				if s[:5] != "word:" {
					got = append(got, s)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want[i]) {
				t.Errorf("%q private=%v: %v, want %v", q, private, got, want[i])
			}
		}
	}
	// Hiding the public channel takes its name out at once.
	if _, err := e.SetChannelVisibility("s", "pub", record.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	if got := texts("gen", false); len(got) != 0 {
		t.Errorf("hidden channel still suggested: %v", got)
	}
}

func TestSuggestInvalid(t *testing.T) {
	e := openMem(t)
	for _, req := range []query.SuggestRequest{{Query: string(make([]byte, query.MaxSuggestQueryBytes+1))}, {Query: "a", Limit: 9}, {Query: "a", Limit: -1}} {
		if _, err := e.Suggest(req); err == nil {
			t.Errorf("%d bytes, limit %d: no error", len(req.Query), req.Limit)
		}
	}
}
