package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// t0 is the time the fixtures' histories start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(hours int) time.Time { return t0.Add(time.Duration(hours) * time.Hour) }

// chatMessages are the messages of seedChat: author, then text; the i-th
// gets id 100+i, channel c1 (general) for even i and c2 (help) for odd,
// and the time t0 + i hours.
var chatMessages = []string{
	"ana: the webhook signature does not match after upgrading", // 100 general
	"bo: try verifying the raw body, not re-serialised JSON",    // 101 help
	"ana: getUserById returns nil for deleted users",            // 102 general
	"cy: Webhooks are signed with HMAC-SHA256",                  // 103 help
	"bo: the cron job fires twice after the DST change",         // 104 general
	"ana: signature mismatch again, proxies rewrite the body",   // 105 help
}

// seedChat stores source "chat" (Acme Chat, discord) with channels c1
// "general" and c2 "help", and msgs as chatMessages describes.
func seedChat(t *testing.T, s Store, msgs ...string) {
	t.Helper()
	mustPutSource(t, s, record.Source{ID: "chat", Name: "Acme Chat", Type: "discord", Enabled: true})
	mustPutChannels(t, s,
		record.Channel{SourceID: "chat", ID: "c1", Name: "general"},
		record.Channel{SourceID: "chat", ID: "c2", Name: "help"})
	var batch []record.Message
	for i, m := range msgs {
		author, text, _ := strings.Cut(m, ": ")
		batch = append(batch, record.Message{SourceID: "chat", ChannelID: []string{"c1", "c2"}[i%2], ID: fmt.Sprint(100 + i),
			Author: author, Content: text, Timestamp: at(i)})
	}
	mustPutMessages(t, s, batch...)
}

func mustPutSource(t *testing.T, s Store, src record.Source) record.Source {
	t.Helper()
	out, err := s.PutSource(src)
	if err != nil {
		t.Fatalf("PutSource(%q): %v", src.ID, err)
	}
	return out
}

func mustPutChannels(t *testing.T, s Store, chs ...record.Channel) []record.Channel {
	t.Helper()
	out, err := s.PutChannels(chs)
	if err != nil {
		t.Fatalf("PutChannels: %v", err)
	}
	if len(out) != len(chs) {
		t.Fatalf("PutChannels returned %d channels for %d", len(out), len(chs))
	}
	return out
}

func mustPutMessages(t *testing.T, s Store, msgs ...record.Message) int {
	t.Helper()
	n, err := s.PutMessages(msgs)
	if err != nil {
		t.Fatalf("PutMessages: %v", err)
	}
	return n
}

func mustPutDocuments(t *testing.T, s Store, docs ...record.Document) []record.Document {
	t.Helper()
	out, err := s.PutDocuments(docs)
	if err != nil {
		t.Fatalf("PutDocuments: %v", err)
	}
	return out
}

func mustChannel(t *testing.T, s Store, sourceID, id string) record.Channel {
	t.Helper()
	c, ok := s.ChannelByID(sourceID, id)
	if !ok {
		t.Fatalf("channel %s/%s not found", sourceID, id)
	}
	return c
}

// search runs req (limit 100 unless given) and fails the test on an error.
func search(t *testing.T, s Store, req query.SearchRequest) *query.SearchResult {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = query.MaxSearchLimit
	}
	r, err := s.Search(req)
	if err != nil {
		t.Fatalf("Search(%+v): %v", req, err)
	}
	if r == nil {
		t.Fatalf("Search(%+v): nil result", req)
	}
	return r
}

func msgIDs(r *query.SearchResult) []string {
	out := []string{}
	for _, m := range r.Messages {
		out = append(out, m.ID)
	}
	return out
}

func docKeys(r *query.SearchResult) []string {
	out := []string{}
	for _, d := range r.Documents {
		out = append(out, d.Key)
	}
	return out
}

// wantMessages checks the ids of the message hits of req, in order.
func wantMessages(t *testing.T, s Store, req query.SearchRequest, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := msgIDs(search(t, s, req)); !slices.Equal(got, want) {
		t.Errorf("Search(%+v): messages %v, want %v", req, got, want)
	}
}

// wantSet checks the ids of the message hits of req, in any order.
func wantSet(t *testing.T, s Store, req query.SearchRequest, want ...string) {
	t.Helper()
	got := msgIDs(search(t, s, req))
	slices.Sort(got)
	w := slices.Clone(want)
	if w == nil {
		w = []string{}
	}
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Errorf("Search(%+v): messages %v, want (any order) %v", req, got, w)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
	}
}

func channelMessageIDs(t *testing.T, s Store, slug string) []string {
	t.Helper()
	ids, err := s.ChannelMessageIDs(slug)
	if err != nil {
		t.Fatalf("ChannelMessageIDs(%q): %v", slug, err)
	}
	return ids
}
