package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// titleSuggestions returns the channel names and document titles s
// suggests for q, as kind:text, sorted; it checks every suggestion's slug
// names its record.
func titleSuggestions(t *testing.T, s Store, q string, private bool) []string {
	t.Helper()
	res, err := s.Suggest(query.SuggestRequest{Query: q, Private: private})
	if err != nil {
		t.Fatalf("suggest %q: %v", q, err)
	}
	if len(res) > query.MaxSuggestions {
		t.Fatalf("suggest %q: %d suggestions", q, len(res))
	}
	var out []string
	for _, x := range res {
		switch x.Kind {
		case query.SuggestWord:
			continue
		case query.SuggestChannel:
			if c, ok := s.ChannelBySlug(x.Slug); !ok || c.Name != x.Text {
				t.Errorf("suggest %q: channel %q has slug %q of %+v", q, x.Text, x.Slug, c)
			}
		case query.SuggestDocument:
			if d, ok := s.DocumentBySlug(x.Slug); !ok || d.Title != x.Text {
				t.Errorf("suggest %q: document %q has slug %q of %+v", q, x.Text, x.Slug, d)
			}
		default:
			t.Errorf("suggest %q: kind %q", q, x.Kind)
		}
		out = append(out, x.Kind+":"+x.Text)
	}
	slices.Sort(out)
	return out
}

// testSuggestTitles: channel names and document titles are found by the
// start of any of their words, or of the last words of the query; those of
// private records only by privileged callers.
func testSuggestTitles(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	for _, tc := range []struct {
		q             string
		public, every []string
	}{
		{"gen", []string{"channel:general"}, []string{"channel:general"}},
		{"how about GEN", []string{"channel:general"}, []string{"channel:general"}},
		{"doc", []string{"document:Public doc"}, []string{"document:Private doc", "document:Public doc"}},
		{"about privat", nil, []string{"document:Private doc"}},
		{"roo", nil, []string{"channel:room"}},
		{"dm", nil, []string{"channel:dm thread", "channel:dm-ana"}},
		{"thread", []string{"channel:pub thread"}, []string{"channel:dm thread", "channel:pub thread"}},
		{"zzz", nil, nil},
		{"  ", nil, nil},
	} {
		if got := titleSuggestions(t, s, tc.q, false); !slices.Equal(got, tc.public) {
			t.Errorf("%q public: %v, want %v", tc.q, got, tc.public)
		}
		if got := titleSuggestions(t, s, tc.q, true); !slices.Equal(got, tc.every) {
			t.Errorf("%q private: %v, want %v", tc.q, got, tc.every)
		}
	}
	// Hiding a channel takes its name out at once.
	if _, err := s.SetChannelVisibility("s", "pub", record.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	if got := titleSuggestions(t, s, "gen", false); len(got) != 0 {
		t.Errorf("a hidden channel is suggested: %v", got)
	}
}

// testSuggestInvalid: a query too long or a limit out of bounds is
// record.ErrInvalid.
func testSuggestInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	for _, req := range []query.SuggestRequest{
		{Query: string(make([]byte, query.MaxSuggestQueryBytes+1))},
		{Query: "a", Limit: query.MaxSuggestions + 1},
		{Query: "a", Limit: -1},
	} {
		if _, err := s.Suggest(req); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("%d bytes, limit %d: %v", len(req.Query), req.Limit, err)
		}
	}
}
