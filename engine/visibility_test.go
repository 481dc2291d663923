package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// privSeed stores source "s" with a public channel, a platform-private one
// (a DM) and a thread of each, one message each naming its channel, and a
// document; and source "p", private, with a channel and a document.
func privSeed(t testing.TB, e *Engine) {
	t.Helper()
	for _, s := range []record.Source{
		{ID: "s", Name: "S", Type: "slack", Enabled: true},
		{ID: "p", Name: "P", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate},
	} {
		if _, err := e.PutSource(s); err != nil {
			t.Fatal(err)
		}
	}
	chans := []record.Channel{
		{SourceID: "s", ID: "pub", Name: "general"},
		{SourceID: "s", ID: "dm", Name: "dm-ana", Private: true},
		{SourceID: "s", ID: "pubthread", Name: "pub thread", ParentID: "pub", Kind: "thread"},
		{SourceID: "s", ID: "dmthread", Name: "dm thread", ParentID: "dm", Kind: "thread"},
		{SourceID: "p", ID: "room", Name: "room"},
	}
	if _, err := e.PutChannels(chans); err != nil {
		t.Fatal(err)
	}
	var msgs []record.Message
	for i, c := range chans {
		msgs = append(msgs, record.Message{SourceID: c.SourceID, ChannelID: c.ID, ID: fmt.Sprint("m", i), Author: []string{"ana", "bo"}[i%2],
			Content: "marker" + c.ID + " shared words about deployment", Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	putMsgs(t, e, msgs)
	if _, err := e.PutDocuments([]record.Document{
		{SourceID: "s", Key: "a.md", Title: "Public doc", Content: "markerpubdoc shared words about deployment"},
		{SourceID: "p", Key: "b.md", Title: "Private doc", Content: "markerprivdoc shared words about deployment"},
	}); err != nil {
		t.Fatal(err)
	}
}

func putMsgs(t testing.TB, e *Engine, msgs []record.Message) {
	t.Helper()
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

// visibleMarkers returns the markers a full-text search for "shared" finds.
func visibleMarkers(t testing.TB, e *Engine, private bool) []string {
	t.Helper()
	r := search(t, e, query.SearchRequest{Query: "shared", Limit: 100, Private: private})
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.ChannelID)
	}
	for _, d := range r.Documents {
		out = append(out, d.Key)
	}
	if r.TotalMessages+r.TotalDocuments != len(out) {
		t.Fatalf("totals %d+%d for %d hits", r.TotalMessages, r.TotalDocuments, len(out))
	}
	slices.Sort(out)
	return out
}

func TestVisibilityRules(t *testing.T) {
	e := openMem(t)
	privSeed(t, e)
	check := func(want ...string) {
		t.Helper()
		if got := visibleMarkers(t, e, false); !slices.Equal(got, want) {
			t.Fatalf("public search finds %v, want %v", got, want)
		}
		if got := visibleMarkers(t, e, true); len(got) < 7 {
			t.Fatalf("private search finds %v", got)
		}
		checkHidden(t, e)
	}
	// The DM and its thread are private by default; so is source p.
	check("a.md", "pub", "pubthread")
	if c := e.Counts(false); c.Messages != 2 || c.Channels != 1 || c.Threads != 1 || c.Documents != 1 || c.Sources != 1 {
		t.Errorf("public counts %+v", c) // s; not uploads (public, empty)
	}
	if st := e.SourceStats("s", false); st.Channels != 1 || st.Threads != 1 || st.Messages != 2 || st.Documents != 1 {
		t.Errorf("public stats %+v", st)
	}
	if _, n := e.Documents(0, 10, false); n != 1 {
		t.Errorf("public document list holds %d", n)
	}
	if d, _ := e.Document(record.DocumentID("p", "b.md")); !d.Hidden {
		t.Error("the private source's document is not hidden")
	}

	// An operator makes the DM public: its thread follows.
	if _, err := e.SetChannelVisibility("s", "dm", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	check("a.md", "dm", "dmthread", "pub", "pubthread")
	// A thread of its own choice overrides its parent.
	if _, err := e.SetChannelVisibility("s", "dmthread", record.VisibilityPrivate); err != nil {
		t.Fatal(err)
	}
	check("a.md", "dm", "pub", "pubthread")
	// The private source's channel made public shows; its documents not.
	if _, err := e.SetChannelVisibility("p", "room", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	check("a.md", "dm", "pub", "pubthread", "room")
	// Back to inherit: private again.
	for _, c := range [][2]string{{"s", "dm"}, {"s", "dmthread"}, {"p", "room"}} {
		if _, err := e.SetChannelVisibility(c[0], c[1], record.VisibilityInherit); err != nil {
			t.Fatal(err)
		}
	}
	check("a.md", "pub", "pubthread")
	// A disabled source is private whatever its channels say.
	e.SetChannelVisibility("s", "pub", record.VisibilityPublic)
	if _, err := e.UpdateSource("s", func(s *record.Source) error { s.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	check()
	if ch, _ := e.ChannelBySlug("general"); !ch.Hidden {
		t.Error("a channel of a disabled source is not hidden")
	}
	// New content lands on the right side.
	e.UpdateSource("s", func(s *record.Source) error { s.Enabled = true; return nil })
	putMsgs(t, e, []record.Message{{SourceID: "s", ChannelID: "dm", ID: "late", Content: "shared late", Timestamp: t0}})
	check("a.md", "pub", "pubthread")

	if _, err := e.SetChannelVisibility("s", "nope", record.VisibilityPublic); err != record.ErrNotFound {
		t.Errorf("unknown channel: %v", err)
	}
	if _, err := e.SetChannelVisibility("s", "dm", "open"); err == nil {
		t.Error("bad visibility accepted")
	}
	if _, err := e.PutSource(record.Source{ID: "x", Name: "X", Type: "web", Visibility: "secret"}); err == nil {
		t.Error("bad source visibility accepted")
	}
}

func TestExclusionAndOptOutSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	privSeed(t, e)
	if err := e.ExcludeChannel("s", "pub"); err != nil {
		t.Fatal(err)
	}
	if err := e.ExcludeChannel("s", "nope"); err != record.ErrNotFound {
		t.Errorf("excluding an unknown channel: %v", err)
	}
	// bo wrote m1 (the DM) and m3 (its thread); any case matches.
	if n, err := e.OptOut("s", "BO"); err != nil || n != 2 {
		t.Fatalf("opt-out removed %d: %v", n, err)
	}
	if n, err := e.OptOut("s", "bo"); err != nil || n != 0 {
		t.Fatalf("opting out twice removed %d: %v", n, err)
	}
	gone := func(e *Engine) {
		t.Helper()
		if _, ok := e.ChannelByID("s", "pub"); ok {
			t.Error("excluded channel present")
		}
		if _, ok := e.ChannelByID("s", "pubthread"); ok {
			t.Error("thread of an excluded channel present")
		}
		if got := visibleMarkers(t, e, true); !slices.Equal(got, []string{"a.md", "b.md", "room"}) {
			t.Errorf("after exclusion and opt-out: %v", got)
		}
	}
	gone(e)
	// A re-import of the same content is skipped, without an error.
	again := func(e *Engine) {
		t.Helper()
		if _, err := e.PutChannels([]record.Channel{
			{SourceID: "s", ID: "pub", Name: "general"},
			{SourceID: "s", ID: "pubthread", Name: "pub thread", ParentID: "pub"},
			{SourceID: "s", ID: "dm", Name: "dm-ana", Private: true},
		}); err != nil {
			t.Fatal(err)
		}
		n, err := e.PutMessages([]record.Message{
			{SourceID: "s", ChannelID: "pub", ID: "m0", Author: "ana", Content: "shared again", Timestamp: t0},
			{SourceID: "s", ChannelID: "pubthread", ID: "m2", Author: "ana", Content: "shared again", Timestamp: t0},
			{SourceID: "s", ChannelID: "dm", ID: "m1", Author: "Bo", Content: "shared again", Timestamp: t0},
		})
		if err != nil || n != 0 {
			t.Fatalf("re-import stored %d: %v", n, err)
		}
		gone(e)
	}
	again(e)
	e.crash() // the log replays
	e = openDir(t, dir)
	gone(e)
	again(e)
	if err := e.Close(); err != nil { // a snapshot
		t.Fatal(err)
	}
	e = openDir(t, dir)
	defer e.Close()
	gone(e)
	again(e)
	src, _ := e.Source("s")
	if !slices.Equal(src.ExcludedChannels, []string{"pub"}) || !slices.Equal(src.OptOuts, []string{"BO"}) {
		t.Errorf("lists after restart: %v %v", src.ExcludedChannels, src.OptOuts)
	}
	// Restored and opted in, the same writes store again.
	if err := e.RestoreChannel("s", "pub"); err != nil {
		t.Fatal(err)
	}
	if err := e.RestoreChannel("s", "pub"); err != record.ErrNotFound {
		t.Errorf("restoring twice: %v", err)
	}
	if err := e.OptIn("s", "bo"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{{SourceID: "s", ID: "pub", Name: "general"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.PutMessages([]record.Message{
		{SourceID: "s", ChannelID: "pub", ID: "m0", Author: "ana", Content: "shared again", Timestamp: t0},
		{SourceID: "s", ChannelID: "dm", ID: "m1", Author: "bo", Content: "shared again", Timestamp: t0},
	}); err != nil || n != 2 {
		t.Fatalf("after restore: %d %v", n, err)
	}
}

func TestSettingsPersist(t *testing.T) {
	dir := t.TempDir()
	e := openDir(t, dir)
	if _, err := e.UpdateSettings(map[string]string{"site_name": " Acme Help ", "site_description": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.UpdateSettings(map[string]string{"site_description": ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.UpdateSettings(map[string]string{"Bad Key": "x"}); err == nil {
		t.Error("bad key accepted")
	}
	if _, err := e.UpdateSettings(map[string]string{"site_name": "a\x00b"}); err == nil {
		t.Error("control character accepted")
	}
	want := map[string]string{"site_name": "Acme Help"}
	e.crash()
	e = openDir(t, dir)
	if got := e.Settings(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after replay %v", got)
	}
	e.Close()
	e = openDir(t, dir)
	defer e.Close()
	if got := e.Settings(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after snapshot %v", got)
	}
}

func TestOptOutRenamesTheirThreads(t *testing.T) {
	e := openMem(t)
	e.PutSource(record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true})
	e.PutChannels([]record.Channel{{SourceID: "s", ID: "c", Name: "general"},
		{SourceID: "s", ID: "c-1", Name: "my secret plan", ParentID: "c", Kind: "thread", NameAuthor: "ana"}})
	putMsgs(t, e, []record.Message{{SourceID: "s", ChannelID: "c", ID: "c-1", Author: "ana", Content: "my secret plan", Timestamp: t0}})
	if _, err := e.OptOut("s", "ana"); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.ChannelByID("s", "c-1"); c.Name != record.AnonymousThread {
		t.Errorf("thread still named %q", c.Name)
	}
	// A later import names it after the opted-out author's message again.
	got, err := e.PutChannels([]record.Channel{{SourceID: "s", ID: "c-1", Name: "my secret plan", ParentID: "c", Kind: "thread", NameAuthor: "Ana"}})
	if err != nil || got[0].Name != record.AnonymousThread {
		t.Fatalf("%v %v", got, err)
	}
	if c, _ := e.ChannelByID("s", "c-1"); c.Name != record.AnonymousThread || c.NameAuthor != "" {
		t.Errorf("thread stored as %+v", c)
	}
}

func TestPrivateThreadOfPublicChannel(t *testing.T) {
	e := openMem(t)
	privSeed(t, e)
	if _, err := e.PutChannels([]record.Channel{{SourceID: "s", ID: "mods", Name: "moderators", ParentID: "pub", Kind: "thread", Private: true}}); err != nil {
		t.Fatal(err)
	}
	putMsgs(t, e, []record.Message{{SourceID: "s", ChannelID: "mods", ID: "x", Content: "shared secret", Timestamp: t0}})
	if got := visibleMarkers(t, e, false); slices.Contains(got, "mods") {
		t.Errorf("a private thread of a public channel is public: %v", got)
	}
	// The operator opens it; or opens its parent, which does not open it.
	e.SetChannelVisibility("s", "pub", record.VisibilityPublic)
	if got := visibleMarkers(t, e, false); slices.Contains(got, "mods") {
		t.Errorf("opening the parent opened the private thread: %v", got)
	}
	e.SetChannelVisibility("s", "mods", record.VisibilityPublic)
	if got := visibleMarkers(t, e, false); !slices.Contains(got, "mods") {
		t.Errorf("the operator's public thread is hidden: %v", got)
	}
}
