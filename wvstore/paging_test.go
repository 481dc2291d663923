package wvstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/storetest"
)

// pagedStore is what the paging tests read of both stores.
type pagedStore interface {
	storetest.Store
	ChannelWindow(slug string, q record.WindowQuery) (record.ChannelWindow, error)
	ChannelPageTimes(slug string, size int) ([]time.Time, error)
}

// TestDefaultSettings: on a node with Weaviate's default settings (no
// QUERY_MAXIMUM_RESULTS), phrases, quotes and the other characters a
// user may type answer as in the memory store: the same hits (documents
// in any order) and totals, or the same invalid-query error, never
// another error.
func TestDefaultSettings(t *testing.T) {
	cl := weaviatetest.Start(t, 1)
	mem, wv := memStore(t), pagedStore(openNS(t, cl, "Dflt"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	texts := []string{"drop table users", "never drop the table", "go to the docs", "to be or not", "a b c", "x y z", "p q",
		"foo bar (a OR b)", "100% sure -- it's done: ok", `a"b quoted "drop table" here`}
	for _, st := range []pagedStore{mem, wv} {
		fillChat(t, st, 40, func(i int) record.Message {
			return record.Message{ID: fmt.Sprintf("m%02d", i), Author: "ana", Content: texts[i%len(texts)], Timestamp: t0.Add(time.Duration(i) * time.Minute)}
		})
		var docs []record.Document
		for i := range 10 {
			docs = append(docs, record.Document{Key: fmt.Sprint("k", i), Title: texts[(i+3)%len(texts)], Content: texts[i],
				UpdatedAt: t0.Add(time.Duration(i) * time.Hour)})
		}
		if _, err := st.PutDocuments(docs); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{`"drop table"`, `"to the"`, `"drop table" users`, `-"drop table" drop`, `"unbalanced`, `"drop`,
		`a"b`, `"`, `""`, `-"x y"`, `"x y"`, `foo*`, `(a OR b)`, `\`, `%`, `'`, `--`, `:`, `source:x "p q"`, `source:chat "p q"`,
		`in:general "to the"`, `"drop" "table"`, `""drop""`, `" "`, `-`, `"-"`, `from:"ana" "x"`, `drop -"never drop"`} {
		sameSearch(t, mem, wv, query.SearchRequest{Query: q, Limit: 20, Private: true}, false)
	}
}

// TestDeepPaging: on a node whose QUERY_MAXIMUM_RESULTS is 300, with
// maxResults lowered to match, a channel of 1,170 messages (three a
// minute, and 315 at one time) and 700 documents (320 at one time) read
// at every depth exactly as the memory store reads them: pages of the
// channel, windows, the documents, searches without ranked words, phrase
// searches, positions, ids, page times; an opt-out and a source's
// deletion that touch more objects than a query reads. A ranked search
// reads at most 300 candidates: a page past them comes back short, its
// total a lower bound that says so. The collections have three shards,
// whose merge of a sorted query needs the properties it sorts by read.
func TestDeepPaging(t *testing.T) {
	defer func(m int) { maxResults = m }(maxResults)
	maxResults = 300
	cl := weaviatetest.StartWith(t, 1, weaviatetest.Options{Env: []string{"QUERY_MAXIMUM_RESULTS=300"}})
	s, err := Open(context.Background(), Options{URL: cl.Nodes[0].URL(), Namespace: "Deep", Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	mem, wv := memStore(t), pagedStore(s)
	t0 := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, st := range []pagedStore{mem, wv} {
		fillDeep(t, st, t0)
	}
	checkChannelReads(t, mem, wv, t0)
	checkDocumentReads(t, mem, wv)
	checkSearches(t, mem, wv)

	for _, st := range []pagedStore{mem, wv} {
		if n, err := st.OptOut("chat", "xavier"); err != nil || n != 325 {
			t.Fatalf("opt-out: %d %v", n, err)
		}
	}
	same(t, "channels after the opt-out", channelNames(mem), channelNames(wv))
	same(t, "ids after the opt-out", channelMessageIDs(t, mem, "general"), channelMessageIDs(t, wv, "general"))
	samePage(t, mem, wv, 700, 100)

	for _, st := range []pagedStore{mem, wv} {
		if err := st.DeleteSource("chat"); err != nil {
			t.Fatal(err)
		}
		// Every slug was freed: new ones of the same names take them.
		if _, err := st.PutSource(record.Source{ID: "new", Name: "New", Type: "discord", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutChannels([]record.Channel{{SourceID: "new", ID: "c", Name: "general"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutDocuments([]record.Document{{SourceID: "new", Key: "k", Title: "Doc 650"}}); err != nil {
			t.Fatal(err)
		}
	}
	same(t, "counts after the deletion", mem.Counts(true).Messages+mem.Counts(true).Documents,
		wv.Counts(true).Messages+wv.Counts(true).Documents)
	same(t, "channels after the deletion", channelNames(mem), channelNames(wv))
	d, _ := wv.Documents(0, 10, true)
	if len(d) != 1 || d[0].Slug != "doc-650" {
		t.Errorf("after the deletion: %+v", d)
	}
}

// fillDeep writes TestDeepPaging's records: 1,300 messages of which 1,170
// in #general, xavier writing one in four; a thread started by his
// message m1297; 700 documents.
func fillDeep(t *testing.T, st pagedStore, t0 time.Time) {
	t.Helper()
	minute := func(i int) int {
		switch {
		case i < 500:
			return i / 3
		case i < 850: // 350 at one time, 315 of them in #general
			return 167
		}
		return 168 + (i-850)/3
	}
	words := []string{"deploy the build", "to the point", "hello world", "release notes to the team", "hello again"}
	fillChat(t, st, 1300, func(i int) record.Message {
		m := record.Message{ID: fmt.Sprintf("m%04d", i), Author: "ana", Content: words[i%len(words)],
			Timestamp: t0.Add(time.Duration(minute(i)) * time.Minute)}
		if i%4 == 1 {
			m.Author = "xavier"
		}
		if i%10 == 9 {
			m.ChannelID = "other"
		}
		return m
	})
	if _, err := st.PutChannels([]record.Channel{{SourceID: "chat", ID: "m1297", ParentID: "general", Kind: "thread",
		Name: "xavier asks"}}); err != nil {
		t.Fatal(err)
	}
	var docs []record.Document
	for i := range 700 {
		h := i / 2
		switch {
		case i >= 200 && i < 520:
			h = 100
		case i >= 520:
			h = 101 + (i-520)/2
		}
		docs = append(docs, record.Document{SourceID: "chat", Key: fmt.Sprintf("k%04d", 699-i), Title: fmt.Sprint("Doc ", i),
			Content: words[i%len(words)], UpdatedAt: t0.Add(time.Duration(h) * time.Hour)})
	}
	if _, err := st.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
}

// checkChannelReads compares the reads of #general at every depth.
func checkChannelReads(t *testing.T, mem, wv pagedStore, t0 time.Time) {
	t.Helper()
	for _, off := range []int{0, 150, 290, 299, 300, 450, 480, 500, 560, 600, 700, 780, 800, 1000, 1100, 1169, 1170, 2000} {
		for _, lim := range []int{1, 100, 200} {
			samePage(t, mem, wv, off, lim)
		}
	}
	samePage(t, mem, wv, 0, 1500)
	samePage(t, mem, wv, 420, 700)
	ids := channelMessageIDs(t, mem, "general")
	same(t, "ChannelMessageIDs", ids, channelMessageIDs(t, wv, "general"))
	for _, id := range []string{"m0000", "m0499", "m0500", "m0701", "m0848", "m0850", "m1299"} {
		a, aerr := mem.MessagePosition("general", id)
		b, berr := wv.MessagePosition("general", id)
		same(t, "position of "+id, fmt.Sprint(a, aerr), fmt.Sprint(b, berr))
	}
	tie := record.Anchor{Time: t0.Add(167 * time.Minute)}
	for _, q := range []record.WindowQuery{
		{Limit: 50}, {Limit: 200}, {Around: record.Anchor{ID: "m0701"}, Limit: 51}, {Around: record.Anchor{ID: "m1000"}, Limit: 200},
		{Before: record.Anchor{ID: "m1000"}, Limit: 200}, {After: record.Anchor{ID: "m0450"}, Limit: 200},
		{After: tie, Limit: 100}, {Before: tie, Limit: 100}, {Around: tie, Limit: 30},
		{After: record.Anchor{ID: "m0300"}, Before: record.Anchor{ID: "m1200"}, Limit: 200},
	} {
		a, aerr := mem.ChannelWindow("general", q)
		b, berr := wv.ChannelWindow("general", q)
		same(t, fmt.Sprintf("window %+v", q), windowString(a, aerr), windowString(b, berr))
	}
	a, aerr := mem.ChannelPageTimes("general", 50)
	b, berr := wv.ChannelPageTimes("general", 50)
	same(t, "ChannelPageTimes", fmt.Sprint(a, aerr), fmt.Sprint(b, berr))
}

// checkDocumentReads compares the document listings at every depth.
func checkDocumentReads(t *testing.T, mem, wv pagedStore) {
	t.Helper()
	for _, off := range []int{0, 150, 290, 300, 400, 519, 600, 690} {
		for _, lim := range []int{100, 1000} {
			for _, private := range []bool{true, false} {
				a, an := mem.Documents(off, lim, private)
				b, bn := wv.Documents(off, lim, private)
				same(t, fmt.Sprintf("Documents(%d, %d, %v)", off, lim, private), docIDs(a, an), docIDs(b, bn))
			}
		}
	}
	key := func(ds []record.Document) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Key)
		}
		return out
	}
	same(t, "SourceDocuments", key(mem.SourceDocuments("chat")), key(wv.SourceDocuments("chat")))
}

// checkSearches compares searches without ranked words and phrase
// searches at every depth, and checks the bound of a ranked search's
// candidates.
func checkSearches(t *testing.T, mem, wv pagedStore) {
	t.Helper()
	for _, q := range []string{"in:general", "after:2026-02-01T02:00:00Z", "from:ana", `"to the"`, `"hello world"`} {
		for _, off := range []int{0, 250, 290, 300, 450, 600, 1000, 1100} {
			sameSearch(t, mem, wv, query.SearchRequest{Query: q, Offset: off, Limit: 100, Private: true}, true)
		}
	}
	for _, off := range []int{0, 250, 350} {
		req := query.SearchRequest{Query: "hello", Offset: off, Limit: 100, Private: true}
		a, err := mem.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := wv.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		// More match than a query reads: the total is a lower bound.
		want := min(max(maxResults-off, 0), 100)
		if !b.MessagesAtLeast || b.TotalMessages >= a.TotalMessages || b.TotalMessages < min(off+100, maxResults) || len(b.Messages) != want {
			t.Errorf("%+v: totals %d and %d (lower bound: %v), %d hits (want %d)", req, a.TotalMessages, b.TotalMessages,
				b.MessagesAtLeast, len(b.Messages), want)
		}
	}
}

// samePage compares a page of #general.
func samePage(t *testing.T, mem, wv pagedStore, offset, limit int) {
	t.Helper()
	page := func(st pagedStore) string {
		ms, total, err := st.ChannelMessages("general", offset, limit)
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.ID
		}
		return fmt.Sprint(total, err, ids)
	}
	same(t, fmt.Sprintf("ChannelMessages(%d, %d)", offset, limit), page(mem), page(wv))
}

// sameSearch compares a search's hits and totals, or its error; the
// documents' order only when docOrder (their scores differ a little
// between the stores, docs/weaviate.md).
func sameSearch(t *testing.T, mem, wv pagedStore, req query.SearchRequest, docOrder bool) {
	t.Helper()
	res := func(st pagedStore) string {
		r, err := st.Search(req)
		if err != nil {
			if !errors.Is(err, record.ErrInvalid) {
				t.Errorf("%+v: %v", req, err)
			}
			return "invalid"
		}
		var b strings.Builder
		fmt.Fprint(&b, r.TotalMessages, r.TotalDocuments)
		for _, h := range r.Messages {
			fmt.Fprint(&b, " ", h.ID)
		}
		var keys []string
		for _, h := range r.Documents {
			keys = append(keys, h.Key)
		}
		if !docOrder {
			slices.Sort(keys)
		}
		fmt.Fprint(&b, " ", keys)
		return b.String()
	}
	same(t, fmt.Sprintf("search %+v", req), res(mem), res(wv))
}

// memStore opens an in-memory engine closed with the test.
func memStore(t *testing.T) *engine.Engine {
	t.Helper()
	mem, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}

// fillChat writes source "chat", channels #general and #other, and n
// messages made by msg (in #general unless it says otherwise), in order.
func fillChat(t *testing.T, st pagedStore, n int, msg func(i int) record.Message) {
	t.Helper()
	if _, err := st.PutSource(record.Source{ID: "chat", Name: "Chat", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutChannels([]record.Channel{{SourceID: "chat", ID: "general", Name: "general"},
		{SourceID: "chat", ID: "other", Name: "other"}}); err != nil {
		t.Fatal(err)
	}
	msgs := make([]record.Message, n)
	for i := range msgs {
		m := msg(i)
		m.SourceID, m.ChannelID = "chat", cmp.Or(m.ChannelID, "general")
		msgs[i] = m
	}
	for part := range slices.Chunk(msgs, 500) {
		if _, err := st.PutMessages(part); err != nil {
			t.Fatal(err)
		}
	}
}

func channelMessageIDs(t *testing.T, st pagedStore, slug string) []string {
	t.Helper()
	ids, err := st.ChannelMessageIDs(slug)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func channelNames(st pagedStore) []string {
	var out []string
	for _, c := range st.Channels("", true) {
		out = append(out, c.SourceID+"/"+c.ID+"="+c.Name+"@"+c.Slug)
	}
	slices.Sort(out)
	return out
}

func windowString(w record.ChannelWindow, err error) string {
	ids := make([]string, len(w.Messages))
	for i, m := range w.Messages {
		ids[i] = m.ID
	}
	return fmt.Sprint(err, w.HasBefore, w.HasAfter, ids)
}

func docIDs(ds []record.Document, total int) string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return fmt.Sprint(total, ids)
}

func same[T any](t *testing.T, what string, want, got T) {
	t.Helper()
	if a, b := fmt.Sprint(want), fmt.Sprint(got); a != b {
		t.Errorf("%s:\nmemory   %.2000s\nweaviate %.2000s", what, a, b)
	}
}
