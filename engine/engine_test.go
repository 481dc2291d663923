package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openMem(t testing.TB, mod ...func(*Options)) *Engine {
	t.Helper()
	var opts Options
	for _, m := range mod {
		m(&opts)
	}
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if tf, ok := opts.Follower.(*testFollower); ok {
		tf.e = e
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// seed adds a source "chat" with channels "general" and "help" and messages.
func seed(t testing.TB, e *Engine, msgs ...string) {
	t.Helper()
	if _, err := e.PutSource(record.Source{ID: "chat", Name: "Acme Chat", Type: "discord", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutChannels([]record.Channel{
		{SourceID: "chat", ID: "c1", Name: "general"},
		{SourceID: "chat", ID: "c2", Name: "help"},
	}); err != nil {
		t.Fatal(err)
	}
	var batch []record.Message
	for i, m := range msgs {
		author, text, _ := strings.Cut(m, ": ")
		batch = append(batch, record.Message{
			SourceID: "chat", ChannelID: []string{"c1", "c2"}[i%2], ID: fmt.Sprint(100 + i),
			Author: author, Content: text, Timestamp: t0.Add(time.Duration(i) * time.Hour),
		})
	}
	if _, err := e.PutMessages(batch); err != nil {
		t.Fatal(err)
	}
}

func msgIDs(r *query.SearchResult) []string {
	out := []string{}
	for _, m := range r.Messages {
		out = append(out, m.ID)
	}
	return out
}

func search(t testing.TB, e *Engine, req query.SearchRequest) *query.SearchResult {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = 20
	}
	r, err := e.Search(req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	return r
}

func TestSearchMessages(t *testing.T) {
	e := openMem(t)
	seed(t, e,
		"ana: the webhook signature does not match after upgrading", // 100 general
		"bo: try verifying the raw body, not re-serialised JSON",    // 101 help
		"ana: getUserById returns nil for deleted users",            // 102 general
		"cy: Webhooks are signed with HMAC-SHA256",                  // 103 help
		"bo: the cron job fires twice after the DST change",         // 104 general
		"ana: signature mismatch again, proxies rewrite the body 😩", // 105 help
	)
	f := func(req query.SearchRequest, want ...string) {
		t.Helper()
		if got := msgIDs(search(t, e, req)); !slices.Equal(got, want) {
			t.Errorf("%+v: got %v, want %v", req, got, want)
		}
	}
	f(query.SearchRequest{Query: "signature"}, "105", "100")
	f(query.SearchRequest{Query: "signatures"}, "105", "100") // stemming
	f(query.SearchRequest{Query: "webhook"}, "103", "100")
	f(query.SearchRequest{Query: "getUserById"}, "102")
	f(query.SearchRequest{Query: "user id"}, "102")
	f(query.SearchRequest{Query: `"signature does not match"`}, "100")
	f(query.SearchRequest{Query: `"does match"`})
	f(query.SearchRequest{Query: "signature -proxies"}, "100")
	f(query.SearchRequest{Query: `body -"raw body"`}, "105")
	f(query.SearchRequest{Query: "signature from:bo"})
	f(query.SearchRequest{Query: "body from:BO"}, "101")
	f(query.SearchRequest{Query: "body", From: "ana"}, "105")
	f(query.SearchRequest{Query: "signature channel:help"}, "105")
	f(query.SearchRequest{Query: "signature", Channel: "general"}, "100")
	f(query.SearchRequest{Query: "signature channel:nope"})
	f(query.SearchRequest{Query: "signature source:chat"}, "105", "100")
	f(query.SearchRequest{Query: "signature source:other"})
	f(query.SearchRequest{Query: "signature after:2026-03-01T15:00:00Z"}, "105")
	f(query.SearchRequest{Query: "signature before:2026-03-01T15:00:00Z"}, "100")
	f(query.SearchRequest{Query: "signature after:2026-03-02"})
	f(query.SearchRequest{Query: "signature", Before: t0.Add(time.Hour)}, "100")
	f(query.SearchRequest{Query: "from:ana"}, "105", "102", "100") // filter only: newest first
	if r := search(t, e, query.SearchRequest{Query: "the"}); r.TotalMessages != 4 || r.Messages[0].ID != "104" {
		t.Errorf("only stop words should still match: %v", msgIDs(r)) // 104 says "the" twice
	}
	f(query.SearchRequest{Query: "!!! ???"})
	f(query.SearchRequest{Query: "signature", Limit: 1}, "105")
	f(query.SearchRequest{Query: "signature", Limit: 1, Offset: 1}, "100")
	f(query.SearchRequest{Query: "signature", Offset: 5})

	r := search(t, e, query.SearchRequest{Query: "webhook signature"})
	if r.TotalMessages != 3 || r.Messages[0].ChannelSlug == "" || r.Messages[0].SourceName != "Acme Chat" ||
		r.Messages[0].SourceType != "discord" || r.Messages[0].Score <= 0 {
		t.Errorf("hit fields: %+v", r.Messages[0])
	}
	for _, req := range []query.SearchRequest{{}, {Query: "   "}, {Query: strings.Repeat(`"the" `, 17)}, {Query: strings.Repeat("-x ", 33)}, {Query: "after:yesterday"}, {Query: strings.Repeat("x", query.MaxQueryBytes+1)}, {Query: "bad \xff"}} {
		if _, err := e.Search(req); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("%q: err %v, want ErrInvalid", req.Query, err)
		}
	}
}

func TestHighlightInSearch(t *testing.T) {
	e := openMem(t)
	seed(t, e, "ana: <b>Signatures</b> & webhooks: see getUserById")
	r := search(t, e, query.SearchRequest{Query: "signature getuserbyid"})
	want := "&lt;b&gt;<mark>Signatures</mark>&lt;/b&gt; &amp; webhooks: see <mark>getUserById</mark>"
	if got := markHTML(r.Messages[0].Highlight); got != want {
		t.Errorf("highlight\n got  %s\n want %s", got, want)
	}
}

func TestDocuments(t *testing.T) {
	e := openMem(t)
	docs, err := e.PutDocuments([]record.Document{
		{Title: "Configuration reference", Content: "Set max_attempts in wren.yaml to limit retries."},
		{Title: "Retries", Content: "Backoff doubles after each failed configuration attempt."},
		{Title: "Configuration reference", Content: "duplicate title, different key", Key: "other.md"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if docs[0].Slug != "configuration-reference" || docs[2].Slug != "configuration-reference-2" || docs[0].SourceID != record.UploadsSourceID {
		t.Fatalf("slugs: %q %q", docs[0].Slug, docs[2].Slug)
	}
	r := search(t, e, query.SearchRequest{Query: "configuration"})
	if len(r.Documents) != 3 || r.Documents[2].ID != docs[1].ID {
		t.Fatalf("title should outrank body: %+v", r.Documents)
	}
	// Replacing by the same key keeps id and slug and drops the old text.
	again, err := e.PutDocuments([]record.Document{{Title: "Configuration reference", Content: "Now about timezones."}})
	if err != nil || again[0].ID != docs[0].ID || again[0].Slug != docs[0].Slug {
		t.Fatalf("replace: %v %+v", err, again)
	}
	if r := search(t, e, query.SearchRequest{Query: `"max_attempts"`}); len(r.Documents) != 0 {
		t.Errorf("stale hit after replace: %+v", r.Documents)
	}
	if r := search(t, e, query.SearchRequest{Query: "timezones"}); len(r.Documents) != 1 {
		t.Errorf("replacement not found")
	}
	list, total := e.Documents(0, 10, true)
	if total != 3 || len(list) != 3 || list[0].ID != docs[0].ID {
		t.Errorf("list: %d %+v", total, list)
	}
	if err := e.DeleteDocument(docs[1].ID); err != nil {
		t.Fatal(err)
	}
	if r := search(t, e, query.SearchRequest{Query: "backoff"}); len(r.Documents) != 0 {
		t.Error("stale hit after delete")
	}
	if _, ok := e.DocumentBySlug(docs[1].Slug); ok {
		t.Error("deleted document still has its slug")
	}
	if err := e.DeleteDocument(docs[1].ID); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := e.PutDocuments([]record.Document{{Title: ""}}); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("empty title: %v", err)
	}
	if _, err := e.PutDocuments([]record.Document{{Title: "x", SourceID: "nope"}}); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("unknown source: %v", err)
	}
}

func TestMessageUpdatesAndIdempotence(t *testing.T) {
	e := openMem(t)
	seed(t, e, "ana: original wording here")
	m := record.Message{SourceID: "chat", ChannelID: "c1", ID: "100", Author: "ana", Content: "original wording here", Timestamp: t0}
	if n, err := e.PutMessages([]record.Message{m}); err != nil || n != 0 {
		t.Fatalf("identical put changed %d (%v)", n, err)
	}
	m.Content = "edited wording now"
	if n, err := e.PutMessages([]record.Message{m}); err != nil || n != 1 {
		t.Fatalf("edit changed %d (%v)", n, err)
	}
	if r := search(t, e, query.SearchRequest{Query: "original"}); len(r.Messages) != 0 {
		t.Error("stale hit after edit")
	}
	if r := search(t, e, query.SearchRequest{Query: "edited"}); len(r.Messages) != 1 {
		t.Error("edit not found")
	}
	if n, err := e.DeleteMessages("chat", []string{"100", "nope"}); err != nil || n != 1 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if r := search(t, e, query.SearchRequest{Query: "edited"}); len(r.Messages) != 0 {
		t.Error("stale hit after delete")
	}
	for _, bad := range []record.Message{
		{SourceID: "chat", ChannelID: "c1", ID: "", Content: "x", Timestamp: t0},
		{SourceID: "chat", ChannelID: "nope", ID: "1", Content: "x", Timestamp: t0},
		{SourceID: "chat", ChannelID: "c1", ID: "1", Content: "x"},
		{SourceID: "chat", ChannelID: "c1", ID: "1", Content: "\xff", Timestamp: t0},
	} {
		if _, err := e.PutMessages([]record.Message{bad}); !errors.Is(err, record.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func TestDeleteSource(t *testing.T) {
	e := openMem(t)
	seed(t, e, "ana: alpha one", "bo: alpha two")
	if _, err := e.PutDocuments([]record.Document{{SourceID: "chat", Title: "Alpha doc", Content: "alpha"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteSource("chat"); err != nil {
		t.Fatal(err)
	}
	r := search(t, e, query.SearchRequest{Query: "alpha"})
	if len(r.Messages)+len(r.Documents) != 0 {
		t.Errorf("source data survived delete: %+v", r)
	}
	if _, ok := e.ChannelBySlug("general"); ok || len(e.Channels("", true)) != 0 {
		t.Error("channels survived delete")
	}
	if err := e.DeleteSource("chat"); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := e.DeleteSource(record.UploadsSourceID); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("deleting uploads: %v", err)
	}
	// Same names again get the same slugs back.
	seed(t, e, "ana: beta")
	if _, ok := e.ChannelBySlug("general"); !ok {
		t.Error("slug not reusable after delete")
	}
}

func TestChannelsAndPaging(t *testing.T) {
	e := openMem(t)
	var msgs []string
	for i := 0; i < 25; i++ {
		msgs = append(msgs, fmt.Sprintf("u%d: message %d", i%3, i))
	}
	seed(t, e, msgs...)
	chs, err := e.PutChannels([]record.Channel{{SourceID: "chat", ID: "c9", Name: "General"}, {SourceID: "chat", ID: "c1", Name: "renamed"}})
	if err != nil || chs[0].Slug != "general-2" || chs[1].Slug != "general" {
		t.Fatalf("slugs %v %+v", err, chs)
	}
	page, total, err := e.ChannelMessages("general", 5, 3)
	if err != nil || total != 13 || len(page) != 3 || page[0].ID != "110" || page[2].ID != "114" {
		t.Fatalf("page: %v %d %+v", err, total, page)
	}
	if _, _, err := e.ChannelMessages("nope", 0, 3); !errors.Is(err, record.ErrNotFound) {
		t.Errorf("unknown channel: %v", err)
	}
	if st := e.SourceStats("chat", true); st.Channels != 3 || st.Messages != 25 {
		t.Errorf("stats %+v", st)
	}
}

func TestConcurrentReadersAndWriter(t *testing.T) {
	e := openMem(t)
	seed(t, e, "ana: warm up")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := e.Search(query.SearchRequest{Query: "token", Limit: 5})
				if err != nil {
					t.Error(err)
					return
				}
				for _, m := range res.Messages {
					if !strings.Contains(m.Content, "token") {
						t.Errorf("hit without the term: %q", m.Content)
					}
				}
			}
		}()
	}
	for b := 0; b < 20; b++ {
		var batch []record.Message
		for i := 0; i < 300; i++ {
			batch = append(batch, record.Message{SourceID: "chat", ChannelID: "c1", ID: fmt.Sprintf("w%d-%d", b, i),
				Author: "w", Content: fmt.Sprintf("token %d of batch %d", i, b), Timestamp: t0})
		}
		if _, err := e.PutMessages(batch); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if r := search(t, e, query.SearchRequest{Query: "token"}); r.TotalMessages != 6000 {
		t.Errorf("total %d", r.TotalMessages)
	}
}

func TestCompactionKeepsAnswers(t *testing.T) {
	e := openMem(t)
	var msgs []string
	for i := 0; i < 3000; i++ {
		msgs = append(msgs, fmt.Sprintf("u: common word%d", i%10))
	}
	seed(t, e, msgs...)
	var ids []string
	for i := 0; i < 2500; i++ {
		ids = append(ids, fmt.Sprint(100+i))
	}
	if _, err := e.DeleteMessages("chat", ids); err != nil {
		t.Fatal(err)
	}
	before := msgIDs(search(t, e, query.SearchRequest{Query: "common word3", Limit: 100}))
	e.compactIfNeeded()
	if e.st.msgIdx.Dead() != 0 {
		t.Fatal("not compacted")
	}
	if after := msgIDs(search(t, e, query.SearchRequest{Query: "common word3", Limit: 100})); !slices.Equal(before, after) {
		t.Errorf("answers changed: %v vs %v", before, after)
	}
}

func TestHighlightScansABoundedPrefix(t *testing.T) {
	e := openMem(t)
	near := "needle early " + strings.Repeat("filler ", 200)
	far := strings.Repeat("filler ", 200_000) + "needle late"
	if _, err := e.PutDocuments([]record.Document{{Title: "near", Content: near}, {Title: "far", Content: far}}); err != nil {
		t.Fatal(err)
	}
	r := search(t, e, query.SearchRequest{Query: "needle"})
	if len(r.Documents) != 2 {
		t.Fatalf("%d documents", len(r.Documents))
	}
	for _, d := range r.Documents {
		h := markHTML(d.Highlight)
		marked := strings.Contains(h, "<mark>needle</mark>")
		if (d.Title == "near") != marked || len(d.Highlight.Text) > 2*analysis.HighlightChars {
			t.Errorf("%s: highlight %q", d.Title, h)
		}
	}
}

// TestChannelOrder: pages of a channel follow time, whatever the order
// messages arrive in; positions and page times follow backfills, edits and
// deletions.
func TestChannelOrder(t *testing.T) {
	e := openMem(t)
	e.PutSource(record.Source{ID: "s", Name: "S", Type: "discord", Enabled: true})
	e.PutChannels([]record.Channel{{SourceID: "s", ID: "c", Name: "general"}})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(id string, min int) {
		t.Helper()
		if _, err := e.PutMessages([]record.Message{{SourceID: "s", ChannelID: "c", ID: id, Author: "a", Content: id, Timestamp: t0.Add(time.Duration(min) * time.Minute)}}); err != nil {
			t.Fatal(err)
		}
	}
	put("m3", 3)
	put("m1", 1) // a backfill
	put("m5", 5)
	put("m2", 2)
	ids := func() string {
		msgs, total, err := e.ChannelMessages("general", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range msgs {
			out = append(out, m.ID)
		}
		return fmt.Sprint(total, out)
	}
	if got := ids(); got != "4 [m1 m2 m3 m5]" {
		t.Fatalf("order %s", got)
	}
	if p, err := e.MessagePosition("general", "m3"); err != nil || p != 2 {
		t.Fatalf("position of m3: %d %v", p, err)
	}
	if _, err := e.MessagePosition("general", "nope"); err == nil {
		t.Fatal("position of an unknown message")
	}
	times, _ := e.ChannelPageTimes("general", 2)
	if len(times) != 2 || !times[0].Equal(t0.Add(2*time.Minute)) || !times[1].Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("page times %v", times)
	}
	put("m3", 9) // an edit moves it in time
	e.DeleteMessages("s", []string{"m1"})
	if got := ids(); got != "3 [m2 m5 m3]" {
		t.Fatalf("after an edit and a delete: %s", got)
	}
	if p, _ := e.MessagePosition("general", "m3"); p != 2 {
		t.Fatalf("position of the moved m3: %d", p)
	}
}
