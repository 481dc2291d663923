package storetest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// Copies between stores: a fixture of a bit of everything, and the check
// that two stores hold the same (a backup restored, a migration).

// FillContent gives a store a bit of everything a backup or a migration
// carries: a public and a private source with a cursor, channel visibility
// overrides, an excluded channel and opt-outs; threads; slugs with gaps (a
// channel and a document removed after a second of the same name took the
// next slug); a few hundred messages with replies, edits and links;
// Markdown documents; settings.
func FillContent(t *testing.T, s Store) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	created := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	_, err := s.PutSource(record.Source{ID: "pub", Name: "Acme Slack", Type: "slack", Enabled: true, Schedule: "1h",
		Visibility: record.VisibilityPublic, Config: map[string]any{"token": "xoxb-1", "limit": 2.0}, CreatedAt: created,
		OptOuts: []string{"mallory"}})
	must(err)
	_, err = s.PutSource(record.Source{ID: "priv", Name: "Team Discord", Type: "discord", Enabled: true,
		Visibility: record.VisibilityPrivate, Config: map[string]any{"guild": "42"}, CreatedAt: created.Add(time.Hour)})
	must(err)
	must(s.SetCursor("pub", "cursor-42"))
	_, err = s.PutChannels([]record.Channel{
		{SourceID: "pub", ID: "c1", Name: "general", URL: "https://acme.slack.com/archives/c1", CreatedAt: created},
		{SourceID: "pub", ID: "c2", Name: "archive"},
		{SourceID: "pub", ID: "c3", Name: "Archive!", Topic: "old things"}, // archive-2, a gap once c2 goes
		{SourceID: "pub", ID: "c4", Name: "ops"},
		{SourceID: "pub", ID: "c5", Name: "ana and bo", Private: true},
		{SourceID: "pub", ID: "t1", Name: "How do I deploy?", ParentID: "c1", Kind: "thread"},
		{SourceID: "pub", ID: "t2", Name: "Incident review", ParentID: "c4", Kind: "thread"},
		{SourceID: "priv", ID: "p1", Name: "general"}, // general-2
		{SourceID: "priv", ID: "p2", Name: "announcements"},
		{SourceID: "priv", ID: "pt1", Name: "Launch plan", ParentID: "p1", Kind: "thread"},
	})
	must(err)

	words := strings.Fields("deploy rollback kubernetes cluster docker release notes incident database migration " +
		"cache latency alert pager review build test flaky merge branch the we it is again after before")
	authors := []string{"ana", "bo", "cy", "eve", "mallory"}
	chans := map[string][]string{"pub": {"c1", "c2", "c3", "c4", "c5", "t1", "t2"}, "priv": {"p1", "p2", "pt1"}}
	r := rand.New(rand.NewPCG(1, 2))
	for _, src := range []string{"pub", "priv"} {
		var msgs []record.Message
		for i := range 160 {
			n := 3 + r.IntN(4)
			text := make([]string, n)
			for j := range text {
				text[j] = words[r.IntN(len(words))]
			}
			m := record.Message{SourceID: src, ChannelID: chans[src][r.IntN(len(chans[src]))], ID: fmt.Sprintf("%s-%d", src, i),
				Author: authors[r.IntN(len(authors))], Content: strings.Join(text, " "), Timestamp: created.Add(time.Duration(i) * time.Minute)}
			switch i % 7 {
			case 1:
				m.ReplyTo = fmt.Sprintf("%s-%d", src, i-1)
			case 2:
				m.EditedAt = m.Timestamp.Add(time.Minute)
			case 3:
				m.URL = "https://example.com/m/" + m.ID
				m.AuthorName = "Display " + m.Author
			}
			msgs = append(msgs, m)
		}
		_, err := s.PutMessages(msgs)
		must(err)
	}
	_, err = s.PutMessages([]record.Message{
		{SourceID: "pub", ChannelID: "c1", ID: "t1", Author: "eve", Content: "How do I deploy? the release notes say nothing", Timestamp: created},
		{SourceID: "pub", ChannelID: "t1", ID: "r1", Author: "ana", Content: "the release notes are out, deploy after the merge", Timestamp: created.Add(time.Second)},
		{SourceID: "pub", ChannelID: "c4", ID: "t2", Author: "cy", Content: "Incident review: database latency", Timestamp: created.Add(2 * time.Second)},
		{SourceID: "priv", ChannelID: "p1", ID: "pt1", Author: "bo", Content: "Launch plan: notes on the release", Timestamp: created.Add(3 * time.Second)},
	})
	must(err)
	must(s.ExcludeChannel("pub", "c2"))
	_, err = s.SetChannelVisibility("pub", "c4", record.VisibilityPrivate)
	must(err)
	_, err = s.SetChannelVisibility("priv", "p2", record.VisibilityPublic)
	must(err)
	_, err = s.OptOut("pub", "eve") // renames thread t1, which eve started
	must(err)

	docs, err := s.PutDocuments([]record.Document{
		{Title: "Deploy guide", Format: record.FormatMarkdown, Content: "# Deploy\n\nRun the **build**, then `deploy`; rollback with care."},
		{Title: "Release notes", Format: record.FormatMarkdown, Content: "## 2.0\n\n- kubernetes cluster support\n- faster cache"},
		{Title: "Guide", Key: "guide-a", Content: "the first guide"},
		{Title: "Guide", Key: "guide-b", Content: "the second guide, on incident review"}, // guide-2, a gap once the first goes
		{SourceID: "pub", Title: "Runbook", URL: "https://acme.example/runbook", Format: record.FormatMarkdown, Content: "Pager alert? Check latency, then the database."},
		{SourceID: "priv", Title: "Roadmap", Format: record.FormatMarkdown, Content: "Launch plan: docker images, release notes, migration."},
	})
	must(err)
	must(s.DeleteDocument(docs[2].ID))
	_, err = s.UpdateSettings(map[string]string{"site_name": "Acme", "site_description": "Where Acme talks"})
	must(err)
}

// SameContent checks got holds what want holds, as reads show it: sources
// (all but their version and update time), channels with their slugs and
// visibility, messages, documents, settings, counts, and the hits of
// searches.
func SameContent(t *testing.T, want, got Store) {
	t.Helper()
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	norm := func(ss []record.Source) map[string]string {
		out := map[string]string{}
		for _, s := range ss {
			s.Version, s.UpdatedAt = 0, time.Time{}
			out[s.ID] = js(s)
		}
		return out
	}
	same := func(what string, w, g any) {
		t.Helper()
		if a, b := js(w), js(g); a != b {
			t.Errorf("%s differ:\nwant %s\ngot  %s", what, a, b)
		}
	}
	same("sources", norm(want.Sources()), norm(got.Sources()))
	same("settings", want.Settings(), got.Settings())
	for _, private := range []bool{true, false} {
		wc, gc := want.Counts(private), got.Counts(private)
		wc.MessageTerms, wc.DocumentTerms, gc.MessageTerms, gc.DocumentTerms = 0, 0, 0, 0 // the memory store's only
		if !private {
			same("public message and document counts", [2]int{wc.Messages, wc.Documents}, [2]int{gc.Messages, gc.Documents})
			wc.Messages, wc.Documents = gc.Messages, gc.Documents
		}
		same(fmt.Sprint("counts, private ", private), wc, gc)
		byKey := func(chs []record.Channel) map[string]record.Channel {
			out := map[string]record.Channel{}
			for _, c := range chs {
				out[c.SourceID+"/"+c.ID] = c
			}
			return out
		}
		same(fmt.Sprint("channels, private ", private), byKey(want.Channels("", private)), byKey(got.Channels("", private)))
		docs := func(s Store) map[string]record.Document {
			list, total := s.Documents(0, 1000, private)
			out := map[string]record.Document{}
			for _, d := range list {
				out[d.ID] = d
			}
			same(fmt.Sprint("the documents listed and their total, private ", private), len(list), total)
			return out
		}
		same(fmt.Sprint("documents, private ", private), docs(want), docs(got))
	}
	for _, src := range want.Sources() {
		wi, wx, werr := want.SourceChannels(src.ID)
		gi, gx, gerr := got.SourceChannels(src.ID)
		if werr != nil || gerr != nil {
			t.Errorf("SourceChannels(%q): %v, %v", src.ID, werr, gerr)
		}
		same("the channels of "+src.ID, wi, gi)
		same("the excluded channels of "+src.ID, wx, gx)
	}
	for _, ch := range want.Channels("", true) {
		msgs := func(s Store) map[string]record.Message {
			list, total, err := s.ChannelMessages(ch.Slug, 0, 1000)
			if err != nil || total != len(list) {
				t.Errorf("ChannelMessages(%q): %d of %d: %v", ch.Slug, len(list), total, err)
			}
			out := map[string]record.Message{}
			for _, m := range list {
				out[m.ID] = m
			}
			return out
		}
		wm, gm := msgs(want), msgs(got)
		same("the messages of "+ch.Slug, wm, gm)
		if g, ok := got.ChannelBySlug(ch.Slug); !ok || g.ID != ch.ID || g.SourceID != ch.SourceID {
			t.Errorf("ChannelBySlug(%q): %v %+v", ch.Slug, ok, g)
		}
	}
	found := 0
	for _, q := range []query.SearchRequest{
		{Query: "deploy"}, {Query: "kubernetes cluster"}, {Query: `"release notes"`}, {Query: "release -notes"},
		{Query: `notes -"release notes"`}, {Query: "rollback from:ana"}, {Query: "latency", Source: "priv"},
		{Query: "database", Channel: "archive-2"}, {Query: "review in:ops"}, {Query: "flaky after:2025-06-01T10:00:00Z"},
		{Query: "guide"}, {Query: "launch plan"}, {Query: "cache", From: "Display bo"}, {Query: "pager alert", Before: time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)},
	} {
		for _, private := range []bool{true, false} {
			q.Private, q.Limit = private, query.MaxSearchLimit
			hits := func(s Store) (msgs, docs []string, totals [2]int) {
				res, err := s.Search(q)
				if err != nil {
					t.Fatalf("search %+v: %v", q, err)
				}
				for _, h := range res.Messages {
					msgs = append(msgs, h.SourceID+"/"+h.ID)
				}
				for _, h := range res.Documents {
					docs = append(docs, h.ID)
				}
				slices.Sort(msgs)
				slices.Sort(docs)
				return msgs, docs, [2]int{res.TotalMessages, res.TotalDocuments}
			}
			wm, wd, wt := hits(want)
			gm, gd, gt := hits(got)
			if wt[0]+wt[1] > 0 {
				found++
			}
			if !slices.Equal(wm, gm) || !slices.Equal(wd, gd) || wt != gt {
				t.Errorf("search %q %+v: want %d messages %v, %d documents %v; got %d %v, %d %v",
					q.Query, q, wt[0], wm, wt[1], wd, gt[0], gm, gt[1], gd)
			}
		}
	}
	if found < 20 {
		t.Errorf("only %d of the searches found anything: the fixture does not exercise search", found)
	}
}
