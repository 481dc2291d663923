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

// seedMessages stores source "s" with channel "c" (slug "general") and
// one message per text, the i-th with id m<i> and time t0 + minutes[i]
// (t0 + i minutes when minutes is nil).
func seedMessages(t *testing.T, s Store, minutes []int, texts ...string) {
	t.Helper()
	mustPutSource(t, s, record.Source{ID: "s", Name: "S", Type: "discord", Enabled: true})
	mustPutChannels(t, s, record.Channel{SourceID: "s", ID: "c", Name: "general"})
	var batch []record.Message
	for i, text := range texts {
		ts := t0.Add(time.Duration(i) * time.Minute)
		if minutes != nil {
			ts = t0.Add(time.Duration(minutes[i]) * time.Minute)
		}
		batch = append(batch, record.Message{SourceID: "s", ChannelID: "c", ID: fmt.Sprint("m", i), Author: "a", Content: text, Timestamp: ts})
	}
	mustPutMessages(t, s, batch...)
}

// testSearchAnalysis: words match across case, inflection and identifier
// styles; a query of stop words only still matches.
func testSearchAnalysis(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	f := func(q string, want ...string) {
		t.Helper()
		wantSet(t, s, query.SearchRequest{Query: q}, want...)
	}
	f("signature", "100", "105")
	f("SIGNATURE", "100", "105")
	f("signatures", "100", "105") // stemming
	f("webhook", "100", "103")    // "Webhooks" too
	f("getUserById", "102")
	f("getuserbyid", "102")
	f("user id", "102") // identifier parts
	f("get_user_by_id", "102")
	f("hmac", "103")
	f("sha256", "103")
	f("nothingmatchesthis")
	r := search(t, s, query.SearchRequest{Query: "the"})
	if r.TotalMessages != 4 || len(r.Messages) == 0 || r.Messages[0].ID != "104" {
		t.Errorf("a query of stop words only: %v (total %d); 104 says \"the\" twice", msgIDs(r), r.TotalMessages)
	}
}

// testSearchRanking: BM25's orders: more occurrences, rarer terms,
// shorter texts and more of the query's terms rank higher. Each winner
// is the older message, so recency cannot explain the order.
func testSearchRanking(t *testing.T, h Harness) {
	s := h.Open(t)
	seedMessages(t, s, []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130},
		"kafka kafka kafka broker partition",                                          // m0: term frequency
		"kafka cluster broker partition replica",                                      // m1
		"zookeeper quorum election leader votes",                                      // m2: rare term
		"redis quorum election leader votes",                                          // m3: common term
		"redis cache eviction policy",                                                 // m4
		"redis cache persistence snapshot",                                            // m5
		"redis sentinel failover",                                                     // m6
		"grafana dashboard",                                                           // m7: short
		"grafana dashboard panel alert rule threshold query variable template legend", // m8: long
		"terraform provider plan",                                                     // m9: both terms
		"terraform module registry",                                                   // m10: one term
		"ansible playbook inventory",                                                  // m11
		"provider credentials rotation",                                               // m12: the other term
		"unrelated filler text",                                                       // m13
	)
	order := func(q string, first, second string) {
		t.Helper()
		ids := msgIDs(search(t, s, query.SearchRequest{Query: q}))
		i, j := slices.Index(ids, first), slices.Index(ids, second)
		if i < 0 || j < 0 || i > j {
			t.Errorf("%q: %v; want %s before %s", q, ids, first, second)
		}
	}
	order("kafka", "m0", "m1")
	order("zookeeper redis", "m2", "m3")
	order("grafana", "m7", "m8")
	order("terraform provider", "m9", "m10")
	order("terraform provider", "m9", "m12")
	r := search(t, s, query.SearchRequest{Query: "terraform provider"})
	if r.TotalMessages != 3 {
		t.Errorf("any term matches: total %d, want 3", r.TotalMessages)
	}
	for i := 1; i < len(r.Messages); i++ {
		if r.Messages[i].Score > r.Messages[i-1].Score {
			t.Errorf("scores rise at %d: %v", i, msgIDs(r))
		}
	}
}

// testSearchTies: hits that score the same come newest first.
func testSearchTies(t *testing.T, h Harness) {
	s := h.Open(t)
	seedMessages(t, s, []int{5, 50, 20, 35}, "same words here", "same words here", "same words here", "same words here")
	wantMessages(t, s, query.SearchRequest{Query: "same words"}, "m1", "m3", "m2", "m0")
	mustPutDocuments(t, s,
		record.Document{Key: "a", Title: "Note", Content: "identical text", UpdatedAt: t0.Add(time.Hour)},
		record.Document{Key: "b", Title: "Note", Content: "identical text", UpdatedAt: t0.Add(3 * time.Hour)},
		record.Document{Key: "c", Title: "Note", Content: "identical text", UpdatedAt: t0.Add(2 * time.Hour)})
	if got := docKeys(search(t, s, query.SearchRequest{Query: "identical"})); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("tied documents %v, want newest first [b c a]", got)
	}

	// Equal in score and time too: by id, whatever the order they were
	// written in, ranked or not — both stores order them alike.
	same := t0.Add(100 * time.Minute)
	for _, id := range []string{"t2", "t0", "t3", "t1"} {
		mustPutMessages(t, s, record.Message{SourceID: "s", ChannelID: "c", ID: id, Author: "twin", Content: "twin pair", Timestamp: same})
	}
	wantMessages(t, s, query.SearchRequest{Query: "twin pair"}, "t0", "t1", "t2", "t3")
	wantMessages(t, s, query.SearchRequest{Query: "from:twin"}, "t0", "t1", "t2", "t3")
	wantMessages(t, s, query.SearchRequest{Query: "twin pair", Limit: 2, Offset: 1}, "t1", "t2")
	for _, k := range []string{"q", "p", "r"} {
		mustPutDocuments(t, s, record.Document{Key: k, Title: "Twin", Content: "twin pages", UpdatedAt: same})
	}
	for _, q := range []string{"twin pages", "source:" + record.UploadsSourceID} {
		r := search(t, s, query.SearchRequest{Query: q})
		var ids []string
		for _, d := range r.Documents {
			if d.UpdatedAt.Equal(same) {
				ids = append(ids, d.ID)
			}
		}
		if len(ids) != 3 || !slices.IsSorted(ids) {
			t.Errorf("%q: documents tied in score and time come %v, want 3 by id", q, ids)
		}
	}
}

// testSearchTitles: a word in a document's title outranks the same word
// in another document's body.
func testSearchTitles(t *testing.T, h Harness) {
	s := h.Open(t)
	mustPutDocuments(t, s,
		record.Document{Key: "title", Title: "Configuration reference", Content: "Set max_attempts in wren.yaml to limit retries.", UpdatedAt: t0},
		record.Document{Key: "body", Title: "Retries", Content: "Backoff doubles after each failed configuration attempt.", UpdatedAt: t0.Add(time.Hour)})
	r := search(t, s, query.SearchRequest{Query: "configuration"})
	if got := docKeys(r); !slices.Equal(got, []string{"title", "body"}) || r.TotalDocuments != 2 {
		t.Errorf("title should outrank body: %v (total %d)", got, r.TotalDocuments)
	}
	if got := docKeys(search(t, s, query.SearchRequest{Query: "wren.yaml"})); !slices.Equal(got, []string{"title"}) {
		t.Errorf("file name: %v", got)
	}
}

// testSearchPhrases: a quoted phrase must occur as written, in messages
// and documents.
func testSearchPhrases(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	mustPutDocuments(t, s,
		record.Document{Key: "a", Title: "Upgrade notes", Content: "The webhook signature does not match when the body changes."},
		record.Document{Key: "b", Title: "Other", Content: "A match does not mean a signature."})
	f := func(q string, want ...string) {
		t.Helper()
		wantSet(t, s, query.SearchRequest{Query: q}, want...)
	}
	f(`"signature does not match"`, "100")
	f(`"does match"`)
	f(`"match signature"`)
	f(`"raw body"`, "101")
	f(`"raw body" signature`, "101") // a phrase is required, words rank
	f(`"cron job" "dst change"`, "104")
	f(`"cron job" "dst job"`)
	if got := docKeys(search(t, s, query.SearchRequest{Query: `"signature does not match"`})); !slices.Equal(got, []string{"a"}) {
		t.Errorf("document phrase: %v", got)
	}
}

// testSearchExclusions: -word and -"phrase" leave out what holds them.
func testSearchExclusions(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	mustPutDocuments(t, s,
		record.Document{Key: "a", Title: "Signature guide", Content: "how proxies break a signature"},
		record.Document{Key: "b", Title: "Signature notes", Content: "verify the raw body"})
	f := func(q string, want ...string) {
		t.Helper()
		wantSet(t, s, query.SearchRequest{Query: q}, want...)
	}
	f("signature -proxies", "100")
	f("signature -PROXY", "100") // analysed as words are
	f(`body -"raw body"`, "105")
	f(`body -"body raw"`, "101", "105")
	f("signature -signature")
	f("webhook -hmac -upgrading")
	if got := docKeys(search(t, s, query.SearchRequest{Query: "signature -proxies"})); !slices.Equal(got, []string{"b"}) {
		t.Errorf("document exclusion: %v", got)
	}
	if got := docKeys(search(t, s, query.SearchRequest{Query: `signature -"raw body"`})); !slices.Equal(got, []string{"a"}) {
		t.Errorf("document phrase exclusion: %v", got)
	}
}

// testSearchFilters: source, channel, author and time filters, in the
// query or the request, narrow the hits; channel and author filters leave
// documents out.
func testSearchFilters(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	mustPutSource(t, s, record.Source{ID: "other", Name: "Other", Type: "slack", Enabled: true})
	mustPutChannels(t, s, record.Channel{SourceID: "other", ID: "x", Name: "random"})
	mustPutMessages(t, s, record.Message{SourceID: "other", ChannelID: "x", ID: "o1", Author: "dee", AuthorName: "Dee Dee",
		Content: "signature elsewhere", Timestamp: at(10)})
	mustPutDocuments(t, s,
		record.Document{SourceID: "chat", Key: "chat-doc", Title: "Signature FAQ", Content: "x", UpdatedAt: at(2)},
		record.Document{Key: "upload", Title: "Signature upload", Content: "x", UpdatedAt: at(8)})
	f := func(req query.SearchRequest, want ...string) {
		t.Helper()
		wantSet(t, s, req, want...)
	}
	q := func(q string) query.SearchRequest { return query.SearchRequest{Query: q} }
	f(q("signature"), "100", "105", "o1")
	f(q("signature source:chat"), "100", "105")
	f(query.SearchRequest{Query: "signature", Source: "other"}, "o1")
	f(q("signature source:nope"))
	f(q("signature channel:help"), "105")
	f(q("signature in:help"), "105")
	f(query.SearchRequest{Query: "signature", Channel: "general"}, "100")
	f(q("signature channel:nope"))
	f(q("signature from:bo"))
	f(q("body from:BO"), "101")
	f(q("body author:bo"), "101")
	f(query.SearchRequest{Query: "body", From: "ana"}, "105")
	f(q("signature from:dee"), "o1")
	f(q(`signature from:"dee dee"`), "o1")                    // the display name
	f(q("signature after:2026-03-01T17:00:00Z"), "105", "o1") // inclusive: 105 is at 17:00
	f(q("signature before:2026-03-01T17:00:00Z"), "100")      // exclusive
	f(q("signature after:2026-03-02"))
	f(q("signature before:2026-03-01"))
	f(query.SearchRequest{Query: "signature", Before: at(1)}, "100")
	f(query.SearchRequest{Query: "signature", After: at(5), Before: at(6)}, "105")
	f(query.SearchRequest{Query: "signature source:chat", After: at(1), From: "ana", Channel: "help"}, "105")

	docs := func(req query.SearchRequest, want ...string) {
		t.Helper()
		got := docKeys(search(t, s, req))
		slices.Sort(got)
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: documents %v, want %v", req, got, want)
		}
	}
	docs(q("signature"), "chat-doc", "upload")
	docs(q("signature source:chat"), "chat-doc")
	docs(q("signature source:uploads"), "upload")
	docs(q("signature channel:general"))
	docs(q("signature from:ana"))
	docs(q("signature after:2026-03-01T16:00:00Z"), "upload") // by UpdatedAt
	docs(query.SearchRequest{Query: "signature", Before: at(3)}, "chat-doc")
}

// testSearchFilterOnly: a query of filters only lists what they match,
// newest first.
func testSearchFilterOnly(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	wantMessages(t, s, query.SearchRequest{Query: "from:ana"}, "105", "102", "100")
	wantMessages(t, s, query.SearchRequest{Query: "channel:general"}, "104", "102", "100")
	wantMessages(t, s, query.SearchRequest{Source: "chat", After: at(3)}, "105", "104", "103")
	r := search(t, s, query.SearchRequest{Query: "source:chat", Limit: 2})
	if r.TotalMessages != 6 || !slices.Equal(msgIDs(r), []string{"105", "104"}) {
		t.Errorf("source filter only: %v total %d", msgIDs(r), r.TotalMessages)
	}
}

// testSearchPaging: pages of a search are consecutive stretches of the
// whole ranking; the totals count every match whatever the page.
func testSearchPaging(t *testing.T, h Harness) {
	s := h.Open(t)
	var texts []string
	var minutes []int
	for i := 0; i < 130; i++ {
		texts = append(texts, strings.TrimSpace("deploy pipeline "+strings.Repeat("deploy ", i%4)+fmt.Sprint("step", i)))
		minutes = append(minutes, (i*37)%130)
	}
	seedMessages(t, s, minutes, texts...)
	var docs []record.Document
	for i := 0; i < 15; i++ {
		docs = append(docs, record.Document{Key: fmt.Sprint("d", i), Title: fmt.Sprint("Deploy guide ", i),
			Content: strings.Repeat("deploy ", i%3+1), UpdatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	mustPutDocuments(t, s, docs...)

	whole := search(t, s, query.SearchRequest{Query: "deploy", Limit: query.MaxSearchLimit})
	if whole.TotalMessages != 130 || len(whole.Messages) != query.MaxSearchLimit || whole.TotalDocuments != 15 || len(whole.Documents) != 15 {
		t.Fatalf("whole: %d of %d messages, %d of %d documents", len(whole.Messages), whole.TotalMessages, len(whole.Documents), whole.TotalDocuments)
	}
	if r := search(t, s, query.SearchRequest{Query: "deploy", Limit: query.MaxSearchLimit + 50}); len(r.Messages) > query.MaxSearchLimit {
		t.Errorf("limit above the maximum gave %d", len(r.Messages))
	}
	var paged, pagedDocs []string
	for off := 0; off < query.MaxSearchLimit; off += 7 {
		r := search(t, s, query.SearchRequest{Query: "deploy", Offset: off, Limit: min(7, query.MaxSearchLimit-off)})
		if !totalHolds(r.TotalMessages, r.MessagesAtLeast, 130, off+len(r.Messages)) ||
			!totalHolds(r.TotalDocuments, r.DocumentsAtLeast, 15, off+len(r.Documents)) {
			t.Errorf("totals at offset %d: %d %d (lower bounds: %v %v)", off, r.TotalMessages, r.TotalDocuments,
				r.MessagesAtLeast, r.DocumentsAtLeast)
		}
		paged = append(paged, msgIDs(r)...)
		pagedDocs = append(pagedDocs, docKeys(r)...)
	}
	if !slices.Equal(paged, msgIDs(whole)) {
		t.Errorf("message pages differ from the whole:\n pages %v\n whole %v", paged, msgIDs(whole))
	}
	if !slices.Equal(pagedDocs, docKeys(whole)) {
		t.Errorf("document pages differ from the whole:\n pages %v\n whole %v", pagedDocs, docKeys(whole))
	}
	r := search(t, s, query.SearchRequest{Query: "deploy", Offset: 125, Limit: 10})
	if len(r.Messages) != 5 || len(r.Documents) != 0 || r.TotalMessages != 130 || r.TotalDocuments != 15 {
		t.Errorf("last page: %d messages, %d documents, totals %d %d", len(r.Messages), len(r.Documents), r.TotalMessages, r.TotalDocuments)
	}
	if r := search(t, s, query.SearchRequest{Query: "deploy", Offset: 500, Limit: 10}); len(r.Messages) != 0 || r.TotalMessages != 130 {
		t.Errorf("past the end: %d, total %d", len(r.Messages), r.TotalMessages)
	}
	if r := search(t, s, query.SearchRequest{Query: "deploy", Offset: -4, Limit: 3}); !slices.Equal(msgIDs(r), msgIDs(whole)[:3]) {
		t.Errorf("negative offset: %v", msgIDs(r))
	}
}

// testSearchHitFields: a hit carries its record, its channel and source
// names, and a positive score; scores fall down the list.
func testSearchHitFields(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	docs := mustPutDocuments(t, s, record.Document{Title: "Webhook guide", URL: "https://docs.example/webhooks", Content: "Verify the webhook signature."})
	r := search(t, s, query.SearchRequest{Query: "webhook signature"})
	if r.TotalMessages != 3 || len(r.Messages) != 3 {
		t.Fatalf("hits %v, total %d", msgIDs(r), r.TotalMessages)
	}
	if r.Messages[0].ID != "100" {
		t.Errorf("the message with both words should come first: %v", msgIDs(r))
	}
	for i, m := range r.Messages {
		if m.Score <= 0 || i > 0 && m.Score > r.Messages[i-1].Score {
			t.Errorf("hit %d: score %v", i, m.Score)
		}
		if m.SourceID != "chat" || m.SourceName != "Acme Chat" || m.SourceType != "discord" || m.Author == "" || m.Timestamp.IsZero() || m.Content == "" {
			t.Errorf("hit %d: %+v", i, m)
		}
		ch := mustChannel(t, s, "chat", m.ChannelID)
		if m.ChannelSlug != ch.Slug || m.ChannelName != ch.Name {
			t.Errorf("hit %d: channel %q %q, want %q %q", i, m.ChannelSlug, m.ChannelName, ch.Slug, ch.Name)
		}
	}
	if len(r.Documents) != 1 {
		t.Fatalf("documents %v", docKeys(r))
	}
	d := r.Documents[0]
	if d.ID != docs[0].ID || d.Slug != docs[0].Slug || d.Title != "Webhook guide" || d.Content != docs[0].Content || d.URL != docs[0].URL || d.Score <= 0 || d.Hidden {
		t.Errorf("document hit %+v", d)
	}
}

// testSearchHighlights: a highlight is the hit's plain text with the
// matched words, as written, marked as spans (each presenter escapes and
// renders it).
func testSearchHighlights(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, "ana: <b>Signatures</b> & webhooks: see getUserById")
	mustPutDocuments(t, s,
		record.Document{Title: "near", Content: "needle early " + strings.Repeat("filler ", 100)},
		record.Document{Title: "md", Format: record.FormatMarkdown, Content: "# Heading\n\nThe **needle** & <thread>"})
	r := search(t, s, query.SearchRequest{Query: "signature getuserbyid"})
	if len(r.Messages) != 1 {
		t.Fatalf("hits %v", msgIDs(r))
	}
	hl := marked(r.Messages[0].Highlight)
	for _, want := range []string{"[Signatures]", "[getUserById]", "<b>", "&"} {
		if !strings.Contains(hl, want) {
			t.Errorf("highlight %q lacks %q", hl, want)
		}
	}
	if strings.Contains(hl, "[webhooks]") {
		t.Errorf("highlight %q marks a word not searched", hl)
	}
	if r := search(t, s, query.SearchRequest{Query: `"see getuserbyid"`}); len(r.Messages) != 1 || !strings.Contains(marked(r.Messages[0].Highlight), "[getUserById]") {
		t.Errorf("phrase highlight: %+v", r.Messages)
	}
	r = search(t, s, query.SearchRequest{Query: "needle"})
	if len(r.Documents) != 2 {
		t.Fatalf("documents %v", docKeys(r))
	}
	for _, d := range r.Documents {
		hl := marked(d.Highlight)
		if !strings.Contains(hl, "[needle]") {
			t.Errorf("%s: highlight %q", d.Title, hl)
		}
		if d.Title == "md" && (strings.Contains(hl, "**") || strings.Contains(hl, "#")) {
			t.Errorf("markdown highlight %q: not plain text", hl)
		}
	}
}

// marked renders a snippet with [ and ] around its matches.
func marked(s query.Snippet) string { return s.Render(nil, "[", "]") }

// testSearchInvalid: malformed queries are ErrInvalid; a query of
// punctuation finds nothing, without an error.
func testSearchInvalid(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, chatMessages...)
	for name, req := range map[string]query.SearchRequest{
		"empty":               {},
		"blank":               {Query: "   "},
		"too many phrases":    {Query: strings.Repeat(`"the" `, 17)},
		"too many exclusions": {Query: strings.Repeat("-x ", 33)},
		"bad date":            {Query: "signature after:yesterday"},
		"too long":            {Query: strings.Repeat("x", query.MaxQueryBytes+1)},
		"invalid UTF-8":       {Query: "bad \xff"},
	} {
		_, err := s.Search(req)
		wantErr(t, name, err, record.ErrInvalid)
	}
	r := search(t, s, query.SearchRequest{Query: "!!! ???"})
	if len(r.Messages) != 0 || len(r.Documents) != 0 || r.TotalMessages != 0 {
		t.Errorf("punctuation found %v", msgIDs(r))
	}
	if r.Messages == nil || r.Documents == nil {
		t.Error("an empty result has nil lists")
	}
}

// testSearchFollowsWrites: edits, deletions and new writes show in the
// next search.
func testSearchFollowsWrites(t *testing.T, h Harness) {
	s := h.Open(t)
	seedChat(t, s, "ana: original wording here")
	m := record.Message{SourceID: "chat", ChannelID: "c1", ID: "100", Author: "ana", Content: "edited wording now", Timestamp: t0}
	mustPutMessages(t, s, m)
	wantMessages(t, s, query.SearchRequest{Query: "original"})
	wantMessages(t, s, query.SearchRequest{Query: "edited"}, "100")
	m.ID, m.Content = "101", "edited again"
	mustPutMessages(t, s, m)
	if r := search(t, s, query.SearchRequest{Query: "edited"}); r.TotalMessages != 2 {
		t.Errorf("after a new message: total %d", r.TotalMessages)
	}
	if _, err := s.DeleteMessages("chat", []string{"100"}); err != nil {
		t.Fatal(err)
	}
	wantMessages(t, s, query.SearchRequest{Query: "edited"}, "101")
	// A channel renamed: hits name it anew.
	mustPutChannels(t, s, record.Channel{SourceID: "chat", ID: "c1", Name: "lobby"})
	if r := search(t, s, query.SearchRequest{Query: "edited"}); len(r.Messages) != 1 || r.Messages[0].ChannelName != "lobby" || r.Messages[0].ChannelSlug != "general" {
		t.Errorf("after a rename: %+v", r.Messages)
	}
	// A source renamed: hits name it anew.
	if _, err := s.UpdateSource("chat", func(src *record.Source) error { src.Name = "Renamed"; return nil }); err != nil {
		t.Fatal(err)
	}
	if r := search(t, s, query.SearchRequest{Query: "edited"}); len(r.Messages) != 1 || r.Messages[0].SourceName != "Renamed" {
		t.Errorf("after a source rename: %+v", r.Messages)
	}
}

// totalHolds reports whether a search's total is want, or a lower bound
// that says so (a store that reads fewer than match: docs/weaviate.md):
// below want, and at least end, the page's end.
func totalHolds(got int, atLeast bool, want, end int) bool {
	if atLeast {
		return got < want && got >= end
	}
	return got == want
}
