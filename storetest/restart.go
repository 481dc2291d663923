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

// fillHistory writes a varied history through every kind of write.
func fillHistory(t *testing.T, s Store) {
	t.Helper()
	seedPrivate(t, s)
	mustPutSource(t, s, record.Source{ID: "chat", Name: "Chat", Type: "discord", Enabled: true, Schedule: "1h",
		Config: map[string]any{"token": "x", "n": 1.5}, Cursor: "cursor-1"})
	mustPutChannels(t, s, record.Channel{SourceID: "chat", ID: "c0", Name: "room zero", Topic: "topic", URL: "https://chat.example/c0"})
	snap, _ := s.(Snapshotter)
	for r := 0; r < 4; r++ {
		var batch []record.Message
		for i := 0; i < 10; i++ {
			batch = append(batch, record.Message{SourceID: "chat", ChannelID: "c0", ID: fmt.Sprint(r, "-", i),
				Author: []string{"ana", "bo"}[i%2], AuthorName: "Name " + fmt.Sprint(i%2),
				Content: fmt.Sprintf("alpha beta %d gamma%d round %d", i, i%4, r), ReplyTo: fmt.Sprint(r, "-", max(i-1, 0)),
				Timestamp: t0.Add(time.Duration(r*10+i) * time.Minute)})
		}
		mustPutMessages(t, s, batch...)
		if r > 0 {
			if _, err := s.DeleteMessages("chat", []string{fmt.Sprint(r-1, "-", 3)}); err != nil {
				t.Fatal(err)
			}
			batch[5].Content, batch[5].EditedAt = "edited alpha", t0.Add(time.Hour)
			mustPutMessages(t, s, batch[5])
		}
		mustPutDocuments(t, s, record.Document{Title: fmt.Sprint("doc ", r%2), Content: fmt.Sprint("alpha document round ", r),
			Format: record.FormatMarkdown, URL: fmt.Sprint("https://docs.example/", r%2)})
		if r == 1 && snap != nil {
			if err := snap.Snapshot(); err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
		}
	}
	if err := s.DeleteDocument(record.DocumentID(record.UploadsSourceID, "https://docs.example/0")); err != nil {
		t.Fatal(err)
	}
	if err := s.ExcludeChannel("s", "pub"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OptOut("chat", "bo"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetChannelVisibility("s", "dm", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSettings(map[string]string{"site_name": "Acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSource("chat", func(src *record.Source) error {
		src.LastCrawl = &record.CrawlInfo{JobID: "j1", Status: "ok", StartedAt: t0, FinishedAt: t0.Add(time.Minute), Messages: 40}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// fingerprint describes everything the suite can observe of a store.
func fingerprint(t *testing.T, s Store) string {
	t.Helper()
	var b strings.Builder
	for _, src := range s.Sources() {
		fmt.Fprintf(&b, "source %s %q %s %s en=%v vis=%s cv=%v ex=%v opt=%v cfg=%s cur=%q created=%v",
			src.ID, src.Name, src.Type, src.Schedule, src.Enabled, src.Visibility, src.ChannelVisibility,
			src.ExcludedChannels, src.OptOuts, configJSON(t, src.Config), src.Cursor, src.CreatedAt.UnixMicro())
		if src.LastCrawl != nil {
			fmt.Fprintf(&b, " crawl=%+v", *src.LastCrawl)
		}
		fmt.Fprintf(&b, " stats=%+v/%+v\n", s.SourceStats(src.ID, false), s.SourceStats(src.ID, true))
	}
	for _, c := range s.Channels("", true) {
		ids := channelMessageIDs(t, s, c.Slug)
		fmt.Fprintf(&b, "channel %s/%s %s %q %s parent=%s private=%v hidden=%v topic=%q url=%s created=%d\n",
			c.SourceID, c.ID, c.Slug, c.Name, c.Kind, c.ParentID, c.Private, c.Hidden, c.Topic, c.URL, c.CreatedAt.UnixMicro())
		msgs, total, _ := s.ChannelMessages(c.Slug, 0, len(ids)+1)
		fmt.Fprintf(&b, "  %d messages\n", total)
		for _, m := range msgs {
			fmt.Fprintf(&b, "  %s %s %q %s %s %q %s %s\n", m.ID, m.Author, m.AuthorName, m.Timestamp.Format(time.RFC3339Nano),
				m.EditedAt.Format(time.RFC3339Nano), m.Content, m.ReplyTo, m.URL)
		}
	}
	docs, total := s.Documents(0, 1000, true)
	fmt.Fprintf(&b, "%d documents\n", total)
	for _, d := range docs {
		fmt.Fprintf(&b, "doc %s %s %s %q %q %s %s hidden=%v %d %d\n", d.ID, d.SourceID, d.Slug, d.Key, d.Title, d.Format, d.URL, d.Hidden,
			d.CreatedAt.UnixMicro(), d.UpdatedAt.UnixMicro())
	}
	settings := s.Settings()
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "setting %s=%q\n", k, settings[k])
	}
	fmt.Fprintf(&b, "counts %+v %+v\n", countsNoTerms(s.Counts(false)), countsNoTerms(s.Counts(true)))
	for _, q := range []string{"alpha", "beta gamma1", `"alpha beta"`, "from:ana", "doc", "shared", "edited -round"} {
		for _, private := range []bool{false, true} {
			r := search(t, s, query.SearchRequest{Query: q, Private: private})
			fmt.Fprintf(&b, "q %s %v -> %v %v %d %d\n", q, private, msgIDs(r), docKeys(r), r.TotalMessages, r.TotalDocuments)
		}
	}
	return b.String()
}

func countsNoTerms(c record.Counts) record.Counts {
	c.MessageTerms, c.DocumentTerms = 0, 0
	return c
}

// testReopen: everything acknowledged reads and searches the same after
// the store is shut down and opened again, twice.
func testReopen(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the harness cannot reopen a store")
	}
	s := h.Open(t)
	fillHistory(t, s)
	want := fingerprint(t, s)
	for i := range 2 {
		s = h.Reopen(t, s)
		if got := fingerprint(t, s); got != want {
			t.Fatalf("reopen %d changed the store:\n%s", i+1, lineDiff(want, got))
		}
	}
}

// testReopenThenWrite: a reopened store goes on where it stopped: slugs
// stay unique, the rules of its sources still apply, and deletions stay.
func testReopenThenWrite(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the harness cannot reopen a store")
	}
	s := h.Open(t)
	fillHistory(t, s)
	s = h.Reopen(t, s)
	used := map[string]bool{}
	for _, c := range s.Channels("", true) {
		used[c.Slug] = true
	}
	nc := mustPutChannels(t, s, record.Channel{SourceID: "chat", ID: "c9", Name: "room zero"})
	if used[nc[0].Slug] {
		t.Errorf("a new channel took slug %q after reopening", nc[0].Slug)
	}
	c, err := s.PutMessagesCounted([]record.Message{
		{SourceID: "s", ChannelID: "pub", ID: "again", Author: "ana", Content: "excluded", Timestamp: t0},
		{SourceID: "chat", ChannelID: "c0", ID: "by-bo", Author: "BO", Content: "opted out", Timestamp: t0},
		{SourceID: "chat", ChannelID: "c0", ID: "0-3", Author: "ana", Content: "deleted, written again", Timestamp: t0},
	})
	if err != nil || c != (record.PutCounts{New: 1, KeptOut: 2}) {
		t.Errorf("writes after reopening: %+v %v", c, err)
	}
	if n, err := s.DeleteMessages("chat", []string{"1-3"}); err != nil || n != 0 {
		t.Errorf("a message deleted before reopening was deleted again: %d %v", n, err)
	}
	if err := s.DeleteSource("chat"); err != nil {
		t.Fatal(err)
	}
	s = h.Reopen(t, s)
	if _, ok := s.Source("chat"); ok {
		t.Error("deleted source back after reopening")
	}
	if r := search(t, s, query.SearchRequest{Query: "alpha", Private: true}); r.TotalMessages != 0 {
		t.Errorf("deleted source's messages back after reopening: %v", msgIDs(r))
	}
}

// lineDiff lists the lines of want missing from got and the reverse.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
