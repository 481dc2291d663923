package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/record"
)

// readingText is a document of multibyte characters of one to four bytes,
// so a window cut on bytes rather than characters shows.
var readingText = strings.Repeat("Grüße, 世界! naïve café — 🎉 emoji & <tags>\n", 40) + "the end"

// seedReading stores a public document, a document of a private source, a
// public channel of 30 messages (one starting a thread) and a private
// channel. It returns the public channel's slug, the private channel's and
// the time of message m00.
func seedReading(t testing.TB, e *engine.Engine) (pub, priv string, t0 time.Time) {
	t.Helper()
	for _, s := range []record.Source{
		{ID: "chat", Name: "Chat Server", Type: "discord", Enabled: true},
		{ID: "handbook", Name: "Handbook", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate},
	} {
		if _, err := e.PutSource(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.PutDocuments([]record.Document{
		{Title: "Unicode guide", Content: readingText, Format: record.FormatText},
		{Title: "Salary bands", Content: "private numbers", SourceID: "handbook", Format: record.FormatText},
	}); err != nil {
		t.Fatal(err)
	}
	chans, err := e.PutChannels([]record.Channel{
		{SourceID: "chat", ID: "1", Name: "general"},
		{SourceID: "chat", ID: "m05", Name: "a thread", ParentID: "1", Kind: "thread"},
		{SourceID: "chat", ID: "2", Name: "leads", Private: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var msgs []record.Message
	for i := range 30 {
		msgs = append(msgs, record.Message{SourceID: "chat", ChannelID: "1", ID: fmt.Sprintf("m%02d", i),
			Author: "ana", AuthorName: "Ana K", Content: fmt.Sprintf("message number %d", i), Timestamp: t0.Add(time.Duration(i) * time.Minute)})
	}
	msgs[7].ReplyTo = "m06"
	msgs = append(msgs,
		record.Message{SourceID: "chat", ChannelID: "m05", ID: "t1", Author: "bo", Content: "in the thread", Timestamp: t0.Add(6 * time.Minute)},
		record.Message{SourceID: "chat", ChannelID: "2", ID: "p1", Author: "bo", Content: "secret plans", Timestamp: t0})
	if _, err := e.PutMessages(msgs); err != nil {
		t.Fatal(err)
	}
	return chans[0].Slug, chans[2].Slug, t0
}

func docSlug(t testing.TB, e *engine.Engine, title string) record.Document {
	t.Helper()
	docs, _ := e.Documents(0, 100, true)
	for _, d := range docs {
		if d.Title == title {
			return d
		}
	}
	t.Fatalf("no document %q", title)
	return record.Document{}
}

func decodeWindow[T any](t testing.TB, r resp) T {
	t.Helper()
	var v T
	if r.status != fasthttp.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body: %v: %s", err, r.body)
	}
	return v
}

func TestReadDocumentWindows(t *testing.T) {
	ts := start(t)
	seedReading(t, ts.eng)
	d := docSlug(t, ts.eng, "Unicode guide")
	total := utf8.RuneCountInString(readingText)

	r := ts.get(t, "/api/documents/"+d.ID)
	want := []string{"content", "format", "id", "length", "nextOffset", "offset", "slug", "source", "sourceId", "title", "totalLength", "updatedAt", "url"}
	if got := keys(r.json(t)); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	whole := decodeWindow[docWindow](t, r)
	if whole.Content != readingText || whole.Length != total || whole.TotalLength != total || whole.NextOffset != nil {
		t.Errorf("default window: length %d of %d, next %v", whole.Length, whole.TotalLength, whole.NextOffset)
	}
	if whole.URL != ts.url+"/d/"+d.Slug || whole.Slug != d.Slug || whole.Source != "Uploads" || whole.Format != "text" {
		t.Errorf("window describes %+v", whole)
	}

	// Pages of 97 characters, by slug, put the whole content back together.
	var sb strings.Builder
	next, pages := 0, 0
	for {
		w := decodeWindow[docWindow](t, ts.get(t, fmt.Sprintf("/api/documents/%s?offset=%d&length=97", d.Slug, next)))
		if w.ID != d.ID || w.Offset != next || !utf8.ValidString(w.Content) || utf8.RuneCountInString(w.Content) != w.Length {
			t.Fatalf("page at %d: id %s offset %d length %d, %d characters", next, w.ID, w.Offset, w.Length, utf8.RuneCountInString(w.Content))
		}
		sb.WriteString(w.Content)
		pages++
		if w.NextOffset == nil {
			if w.Offset+w.Length != total {
				t.Fatalf("last page ends at %d of %d", w.Offset+w.Length, total)
			}
			break
		}
		if w.Length != 97 || *w.NextOffset != next+97 {
			t.Fatalf("page at %d: length %d, next %d", next, w.Length, *w.NextOffset)
		}
		next = *w.NextOffset
	}
	if sb.String() != readingText || pages != (total+96)/97 {
		t.Errorf("%d pages do not make the content", pages)
	}

	// The end is an empty window; past it is an error.
	end := decodeWindow[docWindow](t, ts.get(t, fmt.Sprintf("/api/documents/%s?offset=%d", d.ID, total)))
	if end.Content != "" || end.Length != 0 || end.NextOffset != nil {
		t.Errorf("window at the end: %+v", end)
	}
	wantError(t, ts.get(t, fmt.Sprintf("/api/documents/%s?offset=%d", d.ID, total+1)), 400, "offset", "past the end")

	for _, q := range []string{"offset=-1", "offset=x", "offset=1073741825", "length=0", "length=100001", "length=1.5", "length="} {
		name, _, _ := strings.Cut(q, "=")
		wantError(t, ts.get(t, "/api/documents/"+d.ID+"?"+q), 400, name)
	}
	wantError(t, ts.get(t, "/api/documents/d_nosuch"), 404, "d_nosuch")
	wantError(t, ts.get(t, "/api/documents/No%20Such"), 404)
}

func TestReadDocumentPrivacy(t *testing.T) {
	ts := start(t)
	seedReading(t, ts.eng)
	d := docSlug(t, ts.eng, "Salary bands")
	for _, ref := range []string{d.ID, d.Slug} {
		r := ts.get(t, "/api/documents/"+ref)
		wantError(t, r, 404)
		if bytes.Contains(r.body, []byte("private numbers")) {
			t.Fatal("a 404 shows the private content")
		}
		for _, auth := range [][]string{bearer, {"Authorization", "Basic " + basic(testUser, testPass)}} {
			if w := decodeWindow[docWindow](t, ts.get(t, "/api/documents/"+ref, auth...)); w.Content != "private numbers" || w.Source != "Handbook" {
				t.Errorf("privileged read of %s: %+v", ref, w)
			}
		}
	}
	// A wrong token is refused as such, not served as anonymous.
	wantError(t, ts.get(t, "/api/documents/"+d.ID, "Authorization", "Bearer wrong"), 401)
}

// ids lists the ids of a window's messages.
func ids(w channelWindow) []string {
	var out []string
	for _, m := range w.Messages {
		out = append(out, m.ID)
	}
	return out
}

// idRange is m<from> … m<to-1>.
func idRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("m%02d", i))
	}
	return out
}

func TestReadChannelWindows(t *testing.T) {
	ts := start(t)
	slug, _, t0 := seedReading(t, ts.eng)
	at := func(i int) string {
		return url.QueryEscape(t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339))
	}
	get := func(q string) channelWindow {
		t.Helper()
		return decodeWindow[channelWindow](t, ts.get(t, "/api/channels/"+slug+"/messages?"+q))
	}
	cases := []struct {
		q                   string
		want                []string
		hasBefore, hasAfter bool
	}{
		{"", idRange(0, 30), false, false},
		{"limit=10", idRange(20, 30), true, false},
		{"around=m15&limit=5", idRange(13, 18), true, true},
		{"around=m15&limit=4", idRange(14, 18), true, true},
		{"around=m01&limit=5", idRange(0, 5), false, true},
		{"around=m29&limit=5", idRange(25, 30), true, false},
		{"around=m15&limit=1", idRange(15, 16), true, true},
		{"around=" + at(10) + "&limit=3", idRange(9, 12), true, true},
		{"around=2030-01-01&limit=3", idRange(27, 30), true, false},
		{"before=m10&limit=3", idRange(7, 10), true, true},
		{"before=m00", nil, false, true},
		{"after=m10&limit=3", idRange(11, 14), true, true},
		{"after=m29", nil, true, false},
		{"after=m10&before=m14", idRange(11, 14), true, true},
		{"after=m14&before=m10", nil, true, true},
		{"before=" + at(10), idRange(0, 10), false, true},
		{"after=" + at(10) + "&limit=2", idRange(11, 13), true, true},
		{"after=2026-03-01&before=2026-03-02", idRange(0, 30), false, false},
	}
	for _, c := range cases {
		w := get(c.q)
		if got := ids(w); !slices.Equal(got, c.want) || w.HasBefore != c.hasBefore || w.HasAfter != c.hasAfter {
			t.Errorf("%s: %v before %v after %v, want %v %v %v", c.q, got, w.HasBefore, w.HasAfter, c.want, c.hasBefore, c.hasAfter)
		}
		if w.Messages == nil {
			t.Errorf("%s: messages is null", c.q)
		}
	}

	// Paging back with before= walks the whole channel in order.
	var all []string
	w := get("limit=7")
	for {
		all = append(ids(w), all...)
		if !w.HasBefore {
			break
		}
		w = get("limit=7&before=" + w.Messages[0].ID)
	}
	if !slices.Equal(all, idRange(0, 30)) {
		t.Errorf("paging back: %v", all)
	}

	w = get("around=m07&limit=1")
	ch := w.Channel
	if ch.Slug != slug || ch.Name != "general" || ch.ID != "1" || ch.SourceID != "chat" || ch.Source != "Chat Server" || ch.URL != ts.url+"/c/"+slug {
		t.Errorf("channel %+v", ch)
	}
	m := w.Messages[0]
	if m.Author != "ana" || m.AuthorName != "Ana K" || m.Content != "message number 7" || m.ReplyTo != "m06" ||
		m.Timestamp != "2026-03-01T12:07:00.000Z" || m.URL != ts.url+"/c/"+slug+"?m=m07#m-m07" {
		t.Errorf("message %+v", m)
	}
	// The permalink leads to the page that shows the message.
	if page := ts.get(t, strings.TrimPrefix(m.URL, ts.url)); page.status != 200 || !bytes.Contains(page.body, []byte(`id="m-m07"`)) {
		t.Errorf("permalink %s: status %d", m.URL, page.status)
	}
	thread := get("around=m05&limit=1").Messages[0]
	tw := decodeWindow[channelWindow](t, ts.get(t, "/api/channels/"+thread.ThreadSlug+"/messages"))
	if thread.ThreadSlug == "" || !slices.Equal(ids(tw), []string{"t1"}) || tw.Channel.ParentSlug != slug {
		t.Errorf("thread of m05: %q, %v, parent %q", thread.ThreadSlug, ids(tw), tw.Channel.ParentSlug)
	}

	// Bad input: 400 naming the parameter; a message not in the channel: 404.
	for _, c := range []struct{ q, word string }{
		{"limit=0", "limit"}, {"limit=201", "limit"}, {"limit=ten", "limit"},
		{"around=m10&before=m12", "around"}, {"around=m10&after=m12", "around"},
		{"around=" + strings.Repeat("x", 257), "around"}, {"before=%ff", "before"},
	} {
		wantError(t, ts.get(t, "/api/channels/"+slug+"/messages?"+c.q), 400, c.word)
	}
	for _, q := range []string{"around=nosuch", "before=nosuch", "after=t1", "around=p1"} {
		_, id, _ := strings.Cut(q, "=")
		wantError(t, ts.get(t, "/api/channels/"+slug+"/messages?"+q), 404, id)
	}
	wantError(t, ts.get(t, "/api/channels/no-such/messages"), 404, "no-such")
	wantError(t, ts.get(t, "/api/channels/Bad%20Slug/messages"), 404)
}

func TestReadChannelPrivacy(t *testing.T) {
	ts := start(t)
	_, priv, _ := seedReading(t, ts.eng)
	r := ts.get(t, "/api/channels/"+priv+"/messages")
	wantError(t, r, 404)
	if bytes.Contains(r.body, []byte("secret")) {
		t.Fatal("a 404 shows private content")
	}
	wantError(t, ts.get(t, "/api/channels/"+priv+"/messages?around=p1"), 404)
	for _, auth := range [][]string{bearer, {"Authorization", "Basic " + basic(testUser, testPass)}} {
		w := decodeWindow[channelWindow](t, ts.get(t, "/api/channels/"+priv+"/messages?around=p1", auth...))
		if !slices.Equal(ids(w), []string{"p1"}) || w.Messages[0].Content != "secret plans" {
			t.Errorf("privileged read: %+v", w)
		}
	}
}

// TestReadingRateLimit: the reading API is on the public tier.
func TestReadingRateLimit(t *testing.T) {
	ts := start(t, func(o *Options) { o.PublicRateLimit = 2 })
	slug, _, _ := seedReading(t, ts.eng)
	d := docSlug(t, ts.eng, "Unicode guide")
	for _, path := range []string{"/api/documents/" + d.Slug, "/api/channels/" + slug + "/messages"} {
		if r := ts.get(t, path); r.status != 200 || r.header.Get("RateLimit-Limit") == "" {
			t.Fatalf("%s: status %d, RateLimit-Limit %q", path, r.status, r.header.Get("RateLimit-Limit"))
		}
	}
	wantError(t, ts.get(t, "/api/documents/"+d.Slug), 429)
	if r := ts.get(t, "/api/channels/"+slug+"/messages", bearer...); r.status != 200 {
		t.Errorf("Bearer is limited: %d", r.status)
	}
}

// TestReadingInProcess: the methods the MCP tools call take 0 for the
// defaults and answer bounds with the HTTP API's errors.
func TestReadingInProcess(t *testing.T) {
	ts := start(t)
	slug, priv, _ := seedReading(t, ts.eng)
	d := docSlug(t, ts.eng, "Unicode guide")
	w, err := ts.srv.api.readDocument(d.Slug, 0, 0, false)
	if err != nil || w.Content != readingText {
		t.Fatalf("readDocument: %v", err)
	}
	c, err := ts.srv.api.readChannel(slug, channelWindowQuery{}, false)
	if err != nil || len(c.Messages) != 30 {
		t.Fatalf("readChannel: %d messages, %v", len(c.Messages), err)
	}
	for _, err := range []error{
		func() error { _, err := ts.srv.api.readDocument(d.ID, -1, 0, false); return err }(),
		func() error { _, err := ts.srv.api.readDocument(d.ID, 0, bounds.ReadLength.Max+1, false); return err }(),
		func() error { _, err := ts.srv.api.readChannel(slug, channelWindowQuery{Limit: -1}, false); return err }(),
		func() error {
			_, err := ts.srv.api.readChannel(slug, channelWindowQuery{Around: "m01", After: "m02"}, false)
			return err
		}(),
	} {
		if st, _ := errorStatus(err); st != 400 {
			t.Errorf("%v: status %d, want 400", err, st)
		}
	}
	for _, err := range []error{
		func() error { _, err := ts.srv.api.readChannel(priv, channelWindowQuery{}, false); return err }(),
		func() error {
			_, err := ts.srv.api.readDocument(docSlug(t, ts.eng, "Salary bands").ID, 0, 0, false)
			return err
		}(),
	} {
		if st, _ := errorStatus(err); st != 404 {
			t.Errorf("%v: status %d, want 404", err, st)
		}
	}
}

func TestSearchContentSnippet(t *testing.T) {
	ts := start(t)
	long := strings.Repeat("Filler words about nothing in particular. ", 200) +
		"The flux capacitor needs 1.21 gigawatts <exactly> & more. " + strings.Repeat("More filler after it. ", 200)
	if _, err := ts.eng.PutDocuments([]record.Document{{Title: "Manual", Content: long, Format: record.FormatText}}); err != nil {
		t.Fatal(err)
	}
	search := func(q string) map[string]any {
		t.Helper()
		docs := ts.get(t, "/api/search?q=flux+capacitor"+q).json(t)["documents"].([]any)
		if len(docs) != 1 {
			t.Fatalf("%s: %d documents", q, len(docs))
		}
		return docs[0].(map[string]any)
	}
	for _, q := range []string{"", "&content=full"} {
		if got := search(q)["content"]; got != long {
			t.Errorf("%q: content is not the whole document", q)
		}
	}
	d := search("&content=snippet")
	snip, _ := d["content"].(string)
	if len(snip) == 0 || len(snip) >= len(long)/10 || !strings.Contains(snip, "flux capacitor") || !strings.Contains(snip, "<exactly> & more") {
		t.Errorf("snippet %q", snip)
	}
	if strings.Contains(snip, "<mark>") || !strings.Contains(d["highlight"].(string), "<mark>flux</mark>") {
		t.Errorf("snippet %q, highlight %q", snip, d["highlight"])
	}
	// The whole content is still served (from its cache) after a snippet.
	if got := search(""); got["content"] != long {
		t.Error("content=full after a snippet is not the whole document")
	}
	wantError(t, ts.get(t, "/api/search?q=flux&content=summary"), 400, "content")
}

// FuzzReadingParams feeds arbitrary parameters to both reading endpoints
// and to the methods behind them: never a 5xx, a refusal is a JSON error
// of 400 or 404, and an answer keeps its bounds.
func FuzzReadingParams(f *testing.F) {
	ts := start(f)
	slug, _, _ := seedReading(f, ts.eng)
	d := docSlug(f, ts.eng, "Unicode guide")
	h := ts.srv.Handler()
	f.Add(d.Slug, "offset=3&length=5", "m10", "", "", 5, 10, 3)
	f.Add(d.ID, "around=m10&limit=3", "", "2026-03-01T12:05:00Z", "m01", 0, 0, 0)
	f.Add("x", "before=%ff&after=2026-01-01&limit=-1", "m10", "m02", "m03", -4, 100001, 201)
	f.Fuzz(func(t *testing.T, ref, raw, around, before, after string, offset, length, limit int) {
		paths := []string{"/api/channels/" + slug + "/messages?"}
		if ref != "" { // "/api/documents/" is the router's redirect to the list
			paths = append(paths, "/api/documents/"+url.PathEscape(ref)+"?")
		}
		for _, path := range paths {
			var ctx fasthttp.RequestCtx
			ctx.Request.SetRequestURI(path + raw)
			h(&ctx)
			st := ctx.Response.StatusCode()
			if st != 200 && (st != 400 && st != 404 || !bytes.Contains(ctx.Response.Body(), []byte(`"error"`))) {
				t.Fatalf("%s%q: status %d: %s", path, raw, st, ctx.Response.Body())
			}
		}
		w, err := ts.srv.api.readDocument(ref, offset, length, true)
		if st, _ := errorStatus(err); err != nil && st != 400 && st != 404 {
			t.Fatalf("readDocument(%q, %d, %d): %v", ref, offset, length, err)
		}
		if err == nil && (w.Length < 0 || w.Length > bounds.ReadLength.Max || utf8.RuneCountInString(w.Content) != w.Length || w.Offset+w.Length > w.TotalLength) {
			t.Fatalf("readDocument(%q, %d, %d): window %d+%d of %d", ref, offset, length, w.Offset, w.Length, w.TotalLength)
		}
		c, err := ts.srv.api.readChannel(slug, channelWindowQuery{Around: around, Before: before, After: after, Limit: limit}, false)
		if st, _ := errorStatus(err); err != nil && st != 400 && st != 404 {
			t.Fatalf("readChannel(%q, %q, %q, %d): %v", around, before, after, limit, err)
		}
		if err == nil && (len(c.Messages) > max(limit, bounds.ReadLimit.Default) || c.Messages == nil) {
			t.Fatalf("readChannel(%q, %q, %q, %d): %d messages", around, before, after, limit, len(c.Messages))
		}
	})
}
