package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// testChannelSlugs: a new channel gets the slug of its name, unique
// across sources; an existing one keeps its slug and creation time when
// put again, renamed.
func testChannelSlugs(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPutSource(t, s, record.Source{ID: "a", Name: "A", Type: "discord", Enabled: true})
	mustPutSource(t, s, record.Source{ID: "b", Name: "B", Type: "discord", Enabled: true})
	out := mustPutChannels(t, s,
		record.Channel{SourceID: "a", ID: "1", Name: "  Café Help & FAQ  ", CreatedAt: t0},
		record.Channel{SourceID: "a", ID: "2", Name: "Café help: FAQ"},
		record.Channel{SourceID: "b", ID: "1", Name: "café-help-faq"})
	if out[0].Slug != record.Slugify("Café Help & FAQ") || out[0].Name != "Café Help & FAQ" {
		t.Errorf("first channel: slug %q name %q", out[0].Slug, out[0].Name)
	}
	seen := map[string]bool{}
	for _, c := range out {
		if !record.ValidSlug(c.Slug) || !strings.HasPrefix(c.Slug, out[0].Slug) || seen[c.Slug] {
			t.Errorf("slug %q: not a unique slug of its name (%v)", c.Slug, seen)
		}
		seen[c.Slug] = true
		if c.Kind != "channel" || c.CreatedAt.IsZero() {
			t.Errorf("channel %s/%s: kind %q created %v", c.SourceID, c.ID, c.Kind, c.CreatedAt)
		}
	}
	if !out[0].CreatedAt.Equal(t0) {
		t.Errorf("given creation time %v, got %v", t0, out[0].CreatedAt)
	}
	for _, c := range out {
		if got, ok := s.ChannelBySlug(c.Slug); !ok || got.SourceID != c.SourceID || got.ID != c.ID {
			t.Errorf("ChannelBySlug(%q): %v %+v", c.Slug, ok, got)
		}
		if got, ok := s.ChannelByID(c.SourceID, c.ID); !ok || got.Slug != c.Slug {
			t.Errorf("ChannelByID(%q, %q): %v %+v", c.SourceID, c.ID, ok, got)
		}
	}

	// Renamed and put again: the slug and creation time stay, the rest changes.
	again := mustPutChannels(t, s, record.Channel{SourceID: "a", ID: "1", Name: "renamed", Topic: "new topic", Kind: "topic"})
	if again[0].Slug != out[0].Slug || !again[0].CreatedAt.Equal(out[0].CreatedAt) {
		t.Errorf("put again: slug %q (was %q), created %v (was %v)", again[0].Slug, out[0].Slug, again[0].CreatedAt, out[0].CreatedAt)
	}
	if got := mustChannel(t, s, "a", "1"); got.Name != "renamed" || got.Topic != "new topic" || got.Kind != "topic" || got.Slug != out[0].Slug {
		t.Errorf("stored %+v", got)
	}
	if _, ok := s.ChannelBySlug(record.Slugify("renamed")); ok {
		t.Error("a rename gave a new slug")
	}
	// A new channel of the renamed one's old name does not take its slug.
	nc := mustPutChannels(t, s, record.Channel{SourceID: "a", ID: "3", Name: "Café Help & FAQ"})
	if seen[nc[0].Slug] || nc[0].Slug == "" {
		t.Errorf("new channel took a used slug %q", nc[0].Slug)
	}
	// A name without letters or digits still gets a slug.
	if odd := mustPutChannels(t, s, record.Channel{SourceID: "a", ID: "4", Name: "💬"}); !record.ValidSlug(odd[0].Slug) {
		t.Errorf("slug of an emoji name: %q", odd[0].Slug)
	}
	if _, ok := s.ChannelBySlug("nope"); ok {
		t.Error("unknown slug found")
	}
	if _, ok := s.ChannelByID("a", "nope"); ok {
		t.Error("unknown id found")
	}
}

// testChannelsInvalid: channels without an id or name, or of an unknown
// source, are ErrInvalid; nothing of the batch is stored.
func testChannelsInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPutSource(t, s, record.Source{ID: "a", Name: "A", Type: "discord", Enabled: true})
	for name, c := range map[string]record.Channel{
		"no id":          {SourceID: "a", Name: "x"},
		"no name":        {SourceID: "a", ID: "1", Name: "  "},
		"unknown source": {SourceID: "nope", ID: "1", Name: "x"},
		"invalid UTF-8":  {SourceID: "a", ID: "1", Name: "\xff"},
	} {
		_, err := s.PutChannels([]record.Channel{{SourceID: "a", ID: "ok", Name: "fine"}, c})
		wantErr(t, name, err, record.ErrInvalid)
	}
	if chs := s.Channels("", true); len(chs) != 0 {
		t.Errorf("a failed batch stored %+v", chs)
	}
}

// testChannelsListed: Channels lists a source's channels (every source's
// for ""), ordered by name; SourceChannels adds message counts.
func testChannelsListed(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	mustPutSource(t, s, record.Source{ID: "other", Name: "Other", Type: "slack", Enabled: true})
	mustPutChannels(t, s, record.Channel{SourceID: "other", ID: "x", Name: "announcements"})
	names := func(chs []record.Channel) []string {
		var out []string
		for _, c := range chs {
			out = append(out, c.Name)
		}
		return out
	}
	if got := names(s.Channels("chat", true)); !slices.Equal(got, []string{"general", "help"}) {
		t.Errorf("Channels(chat): %v", got)
	}
	if got := names(s.Channels("", true)); !slices.Equal(got, []string{"announcements", "general", "help"}) {
		t.Errorf("Channels(all): %v", got)
	}
	if got := s.Channels("nope", true); len(got) != 0 {
		t.Errorf("Channels(unknown): %v", got)
	}
	infos, excluded, err := s.SourceChannels("chat")
	if err != nil || len(infos) != 2 || len(excluded) != 0 {
		t.Fatalf("SourceChannels: %v %+v %v", err, infos, excluded)
	}
	for _, ci := range infos {
		if ci.Messages != 3 || ci.Visibility != record.VisibilityInherit {
			t.Errorf("SourceChannels entry %s: %d messages, visibility %q", ci.Name, ci.Messages, ci.Visibility)
		}
	}
	if st := s.SourceStats("chat", true); st.Channels != 2 || st.Messages != 6 || st.Documents != 0 {
		t.Errorf("SourceStats: %+v", st)
	}
}

// testPutMessagesCounts: a put says what became of each message; an
// identical put writes nothing.
func testPutMessagesCounts(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s)
	m := record.Message{SourceID: "chat", ChannelID: "c1", ID: "1", Author: "ana", Content: "original wording", Timestamp: t0}
	m2 := record.Message{SourceID: "chat", ChannelID: "c1", ID: "2", Author: "bo", Content: "second", Timestamp: t0.Add(time.Minute)}
	c, err := s.PutMessagesCounted([]record.Message{m, m2})
	if err != nil || c != (record.PutCounts{New: 2}) {
		t.Fatalf("first put: %+v %v", c, err)
	}
	edited := m
	edited.Content, edited.EditedAt = "edited wording", t0.Add(time.Hour)
	c, err = s.PutMessagesCounted([]record.Message{edited, m2})
	if err != nil || c != (record.PutCounts{Updated: 1, Unchanged: 1}) {
		t.Fatalf("edit: %+v %v", c, err)
	}
	if n := mustPutMessages(t, s, edited, m2); n != 0 {
		t.Errorf("identical put reports %d written", n)
	}
	m3 := m2
	m3.ID = "3"
	if n := mustPutMessages(t, s, m3, m2); n != 1 {
		t.Errorf("put of one new and one same: %d", n)
	}
	if ids := channelMessageIDs(t, s, "general"); !slices.Equal(ids, []string{"1", "2", "3"}) {
		t.Errorf("channel holds %v", ids)
	}
	msgs, _, _ := s.ChannelMessages("general", 0, 10)
	if len(msgs) != 3 || msgs[0].Content != "edited wording" || !msgs[0].EditedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("edited message reads %+v", msgs)
	}
	// The same id in another source is another message.
	mustPutSource(t, s, record.Source{ID: "other", Name: "Other", Type: "discord", Enabled: true})
	mustPutChannels(t, s, record.Channel{SourceID: "other", ID: "c1", Name: "general"})
	o := m
	o.SourceID = "other"
	if c, err := s.PutMessagesCounted([]record.Message{o}); err != nil || c.New != 1 {
		t.Errorf("same id, other source: %+v %v", c, err)
	}
	if got := channelMessageIDs(t, s, "general"); len(got) != 3 {
		t.Errorf("other source's message landed in chat: %v", got)
	}
}

// testPutMessagesInvalid: messages without an id, a time, a known channel
// or valid text are ErrInvalid, and the batch is not stored.
func testPutMessagesInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s)
	ok := record.Message{SourceID: "chat", ChannelID: "c1", ID: "fine", Content: "fine", Timestamp: t0}
	for name, m := range map[string]record.Message{
		"no id":           {SourceID: "chat", ChannelID: "c1", Content: "x", Timestamp: t0},
		"no channel":      {SourceID: "chat", ID: "1", Content: "x", Timestamp: t0},
		"unknown channel": {SourceID: "chat", ChannelID: "nope", ID: "1", Content: "x", Timestamp: t0},
		"unknown source":  {SourceID: "nope", ChannelID: "c1", ID: "1", Content: "x", Timestamp: t0},
		"no timestamp":    {SourceID: "chat", ChannelID: "c1", ID: "1", Content: "x"},
		"invalid UTF-8":   {SourceID: "chat", ChannelID: "c1", ID: "1", Content: "\xff", Timestamp: t0},
		"control in id":   {SourceID: "chat", ChannelID: "c1", ID: "a\nb", Content: "x", Timestamp: t0},
		"too long":        {SourceID: "chat", ChannelID: "c1", ID: "1", Content: strings.Repeat("x", record.MaxMessageBytes+1), Timestamp: t0},
	} {
		_, err := s.PutMessages([]record.Message{ok, m})
		wantErr(t, name, err, record.ErrInvalid)
	}
	if ids := channelMessageIDs(t, s, "general"); len(ids) != 0 {
		t.Errorf("invalid batches stored %v", ids)
	}
}

// testMessageRoundTrip: a message reads back as written, its times in UTC
// to the microsecond and its author names without control characters.
func testMessageRoundTrip(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s)
	zone := time.FixedZone("X", 5*3600)
	ts := time.Date(2026, 3, 1, 17, 4, 5, 123456000, zone)
	in := record.Message{SourceID: "chat", ChannelID: "c1", ID: "m1", Author: " ana\x03 ", AuthorName: "Ana K\n",
		Content: "line one\nline two **bold** <b>", Timestamp: ts, EditedAt: ts.Add(time.Minute),
		ReplyTo: "m0", URL: "https://chat.example/m1"}
	mustPutMessages(t, s, in)
	msgs, total, err := s.ChannelMessages("general", 0, 10)
	if err != nil || total != 1 || len(msgs) != 1 {
		t.Fatalf("ChannelMessages: %v %d %+v", err, total, msgs)
	}
	got := msgs[0]
	if got.SourceID != "chat" || got.ChannelID != "c1" || got.ID != "m1" || got.Author != "ana" || got.AuthorName != "Ana K" ||
		got.Content != in.Content || got.ReplyTo != "m0" || got.URL != in.URL {
		t.Errorf("read back %+v", got)
	}
	if !got.Timestamp.Equal(ts) || got.Timestamp.Location() != time.UTC || !got.EditedAt.Equal(ts.Add(time.Minute)) {
		t.Errorf("times %v %v, put %v %v", got.Timestamp, got.EditedAt, ts, ts.Add(time.Minute))
	}
	// Nanoseconds below the microsecond are not kept; a put that differs
	// only there is the same message.
	same := in
	same.Timestamp = ts.Add(999)
	if c, err := s.PutMessagesCounted([]record.Message{same}); err != nil || c.Unchanged != 1 {
		t.Errorf("put differing below the microsecond: %+v %v", c, err)
	}
}

// testChannelTimeOrder: a channel's messages are in time order whatever
// order they arrive in; positions follow edits that move a message.
func testChannelTimeOrder(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s)
	put := func(id string, minute int) {
		t.Helper()
		mustPutMessages(t, s, record.Message{SourceID: "chat", ChannelID: "c1", ID: id, Author: "a", Content: "text " + id,
			Timestamp: t0.Add(time.Duration(minute) * time.Minute)})
	}
	put("m3", 3)
	put("m1", 1) // a backfill
	put("m5", 5)
	put("m2", 2)
	if got := channelMessageIDs(t, s, "general"); !slices.Equal(got, []string{"m1", "m2", "m3", "m5"}) {
		t.Fatalf("order %v", got)
	}
	if p, err := s.MessagePosition("general", "m3"); err != nil || p != 2 {
		t.Errorf("position of m3: %d %v", p, err)
	}
	_, err := s.MessagePosition("general", "nope")
	wantErr(t, "position of an unknown message", err, record.ErrNotFound)
	_, err = s.MessagePosition("help", "m3")
	wantErr(t, "position in another channel", err, record.ErrNotFound)
	_, err = s.MessagePosition("nope", "m3")
	wantErr(t, "position in an unknown channel", err, record.ErrNotFound)

	put("m3", 9) // an edit moves it in time
	if _, err := s.DeleteMessages("chat", []string{"m1"}); err != nil {
		t.Fatal(err)
	}
	if got := channelMessageIDs(t, s, "general"); !slices.Equal(got, []string{"m2", "m5", "m3"}) {
		t.Errorf("after an edit and a delete: %v", got)
	}
	if p, _ := s.MessagePosition("general", "m3"); p != 2 {
		t.Errorf("position of the moved m3: %d", p)
	}
	_, err = s.ChannelMessageIDs("nope")
	wantErr(t, "ids of an unknown channel", err, record.ErrNotFound)
	if ids := channelMessageIDs(t, s, "help"); len(ids) != 0 {
		t.Errorf("an empty channel holds %v", ids)
	}
}

// testChannelPaging: ChannelMessages pages through a channel in time
// order with its total; offsets and limits out of range are clamped.
func testChannelPaging(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s)
	var msgs []record.Message
	for i := 24; i >= 0; i-- {
		msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: "c1", ID: fmt.Sprintf("m%02d", i), Author: "a",
			Content: fmt.Sprint("message ", i), Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	mustPutMessages(t, s, msgs...)
	page := func(offset, limit int) string {
		t.Helper()
		ms, total, err := s.ChannelMessages("general", offset, limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		return fmt.Sprint(total, ids)
	}
	for _, c := range []struct {
		offset, limit int
		want          string
	}{
		{0, 3, "25 [m00 m01 m02]"},
		{5, 3, "25 [m05 m06 m07]"},
		{23, 10, "25 [m23 m24]"},
		{25, 10, "25 []"},
		{100, 10, "25 []"},
		{-5, 2, "25 [m00 m01]"},
		{0, 0, "25 []"},
	} {
		if got := page(c.offset, c.limit); got != c.want {
			t.Errorf("page(%d, %d) = %s, want %s", c.offset, c.limit, got, c.want)
		}
	}
	_, _, err := s.ChannelMessages("nope", 0, 3)
	wantErr(t, "page of an unknown channel", err, record.ErrNotFound)
}

// testDeleteMessages: deleting messages by id removes them everywhere;
// unknown ids are ignored and not counted.
func testDeleteMessages(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	n, err := s.DeleteMessages("chat", []string{"100", "105", "nope"})
	if err != nil || n != 2 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if n, err := s.DeleteMessages("chat", []string{"100"}); err != nil || n != 0 {
		t.Errorf("delete again: %d %v", n, err)
	}
	if n, err := s.DeleteMessages("other", []string{"101"}); err != nil || n != 0 {
		t.Errorf("delete with the wrong source: %d %v", n, err)
	}
	wantMessages(t, s, query.SearchRequest{Query: "signature"})
	if got := channelMessageIDs(t, s, "general"); !slices.Equal(got, []string{"102", "104"}) {
		t.Errorf("general holds %v", got)
	}
	if st := s.SourceStats("chat", true); st.Messages != 4 {
		t.Errorf("stats after delete: %+v", st)
	}
	if c := s.Counts(true); c.Messages != 4 {
		t.Errorf("counts after delete: %+v", c)
	}
	// A deleted message may be written again.
	mustPutMessages(t, s, record.Message{SourceID: "chat", ChannelID: "c1", ID: "100", Author: "ana", Content: "signature back", Timestamp: at(0)})
	wantMessages(t, s, query.SearchRequest{Query: "signature"}, "100")
}
