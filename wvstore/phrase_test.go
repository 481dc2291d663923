package wvstore

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/internal/weaviatetest"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// TestPhraseWalk: a phrase whose words are common has more candidates
// than one query reads (the window, 7 here); the totals, pages, scores
// and exclusions still equal the memory store's, ranked and unranked,
// the phrases scored as the memory index scores them. Searches of words
// alone read a window of candidates too (7 here, or past the page's end):
// when fewer match, the total is exact; when the window fills up, the
// page is still the memory store's and the total a lower bound, flagged
// (query.SearchResult.MessagesAtLeast), at least the page's end.
func TestPhraseWalk(t *testing.T) {
	defer func(w, r int) { phraseWindow, rankWindow = w, r }(phraseWindow, rankWindow)
	phraseWindow = 7
	cl := weaviatetest.Start(t, 1)
	wv := openNS(t, cl, "Walk")
	mem, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	texts := []string{
		"go to the docs", "the docs go to", "back to the start to the end", "to be the one", "to the point",
		"nothing here", "the to", "walk to the park with the dog", "to the", "the end to the story",
	}
	var msgs []record.Message
	for i := range 60 {
		ts := t0.Add(time.Duration(i/3) * time.Minute) // three messages a minute: ties in time
		msgs = append(msgs, record.Message{SourceID: "s", ChannelID: "c", ID: fmt.Sprintf("m%02d", (i*37)%60), Author: "a",
			Content: texts[i%len(texts)] + fmt.Sprintf(" w%d", i%4), Timestamp: ts})
	}
	for _, st := range []interface {
		PutSource(record.Source) (record.Source, error)
		PutChannels([]record.Channel) ([]record.Channel, error)
		PutMessages([]record.Message) (int, error)
	}{mem, wv} {
		if _, err := st.PutSource(record.Source{ID: "s", Name: "S", Type: "discord", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutChannels([]record.Channel{{SourceID: "s", ID: "c", Name: "general"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutMessages(msgs); err != nil {
			t.Fatal(err)
		}
	}
	var docs []record.Document
	for i := range 20 {
		docs = append(docs, record.Document{SourceID: record.UploadsSourceID, Key: fmt.Sprint("k", i), Title: texts[(i+3)%len(texts)],
			Content: texts[i%len(texts)] + " and " + texts[(i+5)%len(texts)], UpdatedAt: t0.Add(time.Duration(i/2) * time.Hour)})
	}
	if _, err := mem.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	if _, err := wv.PutDocuments(docs); err != nil {
		t.Fatal(err)
	}
	type search struct {
		req    query.SearchRequest
		window int // of a search of words alone, when not the default
		// The window may fill up (more match than it holds, and no tie
		// across its edge makes it wider): the total of messages may be
		// a lower bound. Everything here was just written, in a
		// memtable: the page is right all the same (weaviate#11780,
		// fixed in the pinned release).
		full bool
	}
	type sr = query.SearchRequest
	searches := []search{
		{req: sr{Query: `"to the"`}},
		{req: sr{Query: `"to the"`, Offset: 5, Limit: 5}},
		{req: sr{Query: `to the`, Limit: 40}},
		{req: sr{Query: `"to the"`, Limit: 40}},
		{req: sr{Query: `"to the"`, Offset: 20, Limit: 10}},
		{req: sr{Query: `"to the" w1`}},
		// Stop words and other words: the candidates are the records
		// holding the others, some without the phrase.
		{req: sr{Query: `"end to the"`}},
		{req: sr{Query: `"to the end" w2`, Limit: 3}},
		{req: sr{Query: `end -"to the end"`}},
		{req: sr{Query: `"to the" -w2`}},
		{req: sr{Query: `to -"to the"`}},
		{req: sr{Query: `-"to the" from:a`}},
		{req: sr{Query: `-"to the" from:a`, Offset: 10, Limit: 10}},
		{req: sr{Query: `story`}, window: 7}, // 6 of the 60 messages, the window 7
		{req: sr{Query: `story`, Offset: 3, Limit: 2}, window: 7},
		{req: sr{Query: `story`, Offset: 6}, window: 7}, // past the last
		{req: sr{Query: `story -w1`}, window: 7},
		{req: sr{Query: `w1 -story`, Limit: 20}, window: 7},
		{req: sr{Query: `story park`, Limit: 3}, window: 7, full: true}, // 12
		{req: sr{Query: `w1`, Limit: 4}, window: 7, full: true},         // 15
		{req: sr{Query: `w2 from:a`, Limit: 5}, window: 7, full: true},
	}
	defaultWindow := rankWindow
	lowerBounds := 0
	check := func(pairs bool, sc search) {
		req := sc.req
		rankWindow = cmp.Or(sc.window, defaultWindow)
		m, err := mem.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		w, err := wv.Search(req)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(r *query.SearchResult) []string {
			var out []string
			for _, h := range r.Messages {
				out = append(out, h.ID)
			}
			return out
		}
		// An exact total is the memory store's; a lower bound is at most
		// that and at least the page's end.
		holds := func(mem, wv int, atLeast bool) bool {
			end := min(req.Offset+cmp.Or(req.Limit, 10), mem)
			return wv == mem && !atLeast || atLeast && wv >= end && wv < mem
		}
		if w.MessagesAtLeast {
			lowerBounds++
		}
		if !m.TotalExact() {
			t.Errorf("pairs %v, %+v: the memory store's totals are not exact", pairs, req)
		}
		if !holds(m.TotalMessages, w.TotalMessages, w.MessagesAtLeast) || !sc.full && w.MessagesAtLeast || !slices.Equal(ids(m), ids(w)) {
			t.Errorf("pairs %v, %+v:\nmemory   %d %v\nweaviate %d (at least: %v) %v", pairs, req, m.TotalMessages, ids(m), w.TotalMessages, w.MessagesAtLeast, ids(w))
		}
		dids := func(r *query.SearchResult) []string {
			var out []string
			for _, h := range r.Documents {
				out = append(out, fmt.Sprintf("%s:%.3f", h.Key, h.Score))
			}
			return out
		}
		if !holds(m.TotalDocuments, w.TotalDocuments, w.DocumentsAtLeast) || !slices.Equal(dids(m), dids(w)) {
			t.Errorf("pairs %v, %+v documents:\nmemory   %d %v\nweaviate %d %v", pairs, req, m.TotalDocuments, dids(m), w.TotalDocuments, dids(w))
		}
		for i := range min(len(m.Messages), len(w.Messages)) {
			if a, b := m.Messages[i].Score, w.Messages[i].Score; math.Abs(a-b) > 0.01*math.Abs(a) {
				t.Errorf("pairs %v, %+v: %s scores %.4f in memory, %.4f on weaviate", pairs, req, m.Messages[i].ID, a, b)
				break
			}
		}
		if m.TotalMessages == 0 || m.TotalDocuments == 0 && strings.HasPrefix(req.Query, `"to the"`) {
			t.Errorf("pairs %v, %+v: nothing found", pairs, req)
		}
	}
	if !wv.pairs {
		t.Fatal("a new cluster does not filter phrases by pairs")
	}
	// Both filters of a phrase's candidates: by its pairs (a new
	// cluster), by its words (one raised from schema version 2).
	for _, pairs := range []bool{true, false} {
		wv.pairs = pairs
		for _, sc := range searches {
			check(pairs, sc)
		}
	}
	if lowerBounds == 0 {
		t.Error("no search gave a lower bound: the case is not tested")
	}
}
