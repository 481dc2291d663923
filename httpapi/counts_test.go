package httpapi

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

// sourcesListing is what /sources shows of one source: the counts it
// states and the items it lists.
type sourcesListing struct {
	channels, messages, documents int // as stated
	listedChannels, listedDocs    int
}

var (
	sourcesMeta    = regexp.MustCompile(`<p class="meta">([\d,]+) channels? · ([\d,]+) messages? · ([\d,]+) documents? ·`)
	sourcesChannel = regexp.MustCompile(`<li><a href="/c/[^"]*">#`)
)

// parseSourcesPage reads /sources by source id.
func parseSourcesPage(t testing.TB, page string) map[string]sourcesListing {
	t.Helper()
	out := map[string]sourcesListing{}
	sections := strings.Split(page, `<section class="source" id="source-`)[1:]
	for _, sec := range sections {
		id, rest, _ := strings.Cut(sec, `"`)
		rest, _, _ = strings.Cut(rest, "</section>")
		m := sourcesMeta.FindStringSubmatch(rest)
		if m == nil {
			t.Fatalf("/sources: source %s states no counts: %s", id, rest)
		}
		n := func(s string) int {
			v, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
			return v
		}
		out[id] = sourcesListing{
			channels: n(m[1]), messages: n(m[2]), documents: n(m[3]),
			listedChannels: len(sourcesChannel.FindAllString(rest, -1)),
			listedDocs:     strings.Count(rest, `<li><a href="/d/`),
		}
	}
	return out
}

// TestSourcesPageCountsWhatItLists: without credentials, /sources lists
// only the sources that show something, and each states as many channels
// and documents as it lists; /healthz counts the same. A private channel
// (and its thread), a private source, a disabled one, an empty one and the
// empty uploads source are neither listed nor counted; threads are not
// channels.
func TestSourcesPageCountsWhatItLists(t *testing.T) {
	ts := start(t)
	e := ts.eng
	for _, src := range []record.Source{
		{ID: "team", Name: "Team Slack", Type: "slack", Enabled: true},
		{ID: "hb", Name: "Handbook", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate},
		{ID: "web", Name: "Website", Type: "web", Enabled: true},
		{ID: "off", Name: "Switched off", Type: "upload"},
		{ID: "docs", Name: "Docs", Type: "upload", Enabled: true},
	} {
		if _, err := e.PutSource(src); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.PutChannels([]record.Channel{
		{SourceID: "team", ID: "C1", Name: "general"},
		{SourceID: "team", ID: "C2", Name: "random"},
		{SourceID: "team", ID: "G1", Name: "secretroom", Private: true},
		{SourceID: "team", ID: "C1-start", Name: "Linked thread", ParentID: "C1", Kind: "thread"},
		{SourceID: "team", ID: "C1-gone", Name: "Orphan thread", ParentID: "C1", Kind: "thread"},
		{SourceID: "team", ID: "G1-t", Name: "secretthread", ParentID: "G1", Kind: "thread"},
		{SourceID: "off", ID: "O1", Name: "offroom"},
	}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	msg := func(src, ch, id string) record.Message {
		return record.Message{SourceID: src, ChannelID: ch, ID: id, Author: "ana", Content: "words of " + id, Timestamp: t0}
	}
	if _, err := e.PutMessages([]record.Message{
		msg("team", "C1", "C1-start"), msg("team", "C1", "m2"), msg("team", "C1-start", "r1"), msg("team", "C1-gone", "r2"),
		msg("team", "G1", "g1"), msg("team", "G1-t", "g2"), msg("off", "O1", "o1"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutDocuments([]record.Document{
		{SourceID: "docs", Key: "a.md", Title: "A", Content: "alpha"},
		{SourceID: "docs", Key: "b.md", Title: "B", Content: "beta"},
		{SourceID: "hb", Key: "pay.md", Title: "secretpay", Content: "pay"},
		{SourceID: "off", Key: "o.md", Title: "Off", Content: "off"},
	}); err != nil {
		t.Fatal(err)
	}

	r := htmlGet(t, ts, "/sources")
	if r.status != 200 {
		t.Fatalf("/sources: %d", r.status)
	}
	page := string(r.body)
	for _, secret := range []string{"secret", "Handbook", "Switched off", "Website", "offroom", `id="source-` + record.UploadsSourceID + `"`} {
		if strings.Contains(page, secret) {
			t.Errorf("/sources shows %q to a caller without credentials", secret)
		}
	}
	listed := parseSourcesPage(t, page)
	want := map[string]sourcesListing{
		"team": {channels: 2, messages: 4, listedChannels: 2},
		"docs": {documents: 2, listedDocs: 2},
	}
	var sum sourcesListing
	for id, l := range listed {
		if l != want[id] {
			t.Errorf("/sources, source %s: %+v, want %+v", id, l, want[id])
		}
		if l.channels != l.listedChannels || l.documents != l.listedDocs {
			t.Errorf("/sources, source %s: states %d channels and %d documents, lists %d and %d",
				id, l.channels, l.documents, l.listedChannels, l.listedDocs)
		}
		sum.channels += l.listedChannels
		sum.documents += l.listedDocs
		sum.messages += l.messages
	}
	if len(listed) != len(want) {
		t.Errorf("/sources lists %d sources, want %d", len(listed), len(want))
	}
	if !strings.Contains(page, `>Orphan thread</a>`) {
		t.Error("/sources does not list the thread whose start is missing")
	}

	// The home page: its counts are those of what it lists.
	home := string(htmlGet(t, ts, "/").body)
	stated := regexp.MustCompile(`([\d,]+) messages? in ([\d,]+) channels? and ([\d,]+) documents? from ([\d,]+) sources?\.`).FindStringSubmatch(home)
	if stated == nil {
		t.Fatalf("the home page states no counts")
	}
	channels := regexp.MustCompile(`<li><a href="/c/[^"]+">#`).FindAllString(home, -1)
	var collected int
	for _, m := range regexp.MustCompile(`<a href="/sources#source-[^"]+">[^<]+</a> <span class="meta">([\d,]+) documents?</span>`).FindAllStringSubmatch(home, -1) {
		collected += atoi(t, m[1])
	}
	options := regexp.MustCompile(`<option value="[^"]+"`).FindAllString(home, -1)
	if atoi(t, stated[2]) != len(channels) || atoi(t, stated[3]) != collected || atoi(t, stated[4]) != len(options) ||
		atoi(t, stated[1]) != sum.messages || len(channels) != sum.channels {
		t.Errorf("the home page states %q; lists %d channels, %d documents, %d sources", stated[0], len(channels), collected, len(options))
	}
	for _, secret := range []string{"secret", "Handbook", "Switched off", "offroom"} {
		if strings.Contains(home, secret) {
			t.Errorf("the home page shows %q to a caller without credentials", secret)
		}
	}

	var h struct{ Sources, Channels, Threads, Messages, Documents int }
	if err := json.Unmarshal(ts.get(t, "/healthz").body, &h); err != nil {
		t.Fatal(err)
	}
	if h.Sources != len(listed) || h.Channels != sum.channels || h.Documents != sum.documents || h.Messages != sum.messages || h.Threads != 2 {
		t.Errorf("/healthz counts %+v; /sources lists %d sources, %d channels, %d documents, %d messages (and 2 threads)",
			h, len(listed), sum.channels, sum.documents, sum.messages)
	}
	if err := json.Unmarshal(ts.get(t, "/healthz", bearer...).body, &h); err != nil {
		t.Fatal(err)
	}
	if h.Sources != 6 || h.Channels != 4 || h.Threads != 3 || h.Messages != 7 || h.Documents != 4 {
		t.Errorf("/healthz with the key counts %+v", h)
	}
}
