package storetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// seedPrivate stores source "s" with a public channel "pub" (general), a
// platform-private one "dm" (a DM) and a thread of each, and source "p",
// private, with channel "room"; one message in each channel, saying
// "shared", by ana and bo in turn; a document in each source (keys a.md
// and b.md).
func seedPrivate(t *testing.T, s Store) {
	t.Helper()
	mustPutSource(t, s, record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true})
	mustPutSource(t, s, record.Source{ID: "p", Name: "P", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate})
	chans := []record.Channel{
		{SourceID: "s", ID: "pub", Name: "general"},
		{SourceID: "s", ID: "dm", Name: "dm-ana", Private: true},
		{SourceID: "s", ID: "pubthread", Name: "pub thread", ParentID: "pub", Kind: "thread"},
		{SourceID: "s", ID: "dmthread", Name: "dm thread", ParentID: "dm", Kind: "thread"},
		{SourceID: "p", ID: "room", Name: "room"},
	}
	mustPutChannels(t, s, chans...)
	var msgs []record.Message
	for i, c := range chans {
		msgs = append(msgs, record.Message{SourceID: c.SourceID, ChannelID: c.ID, ID: fmt.Sprint("m", i), Author: []string{"ana", "bo"}[i%2],
			Content: "marker" + c.ID + " shared words about deployment", Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	mustPutMessages(t, s, msgs...)
	mustPutDocuments(t, s,
		record.Document{SourceID: "s", Key: "a.md", Title: "Public doc", Content: "markerpubdoc shared words about deployment"},
		record.Document{SourceID: "p", Key: "b.md", Title: "Private doc", Content: "markerprivdoc shared words about deployment"})
}

// visible returns the channel ids and document keys a search for
// "shared" finds, sorted, checking the totals against the hits.
func visible(t *testing.T, s Store, private bool) []string {
	t.Helper()
	r := search(t, s, query.SearchRequest{Query: "shared", Private: private})
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.ChannelID)
	}
	out = append(out, docKeys(r)...)
	if r.TotalMessages+r.TotalDocuments != len(out) {
		t.Fatalf("totals %d+%d for %d hits", r.TotalMessages, r.TotalDocuments, len(out))
	}
	slices.Sort(out)
	return out
}

var allMarkers = []string{"a.md", "b.md", "dm", "dmthread", "pub", "pubthread", "room"}

func wantVisible(t *testing.T, s Store, want ...string) {
	t.Helper()
	if got := visible(t, s, false); !slices.Equal(got, want) {
		t.Errorf("public search finds %v, want %v", got, want)
	}
	if got := visible(t, s, true); !slices.Equal(got, allMarkers) {
		t.Errorf("private search finds %v, want %v", got, allMarkers)
	}
}

// testVisibilityDefaults: a private source and a platform-private
// channel, with its threads, are absent for callers without credentials
// and present for those with; reads mark them Hidden.
func testVisibilityDefaults(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	wantVisible(t, s, "a.md", "pub", "pubthread")
	for _, c := range []struct {
		source, id string
		hidden     bool
	}{{"s", "pub", false}, {"s", "pubthread", false}, {"s", "dm", true}, {"s", "dmthread", true}, {"p", "room", true}} {
		if ch := mustChannel(t, s, c.source, c.id); ch.Hidden != c.hidden {
			t.Errorf("channel %s: Hidden %v, want %v", c.id, ch.Hidden, c.hidden)
		}
	}
	if d, _ := s.Document(record.DocumentID("p", "b.md")); !d.Hidden {
		t.Error("the private source's document is not Hidden")
	}
	if d, _ := s.Document(record.DocumentID("s", "a.md")); d.Hidden {
		t.Error("the public source's document is Hidden")
	}
	if src, _ := s.Source("p"); !src.Hidden() {
		t.Error("private source not Hidden")
	}
	var pub []string
	for _, c := range s.Channels("", false) {
		pub = append(pub, c.ID)
	}
	if want := []string{"pub", "pubthread"}; !slices.Equal(pub, want) {
		t.Errorf("public Channels: %v, want %v", pub, want)
	}
	if n := len(s.Channels("", true)); n != 5 {
		t.Errorf("private Channels: %d", n)
	}
	// Filters do not open what is hidden.
	if r := search(t, s, query.SearchRequest{Query: "shared", Source: "p"}); len(r.Messages)+len(r.Documents) != 0 {
		t.Errorf("source filter on a private source: %v %v", msgIDs(r), docKeys(r))
	}
	wantMessages(t, s, query.SearchRequest{Query: "from:bo"})
	wantMessages(t, s, query.SearchRequest{Query: "from:ana"}, "m2", "m0")
	wantMessages(t, s, query.SearchRequest{Query: "from:ana", Private: true}, "m4", "m2", "m0")
	if r := search(t, s, query.SearchRequest{Query: "channel:dm-ana"}); len(r.Messages) != 0 || r.TotalMessages != 0 {
		t.Errorf("channel filter on a hidden channel: %v", msgIDs(r))
	}
}

// testVisibilityCounts: counts and stats without credentials count only
// what such callers see: no private channel, nor its threads (even one
// stored before its channel), nor a private or disabled source, and no
// source with nothing to see in it (uploads, an empty source); channels
// and threads apart.
func testVisibilityCounts(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	mustPutSource(t, s, record.Source{ID: "e", Name: "Empty", Type: "web", Enabled: true})
	mustPutSource(t, s, record.Source{ID: "off", Name: "Off", Type: "slack"})
	mustPutChannels(t, s, record.Channel{SourceID: "off", ID: "o", Name: "off-topic"})
	mustPutMessages(t, s, record.Message{SourceID: "off", ChannelID: "o", ID: "o1", Content: "switched off", Timestamp: t0})
	mustPutDocuments(t, s, record.Document{SourceID: "off", Key: "o.md", Title: "Off", Content: "switched off"})
	// A thread of a private DM stored before the DM: it is the DM's.
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "early", Name: "early thread", ParentID: "dm2", Kind: "thread"})
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "dm2", Name: "dm-bo", Private: true})
	mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "early", ID: "e1", Content: "early words", Timestamp: t0})

	want := func(what string, got, want record.Counts) {
		t.Helper()
		if got.MessageTerms, got.DocumentTerms = 0, 0; got != want {
			t.Errorf("%s: %+v, want %+v", what, got, want)
		}
	}
	want("public counts", s.Counts(false), record.Counts{Sources: 1, Channels: 1, Threads: 1, Messages: 2, Documents: 1})
	want("private counts", s.Counts(true), record.Counts{Sources: 5, Channels: 5, Threads: 3, Messages: 7, Documents: 3})
	for _, c := range []struct {
		source  string
		private bool
		want    record.SourceStats
	}{
		{"s", false, record.SourceStats{Channels: 1, Threads: 1, Messages: 2, Documents: 1}},
		{"s", true, record.SourceStats{Channels: 3, Threads: 3, Messages: 5, Documents: 1}},
		{"p", false, record.SourceStats{}},
		{"p", true, record.SourceStats{Channels: 1, Messages: 1, Documents: 1}},
		{"off", false, record.SourceStats{}},
		{"off", true, record.SourceStats{Channels: 1, Messages: 1, Documents: 1}},
		{"e", false, record.SourceStats{}},
		{record.UploadsSourceID, false, record.SourceStats{}},
	} {
		if got := s.SourceStats(c.source, c.private); got != c.want {
			t.Errorf("stats of %s (private %v): %+v, want %+v", c.source, c.private, got, c.want)
		}
	}
	if list, n := s.Documents(0, 10, false); n != 1 || len(list) != 1 || list[0].Key != "a.md" {
		t.Errorf("public document list: %d %+v", n, list)
	}
	if _, n := s.Documents(0, 10, true); n != 3 {
		t.Errorf("private document list holds %d", n)
	}
	// A channel of the private source made public makes the source show;
	// so does a document in the empty one.
	if _, err := s.SetChannelVisibility("p", "room", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	mustPutDocuments(t, s, record.Document{SourceID: "e", Key: "e.md", Title: "E", Content: "no longer empty"})
	want("public counts with p's room public and a page in e", s.Counts(false),
		record.Counts{Sources: 3, Channels: 2, Threads: 1, Messages: 3, Documents: 2})
}

// testVisibilityOverrides: an operator's choice on a channel overrides
// its source and the platform; threads follow their parent unless given
// their own; inherit returns to the default.
func testVisibilityOverrides(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	set := func(source, channel, vis string) {
		t.Helper()
		ci, err := s.SetChannelVisibility(source, channel, vis)
		if err != nil {
			t.Fatal(err)
		}
		if ci.ID != channel || ci.Visibility != vis {
			t.Errorf("SetChannelVisibility returned %+v", ci)
		}
	}
	set("s", "dm", record.VisibilityPublic)
	wantVisible(t, s, "a.md", "dm", "dmthread", "pub", "pubthread")
	if ci, err := s.SetChannelVisibility("s", "dm", record.VisibilityPublic); err != nil || ci.Hidden || ci.Messages != 1 {
		t.Errorf("public DM info: %+v %v", ci, err)
	}
	set("s", "dmthread", record.VisibilityPrivate)
	wantVisible(t, s, "a.md", "dm", "pub", "pubthread")
	set("p", "room", record.VisibilityPublic) // a channel shows; the private source's documents do not
	wantVisible(t, s, "a.md", "dm", "pub", "pubthread", "room")
	set("s", "pub", record.VisibilityPrivate)
	wantVisible(t, s, "a.md", "dm", "room")
	for _, c := range [][2]string{{"s", "dm"}, {"s", "dmthread"}, {"p", "room"}, {"s", "pub"}} {
		set(c[0], c[1], record.VisibilityInherit)
	}
	wantVisible(t, s, "a.md", "pub", "pubthread")
	// The choices are on the source's record.
	set("s", "dm", record.VisibilityPublic)
	if src, _ := s.Source("s"); !maps.Equal(src.ChannelVisibility, map[string]string{"dm": record.VisibilityPublic}) {
		t.Errorf("source record: %v", src.ChannelVisibility)
	}
	infos, _, _ := s.SourceChannels("s")
	for _, ci := range infos {
		want := record.VisibilityInherit
		if ci.ID == "dm" {
			want = record.VisibilityPublic
		}
		if ci.Visibility != want {
			t.Errorf("SourceChannels %s: %q, want %q", ci.ID, ci.Visibility, want)
		}
	}
	// A private source made public shows its documents and channels.
	if _, err := s.UpdateSource("p", func(src *record.Source) error { src.Visibility = record.VisibilityPublic; return nil }); err != nil {
		t.Fatal(err)
	}
	wantVisible(t, s, "a.md", "b.md", "dm", "dmthread", "pub", "pubthread", "room")
	// A private thread of a public channel stays private when its parent is opened.
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "mods", Name: "moderators", ParentID: "pub", Kind: "thread", Private: true})
	mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "mods", ID: "x", Content: "shared secret", Timestamp: t0})
	set("s", "pub", record.VisibilityPublic)
	if got := visible(t, s, false); slices.Contains(got, "mods") {
		t.Errorf("opening the parent opened the private thread: %v", got)
	}
	set("s", "mods", record.VisibilityPublic)
	if got := visible(t, s, false); !slices.Contains(got, "mods") {
		t.Errorf("the operator's public thread is hidden: %v", got)
	}
}

// testVisibilityDisabled: a disabled source shows nothing, whatever its
// channels say; enabled again, it shows as before.
func testVisibilityDisabled(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	if _, err := s.SetChannelVisibility("s", "pub", record.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	enable := func(on bool) {
		t.Helper()
		if _, err := s.UpdateSource("s", func(src *record.Source) error { src.Enabled = on; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	enable(false)
	wantVisible(t, s)
	if ch, _ := s.ChannelBySlug("general"); !ch.Hidden {
		t.Error("a channel of a disabled source is not Hidden")
	}
	if d, _ := s.Document(record.DocumentID("s", "a.md")); !d.Hidden {
		t.Error("a document of a disabled source is not Hidden")
	}
	if c := s.Counts(false); c.Messages != 0 || c.Documents != 0 || c.Channels != 0 || c.Threads != 0 || c.Sources != 0 {
		t.Errorf("public counts with s disabled: %+v", c)
	}
	enable(true)
	wantVisible(t, s, "a.md", "pub", "pubthread")
}

// testVisibilityNewContent: content written later lands on the side its
// channel or source is on.
func testVisibilityNewContent(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	mustPutMessages(t, s,
		record.Message{SourceID: "s", ChannelID: "dm", ID: "late-dm", Content: "shared late", Timestamp: t0},
		record.Message{SourceID: "s", ChannelID: "pub", ID: "late-pub", Content: "shared late", Timestamp: t0})
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "newthread", Name: "new thread", ParentID: "dm", Kind: "thread"})
	mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "newthread", ID: "late-thread", Content: "shared late", Timestamp: t0})
	mustPutDocuments(t, s, record.Document{SourceID: "p", Key: "c.md", Title: "Later", Content: "shared late"})
	r := search(t, s, query.SearchRequest{Query: "late"})
	if got := msgIDs(r); !slices.Equal(got, []string{"late-pub"}) || len(r.Documents) != 0 {
		t.Errorf("public search for new content: %v %v", got, docKeys(r))
	}
	if r := search(t, s, query.SearchRequest{Query: "late", Private: true}); r.TotalMessages != 3 || r.TotalDocuments != 1 {
		t.Errorf("private search for new content: %d %d", r.TotalMessages, r.TotalDocuments)
	}
}

// testSetVisibilityInvalid: unknown channels and sources are ErrNotFound,
// unknown visibilities ErrInvalid.
func testSetVisibilityInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	_, err := s.SetChannelVisibility("s", "nope", record.VisibilityPublic)
	wantErr(t, "unknown channel", err, record.ErrNotFound)
	_, err = s.SetChannelVisibility("nope", "pub", record.VisibilityPublic)
	wantErr(t, "unknown source", err, record.ErrNotFound)
	_, err = s.SetChannelVisibility("s", "room", record.VisibilityPublic)
	wantErr(t, "another source's channel", err, record.ErrNotFound)
	_, err = s.SetChannelVisibility("s", "dm", "open")
	wantErr(t, "unknown visibility", err, record.ErrInvalid)
	wantVisible(t, s, "a.md", "pub", "pubthread")
}

// testExcludeChannel: excluding a channel deletes it, its threads and
// their messages, and keeps later writes of them out without an error.
func testExcludeChannel(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	if err := s.ExcludeChannel("s", "pub"); err != nil {
		t.Fatal(err)
	}
	if err := s.ExcludeChannel("s", "pub"); err != nil {
		t.Errorf("excluding twice: %v", err)
	}
	wantErr(t, "excluding an unknown channel", s.ExcludeChannel("s", "nope"), record.ErrNotFound)
	wantErr(t, "excluding in an unknown source", s.ExcludeChannel("nope", "pub"), record.ErrNotFound)
	gone := func() {
		t.Helper()
		for _, id := range []string{"pub", "pubthread"} {
			if _, ok := s.ChannelByID("s", id); ok {
				t.Errorf("excluded channel %s present", id)
			}
		}
		if _, ok := s.ChannelBySlug("general"); ok {
			t.Error("excluded channel's slug present")
		}
		if got := visible(t, s, true); !slices.Equal(got, []string{"a.md", "b.md", "dm", "dmthread", "room"}) {
			t.Errorf("after exclusion: %v", got)
		}
		if st := s.SourceStats("s", true); st.Channels != 1 || st.Threads != 1 || st.Messages != 2 {
			t.Errorf("stats after exclusion: %+v", st)
		}
	}
	gone()
	infos, excluded, err := s.SourceChannels("s")
	if err != nil || !slices.Equal(excluded, []string{"pub"}) || len(infos) != 2 {
		t.Errorf("SourceChannels: %v %v %+v", err, excluded, infos)
	}
	if src, _ := s.Source("s"); !slices.Equal(src.ExcludedChannels, []string{"pub"}) {
		t.Errorf("source record: %v", src.ExcludedChannels)
	}
	// A re-import is kept out, without an error.
	if _, err := s.PutChannels([]record.Channel{
		{SourceID: "s", ID: "pub", Name: "general"},
		{SourceID: "s", ID: "pubthread", Name: "pub thread", ParentID: "pub", Kind: "thread"},
	}); err != nil {
		t.Fatal(err)
	}
	c, err := s.PutMessagesCounted([]record.Message{
		{SourceID: "s", ChannelID: "pub", ID: "m0", Author: "ana", Content: "shared again", Timestamp: t0},
		{SourceID: "s", ChannelID: "pubthread", ID: "m2", Author: "ana", Content: "shared again", Timestamp: t0},
	})
	if err != nil || c != (record.PutCounts{KeptOut: 2}) {
		t.Errorf("re-import: %+v %v", c, err)
	}
	gone()
}

// testRestoreChannel: a restored channel is stored again by later writes;
// what was deleted stays deleted until then.
func testRestoreChannel(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	if err := s.ExcludeChannel("s", "pub"); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreChannel("s", "pub"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "restoring twice", s.RestoreChannel("s", "pub"), record.ErrNotFound)
	wantErr(t, "restoring a channel never excluded", s.RestoreChannel("s", "dm"), record.ErrNotFound)
	if _, ok := s.ChannelByID("s", "pub"); ok {
		t.Error("restoring brought the channel back without a write")
	}
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "pub", Name: "general"})
	if n := mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "pub", ID: "m0", Author: "ana", Content: "shared again", Timestamp: t0}); n != 1 {
		t.Errorf("write after restore stored %d", n)
	}
	if src, _ := s.Source("s"); len(src.ExcludedChannels) != 0 {
		t.Errorf("excluded after restore: %v", src.ExcludedChannels)
	}
}

// testOptOut: opting an author out deletes their messages in the source
// (any case) and keeps their later messages out.
func testOptOut(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	mustPutMessages(t, s, record.Message{SourceID: "p", ChannelID: "room", ID: "bo-p", Author: "bo", Content: "elsewhere", Timestamp: t0})
	// bo wrote m1 (the DM) and m3 (its thread) in s, and bo-p in p.
	if n, err := s.OptOut("s", "BO"); err != nil || n != 2 {
		t.Fatalf("opt-out removed %d: %v", n, err)
	}
	if n, err := s.OptOut("s", "bo"); err != nil || n != 0 {
		t.Errorf("opting out twice removed %d: %v", n, err)
	}
	_, err := s.OptOut("nope", "bo")
	wantErr(t, "opt-out of an unknown source", err, record.ErrNotFound)
	if got := visible(t, s, true); !slices.Equal(got, []string{"a.md", "b.md", "pub", "pubthread", "room"}) {
		t.Errorf("after opt-out: %v", got)
	}
	if r := search(t, s, query.SearchRequest{Query: "from:bo", Private: true}); !slices.Equal(msgIDs(r), []string{"bo-p"}) {
		t.Errorf("bo's messages in another source should stay: %v", msgIDs(r))
	}
	// Their later messages are kept out; others' are stored.
	c, err := s.PutMessagesCounted([]record.Message{
		{SourceID: "s", ChannelID: "pub", ID: "n1", Author: "Bo", Content: "shared again", Timestamp: t0},
		{SourceID: "s", ChannelID: "pub", ID: "n2", Author: "ana", Content: "shared again", Timestamp: t0},
	})
	if err != nil || c != (record.PutCounts{New: 1, KeptOut: 1}) {
		t.Errorf("writes after opt-out: %+v %v", c, err)
	}
	if src, _ := s.Source("s"); !slices.Equal(src.OptOuts, []string{"BO"}) {
		t.Errorf("source record: %v", src.OptOuts)
	}
	if st := s.SourceStats("s", true); st.Messages != 3 {
		t.Errorf("stats after opt-out: %+v", st)
	}
}

// testOptOutThreads: a thread named after an opted-out author's message
// is renamed, and stays so when written again.
func testOptOutThreads(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPutSource(t, s, record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true})
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "c", Name: "general"},
		record.Channel{SourceID: "s", ID: "c-1", Name: "my secret plan", ParentID: "c", Kind: "thread", NameAuthor: "ana"})
	mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "c", ID: "c-1", Author: "ana", Content: "my secret plan", Timestamp: t0})
	if _, err := s.OptOut("s", "ana"); err != nil {
		t.Fatal(err)
	}
	c := mustChannel(t, s, "s", "c-1")
	if c.Name == "my secret plan" {
		t.Fatalf("thread still named after the opted-out author")
	}
	renamed := c.Name
	got := mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "c-1", Name: "my secret plan", ParentID: "c", Kind: "thread", NameAuthor: "Ana"})
	if got[0].Name != renamed || got[0].NameAuthor != "" {
		t.Errorf("written again: %+v", got[0])
	}
	if c := mustChannel(t, s, "s", "c-1"); c.Name != renamed || c.NameAuthor != "" {
		t.Errorf("stored as %+v", c)
	}
	if r := search(t, s, query.SearchRequest{Query: "secret", Private: true}); len(r.Messages) != 0 {
		t.Errorf("the opted-out author's message is found: %v", msgIDs(r))
	}
}

// testOptIn: an author opted in again may be stored again; what was
// deleted stays deleted.
func testOptIn(t *testing.T, h Harness) {
	s := h.Open(t)
	seedPrivate(t, s)
	if _, err := s.OptOut("s", "bo"); err != nil {
		t.Fatal(err)
	}
	if err := s.OptIn("s", "Bo"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "opting in twice", s.OptIn("s", "bo"), record.ErrNotFound)
	if got := visible(t, s, true); slices.Contains(got, "dm") {
		t.Errorf("opting in brought deleted messages back: %v", got)
	}
	if n := mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "dm", ID: "m1", Author: "bo", Content: "shared again", Timestamp: t0}); n != 1 {
		t.Errorf("write after opt-in stored %d", n)
	}
	if src, _ := s.Source("s"); len(src.OptOuts) != 0 {
		t.Errorf("opt-outs after opt-in: %v", src.OptOuts)
	}
}

// testSettings: settings are set, trimmed and removed (empty value);
// names are a-z and '_'; values are one line.
func testSettings(t *testing.T, h Harness) {
	s := h.Open(t)
	if got := s.Settings(); len(got) != 0 {
		t.Errorf("settings of an empty store: %v", got)
	}
	got, err := s.UpdateSettings(map[string]string{"site_name": " Acme Help ", "site_description": "x"})
	if err != nil || !maps.Equal(got, map[string]string{"site_name": "Acme Help", "site_description": "x"}) {
		t.Fatalf("update: %v %v", got, err)
	}
	if _, err := s.UpdateSettings(map[string]string{"site_description": ""}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"site_name": "Acme Help"}
	for name, bad := range map[string]map[string]string{
		"upper-case name":   {"Bad": "x"},
		"name with a space": {"bad key": "x"},
		"empty name":        {"": "x"},
		"control in value":  {"site_name": "a\x00b"},
		"newline in value":  {"site_name": "a\nb"},
	} {
		_, err := s.UpdateSettings(bad)
		wantErr(t, name, err, record.ErrInvalid)
	}
	got = s.Settings()
	if !maps.Equal(got, want) {
		t.Errorf("settings %v, want %v", got, want)
	}
	got["site_name"] = "changed"
	if again := s.Settings(); !maps.Equal(again, want) {
		t.Errorf("changing a read changed the store: %v", again)
	}
}

// testSlugsIgnorePrivate: a public channel or document gets the slug of
// its name whether or not a private one of the same name exists — a
// private record's slug carries a suffix of its key, so it never takes a
// plain name, and a public record's "-2" would otherwise tell of it.
func testSlugsIgnorePrivate(t *testing.T, h Harness) {
	slugs := func(withPrivate bool) (channel, doc string) {
		s := h.Open(t)
		mustPutSource(t, s, record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true})
		mustPutSource(t, s, record.Source{ID: "p", Name: "P", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate})
		if withPrivate {
			mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "dm", Name: "handbook", Private: true},
				record.Channel{SourceID: "p", ID: "room", Name: "handbook"})
			mustPutDocuments(t, s, record.Document{SourceID: "p", Key: "h.md", Title: "Handbook", Content: "private text"})
		}
		mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "pub", Name: "handbook"})
		mustPutDocuments(t, s, record.Document{SourceID: "s", Key: "h.md", Title: "Handbook", Content: "public text"})
		ch := mustChannel(t, s, "s", "pub")
		d, _ := s.Document(record.DocumentID("s", "h.md"))
		if withPrivate {
			for _, id := range []string{"dm"} {
				if c := mustChannel(t, s, "s", id); c.Slug == "handbook" || !strings.HasPrefix(c.Slug, "handbook-") {
					t.Errorf("private channel %s: slug %q", id, c.Slug)
				}
			}
		}
		return ch.Slug, d.Slug
	}
	c0, d0 := slugs(false)
	c1, d1 := slugs(true)
	if c0 != "handbook" || c1 != c0 || d0 != "handbook" || d1 != d0 {
		t.Errorf("public slugs without private records %q, %q; with them %q, %q", c0, d0, c1, d1)
	}
}
