package engine

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// scoresOf returns a search's scores by record ("m:<source>/<id>",
// "d:<id>").
func scoresOf(t testing.TB, e *Engine, q string, private bool) map[string]float64 {
	t.Helper()
	r := search(t, e, query.SearchRequest{Query: q, Limit: query.MaxSearchLimit, Private: private})
	out := map[string]float64{}
	for _, m := range r.Messages {
		out["m:"+m.SourceID+"/"+m.ID] = m.Score
	}
	for _, d := range r.Documents {
		out["d:"+d.ID] = d.Score
	}
	return out
}

// checkHidden fails unless the indexes hide exactly the live messages of
// hidden channels and the documents of hidden sources.
func checkHidden(t testing.TB, e *Engine) {
	t.Helper()
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.st
	hidden := 0
	for i := range st.msgs.len() {
		if r := st.msgs.at(uint32(i)); r.live() && st.msgIdx.Hidden(uint32(i)) != st.hid.chans.Contains(r.channel) {
			t.Fatalf("message slot %d: hidden %v", i, st.msgIdx.Hidden(uint32(i)))
		} else if r.live() && st.msgIdx.Hidden(uint32(i)) {
			hidden++
		}
	}
	if st.msgIdx.PublicLen() != st.msgIdx.Len()-hidden {
		t.Fatalf("%d public messages of %d, %d hidden", st.msgIdx.PublicLen(), st.msgIdx.Len(), hidden)
	}
	for i, d := range st.docs {
		if d != nil && st.docIdx.Hidden(uint32(i)) != record.SourceHidden(st.sources[d.SourceID]) {
			t.Fatalf("document slot %d: hidden %v", i, st.docIdx.Hidden(uint32(i)))
		}
	}
}

// statsQueries are searched anonymously by TestPublicScoresIgnorePrivateContent:
// a word, two, a phrase with a word, an exclusion.
var statsQueries = []string{"deploy", "deploy rollback", `"rollback script" deploy`, "deploy -friday"}

// TestPublicScoresIgnorePrivateContent is issue 22's leak: the score an
// anonymous search gives a public record must not depend on private
// records holding its words — added, deleted, across a restart — while
// authenticated searches rank by everything.
func TestPublicScoresIgnorePrivateContent(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	defer func() { e.Close() }()
	if _, err := e.PutSource(record.Source{ID: "pub", Name: "Pub", Type: "slack", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{{SourceID: "pub", ID: "general", Name: "general"}}); err != nil {
		t.Fatal(err)
	}
	putMsgs(t, e, []record.Message{
		{SourceID: "pub", ChannelID: "general", ID: "g1", Content: "deploy the service with the rollback script", Timestamp: t0},
		{SourceID: "pub", ChannelID: "general", ID: "g2", Content: "no deploy on friday please", Timestamp: t0.Add(time.Minute)},
		{SourceID: "pub", ChannelID: "general", ID: "g3", Content: "the rollback plan is in the wiki", Timestamp: t0.Add(2 * time.Minute)},
		{SourceID: "pub", ChannelID: "general", ID: "g4", Content: "lunch at noon", Timestamp: t0.Add(3 * time.Minute)},
	})
	if _, err := e.PutDocuments([]record.Document{
		{SourceID: "pub", Key: "guide.md", Title: "Deploy guide", Content: "how to deploy, and the rollback script when it fails"},
		{SourceID: "pub", Key: "runbook.md", Title: "Runbook", Content: "rollback only; never deploy on friday"},
		{SourceID: "pub", Key: "menu.md", Title: "Menu", Content: "soup and bread"},
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]float64{}
	for _, q := range statsQueries {
		want[q] = scoresOf(t, e, q, false)
		if len(want[q]) < 2 {
			t.Fatalf("%s: %v", q, want[q])
		}
	}
	authBefore := scoresOf(t, e, "deploy", true)
	if !maps.Equal(authBefore, want["deploy"]) {
		t.Fatalf("with nothing private, authenticated %v, anonymous %v", authBefore, want["deploy"])
	}
	check := func(stage string) {
		t.Helper()
		for _, q := range statsQueries {
			if got := scoresOf(t, e, q, false); !maps.Equal(got, want[q]) {
				t.Fatalf("%s: anonymous %s scores %v, want %v", stage, q, got, want[q])
			}
		}
		checkHidden(t, e)
	}

	// Private content holding the words: a private source's messages and
	// documents, and two private channels of the public source (one the
	// platform marks private, one an operator set private).
	if _, err := e.PutSource(record.Source{ID: "priv", Name: "Priv", Type: "slack", Enabled: true, Visibility: record.VisibilityPrivate}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{
		{SourceID: "priv", ID: "room", Name: "room"},
		{SourceID: "pub", ID: "dm", Name: "dm", Private: true},
		{SourceID: "pub", ID: "ops", Name: "ops"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetChannelVisibility("pub", "ops", record.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	var secret []record.Message
	for i := range 30 {
		for _, c := range [][2]string{{"priv", "room"}, {"pub", "dm"}, {"pub", "ops"}} {
			secret = append(secret, record.Message{SourceID: c[0], ChannelID: c[1], ID: fmt.Sprint(c[1], i),
				Content: "deploy deploy the rollback script " + fmt.Sprint("secret", i), Timestamp: t0.Add(time.Duration(i) * time.Hour)})
		}
	}
	putMsgs(t, e, secret)
	privDocs, err := e.PutDocuments([]record.Document{
		{SourceID: "priv", Key: "a.md", Title: "Deploy secrets", Content: "deploy deploy rollback script"},
		{SourceID: "priv", Key: "b.md", Title: "More", Content: "deploy on friday, the rollback script"},
	})
	if err != nil {
		t.Fatal(err)
	}
	check("private content added")
	if got := scoresOf(t, e, "deploy", true); len(got) <= len(authBefore) || got["d:"+privDocs[0].ID] == 0 {
		t.Fatalf("authenticated search misses private content: %v", got)
	} else if ka := "m:pub/g1"; got[ka] == authBefore[ka] {
		t.Errorf("authenticated scores ignore private content: %v", got[ka])
	}

	// Deleted: the deleted postings stay until compaction, out of sight.
	var ids []string
	for i := 0; i < 30; i += 2 {
		ids = append(ids, fmt.Sprint("dm", i))
	}
	if _, err := e.DeleteMessages("pub", ids); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteDocument(privDocs[1].ID); err != nil {
		t.Fatal(err)
	}
	check("private content deleted")

	// A restart rebuilds what is hidden from the records.
	e.Close()
	e = openDir(t, dir)
	check("after a restart")

	// An operator opens a channel: its messages count, as public content.
	if _, err := e.SetChannelVisibility("pub", "ops", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	if got := scoresOf(t, e, "deploy", false); got["m:pub/ops0"] == 0 || got["m:pub/g1"] == want["deploy"]["m:pub/g1"] {
		t.Fatalf("an opened channel does not count: %v", got)
	}
	checkHidden(t, e)
	if _, err := e.SetChannelVisibility("pub", "ops", record.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	check("the channel closed again")

	if err := e.DeleteSource("priv"); err != nil {
		t.Fatal(err)
	}
	check("the private source deleted")
}
