package httpapi

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// End-to-end tests of visibility and privacy (DESIGN.md, "Visibility and
// privacy") through the HTTP API of a listening server: real exports of
// Slack, Telegram and DiscordChatExporter (testdata/privacy) hold private
// and public conversations, each with a nonsense word of its own
// ("zorbax…" private by default, "quorvex…" public), and every surface a
// caller without credentials can reach is walked for them.

const (
	privacyData = "testdata/privacy"
	// privacyProbe is a word nothing holds: what a surface shows of it is
	// what it echoes of any query (the search box, the question).
	privacyProbe = "zorbaxnowhere"
)

// Kinds of places.
const (
	placeChannel  = "channel"
	placeThread   = "thread"
	placeDocument = "document"
	placeAuthor   = "author" // an author's messages in the channel of place `in`
	placeSource   = "source" // a source's name
)

// privacyPlace is a conversation, document, author or source name of the
// fixture, found by a word only it holds.
type privacyPlace struct {
	marker  string
	kind    string
	source  string
	id      string // channel id, document file, author username or source id
	in      string // thread: the parent's marker; author: the channel's marker
	private bool   // the export marks the channel private (a thread follows its parent unmarked)
	msgs    int    // messages imported into the channel, or written by the author
	desc    string
}

var privacyPlaces = []*privacyPlace{
	{"quorvexslackpub", placeChannel, "acme-slack", "C01GENERAL", "", false, 5, "Slack public channel (channels.json)"},
	{"quorvexslackthread", placeThread, "acme-slack", "C01GENERAL-1709543100.000300", "quorvexslackpub", false, 2, "thread of the Slack public channel"},
	{"quorvexslackdave", placeAuthor, "acme-slack", "dave", "quorvexslackpub", false, 2, "dave's messages in the Slack public channel"},
	{"zorbaxslackgroup", placeChannel, "acme-slack", "G02LEADS", "", true, 2, "Slack private channel (groups.json)"},
	{"zorbaxslackreply", placeThread, "acme-slack", "G02LEADS-1709550000.000100", "zorbaxslackgroup", false, 2, "thread of the Slack private channel"},
	{"zorbaxslackmpim", placeChannel, "acme-slack", "G03MPIM", "", true, 2, "Slack group DM (mpims.json)"},
	{"zorbaxslackdm", placeChannel, "acme-slack", "D04ALICEBOB", "", true, 2, "Slack DM (dms.json)"},
	{"zorbaxslackflagged", placeChannel, "acme-slack", "C05HIRING", "", true, 2, "Slack channel of channels.json marked is_private"},
	{"zorbaxtgpersonal", placeChannel, "acme-telegram", "200000002", "", true, 2, "Telegram personal_chat"},
	{"zorbaxtgsaved", placeChannel, "acme-telegram", "100000001", "", true, 2, "Telegram saved_messages"},
	{"zorbaxtgfamily", placeChannel, "acme-telegram", "300000003", "", true, 2, "Telegram private_group"},
	{"quorvextgnews", placeChannel, "acme-telegram", "1400000004", "", false, 2, "Telegram public_channel"},
	{"quorvextgforum", placeChannel, "acme-telegram", "1500000005", "", false, 2, "Telegram public_supergroup"},
	{"quorvexdiscordpub", placeChannel, "acme-discord", "1102345678901234600", "", false, 2, "Discord guild text channel"},
	{"zorbaxdiscorddm", placeChannel, "acme-discord", "1214165444198400001", "", true, 2, "DiscordChatExporter DM (DirectTextChat)"},
	{"zorbaxdiscordgdm", placeChannel, "acme-discord", "1214180543692800002", "", true, 2, "DiscordChatExporter group DM (DirectGroupTextChat)"},
	{"quorvexpubdoc", placeDocument, record.UploadsSourceID, "onboarding.md", "", false, 0, "public upload"},
	{"zorbaxprivdoc", placeDocument, "handbook", "salary-bands.md", "", false, 0, "document of a private source"},
	{"zorbaxhandbook", placeSource, "handbook", "handbook", "", false, 0, "name of a private source"},
}

// privacySources are the fixture's sources; the uploads source is built in.
var privacySources = []string{
	`{"id":"acme-slack","name":"Acme Slack","type":"slack"}`,
	`{"id":"acme-telegram","name":"Acme Telegram","type":"telegram"}`,
	`{"id":"acme-discord","name":"Acme Discord","type":"discord","config":{"guildId":"1102345678901234567"}}`,
	`{"id":"handbook","name":"Zorbaxhandbook staff wiki","type":"upload","visibility":"private"}`,
}

var privacySourceIDs = []string{record.UploadsSourceID, "acme-slack", "acme-telegram", "acme-discord", "handbook"}

// privacyWorld is a server holding the fixture, and what the test has done
// to it: the model every walk checks the server against.
type privacyWorld struct {
	ts           *testServer
	dir          string            // the engine's data dir, "" in memory
	searchBearer bool              // SEARCH_ACCESS=bearer
	slugs        map[string]string // marker → slug of its channel or document
	chanVis      map[string]string // marker → the operator's channel visibility (none = inherit)
	srcPrivate   map[string]bool
	srcDisabled  map[string]bool
	gone         map[string]bool // markers deleted: a channel deleted, an author opted out
	excluded     map[string][]string
}

func privacyOptions(mod ...func(*Options)) Options {
	o := Options{APISecretKey: testKey, AdminUser: testUser, AdminPassword: testPass}
	for _, m := range mod {
		m(&o)
	}
	return o
}

// newPrivacyWorld serves an engine on dir ("" = in memory), creates the
// sources, imports the exports, uploads the documents and waits for the
// semantic index.
func newPrivacyWorld(t *testing.T, dir string, mod ...func(*Options)) *privacyWorld {
	t.Helper()
	eng, idx, err := semantic.Open(engine.Options{DataDir: dir}.OpenWith, semantic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := privacyOptions(mod...)
	w := &privacyWorld{
		ts: serve(t, eng, idx, opts), dir: dir, searchBearer: opts.SearchAccess == "bearer",
		slugs: map[string]string{}, chanVis: map[string]string{},
		srcPrivate: map[string]bool{"handbook": true}, srcDisabled: map[string]bool{},
		gone: map[string]bool{}, excluded: map[string][]string{},
	}
	for _, body := range privacySources {
		w.admin(t, "POST", "/api/sources", body, 201)
	}
	w.importAll(t)
	w.upload(t, "onboarding.md", "", "Authorization", "Bearer "+testKey)
	w.upload(t, "salary-bands.md", "handbook", "Authorization", "Basic "+basic(testUser, testPass))
	w.learnSlugs(t)
	w.waitSemantic(t)
	return w
}

func readPrivacy(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(privacyData, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// privacySlackZip zips testdata/privacy/slack as Slack's workspace export
// does: the conversation files and one folder per conversation at the root;
// extra adds files (path → content).
func privacySlackZip(t testing.TB, extra map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range extra {
		if f, err := zw.Create(name); err != nil {
			t.Fatal(err)
		} else {
			f.Write([]byte(data))
		}
	}
	root := filepath.Join(privacyData, "slack")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		f, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// admin sends an admin request with the Bearer token and wants status.
func (w *privacyWorld) admin(t testing.TB, method, path, body string, status int) resp {
	t.Helper()
	var r resp
	if body == "" {
		r = w.ts.do(t, method, path, nil, bearer...)
	} else {
		r = w.ts.do(t, method, path, strings.NewReader(body), adminJSON...)
	}
	if r.status != status {
		t.Fatalf("%s %s %s: %d, want %d: %.300s", method, path, body, r.status, status, r.body)
	}
	return r
}

// importAll imports every export: the Slack zip and the Discord files as
// multipart uploads, the Telegram result.json as the raw body.
func (w *privacyWorld) importAll(t testing.TB) {
	t.Helper()
	imp := func(source string, body io.Reader, ct, format string) {
		t.Helper()
		h := []string{"Authorization", "Bearer " + testKey}
		if ct != "" {
			h = append(h, "Content-Type", ct)
		}
		r := w.ts.do(t, "POST", "/api/sources/"+source+"/import", body, h...)
		if r.status != 200 || r.json(t)["format"] != format {
			t.Fatalf("import into %s: %d %s", source, r.status, r.body)
		}
	}
	body, ct := multipartBody(t, map[string]string{"Acme Slack export Mar 4 2024 - Mar 5 2024.zip": string(privacySlackZip(t, nil))})
	imp("acme-slack", body, ct, "slack")
	imp("acme-telegram", bytes.NewReader(readPrivacy(t, "telegram-result.json")), "", "telegram")
	for _, f := range []string{"discord-general.json", "discord-dm.json", "discord-group-dm.json"} {
		body, ct := multipartBody(t, map[string]string{f: string(readPrivacy(t, f))})
		imp("acme-discord", body, ct, "discord")
	}
}

// upload posts a document file of testdata/privacy/docs, into sourceID
// ("" = the uploads source).
func (w *privacyWorld) upload(t testing.TB, file, sourceID string, auth ...string) {
	t.Helper()
	var fields []string
	if sourceID != "" {
		fields = []string{"sourceId", sourceID}
	}
	body, ct := multipartBody(t, map[string]string{file: string(readPrivacy(t, "docs/"+file))}, fields...)
	if r := w.ts.do(t, "POST", "/api/documents", body, append([]string{"Content-Type", ct}, auth...)...); r.status != 201 {
		t.Fatalf("upload %s: %d %s", file, r.status, r.body)
	}
}

func (w *privacyWorld) waitSemantic(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.ts.idx.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// privacyChannel is an item of GET /api/sources/{id}/channels.
type privacyChannel struct {
	ID, Name, Slug, Kind, ParentID  string
	Visibility, EffectiveVisibility string
	PlatformPrivate                 bool
	Messages                        int
}

func (w *privacyWorld) channels(t testing.TB, source string) (map[string]privacyChannel, []string) {
	t.Helper()
	var out struct {
		Channels []privacyChannel
		Excluded []string
	}
	r := w.admin(t, "GET", "/api/sources/"+source+"/channels", "", 200)
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("channels of %s: %v: %s", source, err, r.body)
	}
	m := map[string]privacyChannel{}
	for _, c := range out.Channels {
		m[c.ID] = c
	}
	return m, out.Excluded
}

// learnSlugs finds the slugs of the channels (admin channel lists) and
// documents (the document list with the token); a deleted channel keeps
// the slug it had.
func (w *privacyWorld) learnSlugs(t testing.TB) {
	t.Helper()
	for _, src := range []string{"acme-slack", "acme-telegram", "acme-discord"} {
		chans, _ := w.channels(t, src)
		for _, p := range privacyPlaces {
			if p.source == src && (p.kind == placeChannel || p.kind == placeThread) && !w.isGone(p) {
				c, ok := chans[p.id]
				if !ok {
					t.Fatalf("the import of %s has no channel %s (%s); it has %v", src, p.id, p.desc, slices.Collect(maps.Keys(chans)))
				}
				w.slugs[p.marker] = c.Slug
			}
		}
	}
	var docs struct {
		Documents []struct{ Title, Slug string }
	}
	json.Unmarshal(w.admin(t, "GET", "/api/documents?limit=1000", "", 200).body, &docs)
	for _, p := range privacyPlaces {
		if p.kind != placeDocument {
			continue
		}
		for _, d := range docs.Documents {
			if strings.Contains(strings.ToLower(d.Title), p.marker) {
				w.slugs[p.marker] = d.Slug
			}
		}
		if w.slugs[p.marker] == "" {
			t.Fatalf("no document %s (%s) in %+v", p.marker, p.desc, docs.Documents)
		}
	}
}

func privacyPlaceOf(marker string) *privacyPlace {
	for _, p := range privacyPlaces {
		if p.marker == marker {
			return p
		}
	}
	panic("no place " + marker)
}

// isGone reports whether a place was deleted, with the channel it is in.
func (w *privacyWorld) isGone(p *privacyPlace) bool {
	return w.gone[p.marker] || p.in != "" && w.isGone(privacyPlaceOf(p.in))
}

// hidden is the model of DESIGN.md: what callers without credentials must
// not see.
func (w *privacyWorld) hidden(p *privacyPlace) bool {
	if w.isGone(p) {
		return true
	}
	srcHidden := w.srcPrivate[p.source] || w.srcDisabled[p.source]
	switch p.kind {
	case placeAuthor:
		return w.hidden(privacyPlaceOf(p.in))
	case placeDocument:
		return srcHidden
	case placeSource: // named wherever it shows something
		for _, q := range privacyPlaces {
			if q.source == p.source && q.kind != placeSource && !w.hidden(q) {
				return false
			}
		}
		return srcHidden
	}
	if w.srcDisabled[p.source] {
		return true
	}
	// The nearest operator's choice decides, up from a thread to its
	// parent; a private conversation on the way makes it private.
	for q := p; ; q = privacyPlaceOf(q.in) {
		switch w.chanVis[q.marker] {
		case record.VisibilityPublic:
			return false
		case record.VisibilityPrivate:
			return true
		}
		if q.private {
			return true
		}
		if q.kind != placeThread {
			return srcHidden
		}
	}
}

// messages is how many messages a channel holds now.
func (w *privacyWorld) messages(p *privacyPlace) int {
	n := p.msgs
	for _, a := range privacyPlaces {
		if a.kind == placeAuthor && a.in == p.marker && w.gone[a.marker] {
			n -= a.msgs
		}
	}
	return n
}

// counts is what /healthz should count: of every source (source ""), or
// of one. Without privileges a source counts when it shows something.
func (w *privacyWorld) counts(privileged bool, source string) map[string]int {
	c := map[string]int{"sources": 0, "channels": 0, "threads": 0, "messages": 0, "documents": 0}
	for _, p := range privacyPlaces {
		if w.isGone(p) || !privileged && w.hidden(p) || source != "" && p.source != source {
			continue
		}
		switch p.kind {
		case placeChannel:
			c["channels"]++
			c["messages"] += w.messages(p)
		case placeThread:
			c["threads"]++
			c["messages"] += w.messages(p)
		case placeDocument:
			c["documents"]++
		}
	}
	for _, id := range privacySourceIDs {
		if (privileged || !w.sourceHidden(id)) && (source == "" || source == id) {
			c["sources"]++
		}
	}
	return c
}

// checkAll checks the admin view, the public view and the privileged view.
func (w *privacyWorld) checkAll(t *testing.T) {
	t.Helper()
	w.checkAdmin(t)
	w.checkPublic(t)
	w.checkAbsentAlike(t)
	w.checkPrivileged(t)
}

// sourceHidden reports whether nothing of a source shows to callers
// without credentials.
func (w *privacyWorld) sourceHidden(id string) bool {
	for _, p := range privacyPlaces {
		if p.source == id && p.kind != placeSource && !w.hidden(p) {
			return false
		}
	}
	return true
}

// durations are the timings in answers, which differ from call to call.
var timings = regexp.MustCompile(`"durationMs":[0-9.e-]+`)

// checkAbsentAlike: to a caller without credentials, a filter naming a
// source that shows nothing answers exactly as one naming no source at all
// (the id echoed, never the name), on the pages, the API and MCP.
func (w *privacyWorld) checkAbsentAlike(t *testing.T) {
	t.Helper()
	const absent = "no-such-source"
	answer := func(path string) string {
		r := w.ts.get(t, path)
		return fmt.Sprint(r.status, " ", timings.ReplaceAllString(string(r.body), ""))
	}
	mcpSearch := func(id string) string {
		r := w.ts.do(t, "POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"`+privacyProbe+`","source":"`+id+`"}}}`),
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		return fmt.Sprint(r.status, " ", string(r.body))
	}
	// A hidden channel's or document's slug answers as an absent one.
	for _, p := range privacyPlaces {
		slug := w.slugs[p.marker]
		if !w.hidden(p) || slug == "" || p.kind == placeAuthor {
			continue
		}
		paths := []string{"/c/%s", "/api/channels/%s/messages", "/t/%s"}
		if p.kind == placeDocument {
			paths = []string{"/d/%s", "/api/documents/%s"}
		}
		for _, path := range paths {
			got, want := answer(fmt.Sprintf(path, slug)), answer(fmt.Sprintf(path, "no-such-slug"))
			if strings.ReplaceAll(got, slug, "no-such-slug") != want {
				t.Errorf("LEAK: GET %s (no credentials) answers otherwise than for a slug that does not exist (%s):\n%.300s\nvs\n%.300s",
					fmt.Sprintf(path, slug), p.desc, got, want)
			}
		}
	}
	for _, id := range privacySourceIDs {
		if !w.sourceHidden(id) {
			continue
		}
		for _, path := range []string{"/?q=source:%s", "/?q=" + privacyProbe + "+source:%s", "/?q=" + privacyProbe + "&source=%s",
			"/api/search?q=" + privacyProbe + "&source=%s", "/api/semantic-search?hyde=0&q=" + privacyProbe + "&source=%s"} {
			if w.searchBearer && !strings.HasPrefix(path, "/api/semantic") {
				continue
			}
			got, want := answer(fmt.Sprintf(path, id)), answer(fmt.Sprintf(path, absent))
			if strings.ReplaceAll(got, id, absent) != want {
				t.Errorf("LEAK: GET %s (no credentials) answers otherwise than for a source that does not exist:\n%.400s\nvs\n%.400s",
					fmt.Sprintf(path, id), got, want)
			}
		}
		if got, want := mcpSearch(id), mcpSearch(absent); strings.ReplaceAll(got, id, absent) != want {
			t.Errorf("LEAK: the MCP search tool answers otherwise for hidden source %s than for one that does not exist:\n%.300s\nvs\n%.300s", id, got, want)
		}
	}
}

// checkAdmin compares the admin channel lists with the model: every
// channel present with its flags and counts, deleted ones absent and
// listed as excluded.
func (w *privacyWorld) checkAdmin(t *testing.T) {
	t.Helper()
	for _, src := range []string{"acme-slack", "acme-telegram", "acme-discord"} {
		chans, excluded := w.channels(t, src)
		for _, p := range privacyPlaces {
			if p.source != src || p.kind != placeChannel && p.kind != placeThread {
				continue
			}
			c, ok := chans[p.id]
			delete(chans, p.id)
			if w.isGone(p) {
				if ok {
					t.Errorf("GET /api/sources/%s/channels: deleted %s %s is still listed", src, p.desc, p.id)
				}
				continue
			}
			if !ok {
				t.Errorf("GET /api/sources/%s/channels: %s %s missing", src, p.desc, p.id)
				continue
			}
			eff := record.VisibilityPublic
			if w.hidden(p) {
				eff = record.VisibilityPrivate
			}
			wantKind, wantParent := placeChannel, ""
			if p.kind == placeThread {
				wantKind, wantParent = placeThread, privacyPlaceOf(p.in).id
			}
			if c.PlatformPrivate != p.private || c.EffectiveVisibility != eff || c.Messages != w.messages(p) ||
				c.Visibility != cmp.Or(w.chanVis[p.marker], record.VisibilityInherit) || c.Kind != wantKind || c.ParentID != wantParent {
				t.Errorf("GET /api/sources/%s/channels: %s: %+v; want platformPrivate %v, effectiveVisibility %s, visibility %s, kind %s, parent %q, %d messages",
					src, p.desc, c, p.private, eff, cmp.Or(w.chanVis[p.marker], record.VisibilityInherit), wantKind, wantParent, w.messages(p))
			}
		}
		for id, c := range chans {
			t.Errorf("GET /api/sources/%s/channels: unexpected channel %s %+v", src, id, c)
		}
		if want := w.excluded[src]; !slices.Equal(privacySorted(excluded), privacySorted(want)) {
			t.Errorf("GET /api/sources/%s/channels: excluded %v, want %v", src, excluded, want)
		}
	}
}

func privacySorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	return s
}

// pagePath is the public page of a channel or document.
func (w *privacyWorld) pagePath(p *privacyPlace) string {
	switch p.kind {
	case placeChannel, placeThread:
		return "/c/" + w.slugs[p.marker]
	case placeDocument:
		return "/d/" + w.slugs[p.marker]
	}
	return ""
}

// fetchPage gets path (without credentials unless header has them) and
// wants status; it returns the body in lower case.
func (w *privacyWorld) fetchPage(t *testing.T, path string, status int, header ...string) string {
	t.Helper()
	r := w.ts.get(t, path, header...)
	if r.status != status {
		t.Errorf("GET %s: %d, want %d: %.200s", path, r.status, status, r.body)
	}
	return strings.ToLower(string(r.body))
}

// sitemap follows /sitemap.xml to each child sitemap and returns the paths
// they list, with the bodies of the sitemaps.
func (w *privacyWorld) sitemap(t *testing.T) (paths []string, bodies map[string]string) {
	t.Helper()
	bodies = map[string]string{}
	var index struct {
		Sitemaps []struct {
			Loc string `xml:"loc"`
		} `xml:"sitemap"`
	}
	bodies["/sitemap.xml"] = w.fetchPage(t, "/sitemap.xml", 200)
	if err := xml.Unmarshal([]byte(bodies["/sitemap.xml"]), &index); err != nil || len(index.Sitemaps) == 0 {
		t.Fatalf("sitemap index: %v: %s", err, bodies["/sitemap.xml"])
	}
	for _, sm := range index.Sitemaps {
		path, ok := strings.CutPrefix(sm.Loc, w.ts.url)
		if !ok {
			t.Fatalf("sitemap index lists %s, not under %s", sm.Loc, w.ts.url)
		}
		var set struct {
			URLs []struct {
				Loc string `xml:"loc"`
			} `xml:"url"`
		}
		r := w.ts.get(t, path)
		if r.status != 200 {
			t.Fatalf("GET %s: %d", path, r.status)
		}
		// The paths as listed (ids keep their case); the bodies in lower
		// case, as fetchPage gives them, for the markers.
		bodies[path] = strings.ToLower(string(r.body))
		if err := xml.Unmarshal(r.body, &set); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, u := range set.URLs {
			p, ok := strings.CutPrefix(u.Loc, w.ts.url)
			if !ok {
				t.Fatalf("%s lists %s, not under %s", path, u.Loc, w.ts.url)
			}
			paths = append(paths, p)
		}
	}
	return paths, bodies
}

// publicBodies fetches, without credentials, the sitemaps, every page
// they list, and the pages and lists that are not in them; it returns the
// listed paths and every body by path, in lower case.
func (w *privacyWorld) publicBodies(t *testing.T) (listed []string, bodies map[string]string) {
	t.Helper()
	listed, bodies = w.sitemap(t)
	for _, path := range []string{"/", "/sources", "/llms.txt", "/llms-full.txt", "/robots.txt", "/healthz", "/api/documents?limit=1000"} {
		bodies[path] = w.fetchPage(t, path, 200)
	}
	for _, path := range listed {
		bodies[path] = w.fetchPage(t, path, 200)
	}
	return listed, bodies
}

// leaks returns where marker shows to callers without credentials: the
// bodies of publicBodies, and the answers of every query surface beyond
// their echo of the query.
func (w *privacyWorld) leaks(t *testing.T, marker string) []string {
	t.Helper()
	var where []string
	_, bodies := w.publicBodies(t)
	for path, body := range bodies {
		if strings.Contains(body, marker) {
			where = append(where, "GET "+path)
		}
	}
	for _, s := range privacySurfaces {
		if s.v1 || s.search && w.searchBearer {
			continue
		}
		echo := strings.Count(strings.ToLower(string(s.fetch(t, w.ts, privacyProbe, nil).body)), privacyProbe)
		if strings.Count(strings.ToLower(string(s.fetch(t, w.ts, marker, nil).body)), marker) > echo {
			where = append(where, s.name+" ("+marker+")")
		}
	}
	slices.Sort(where)
	return where
}

// checkPublic walks everything a caller without credentials can read and
// checks it against the model: no hidden place anywhere, every visible one
// where it belongs, counts of public content only.
func (w *privacyWorld) checkPublic(t *testing.T) {
	t.Helper()
	listed, bodies := w.publicBodies(t)
	// Nothing hidden on any page, sitemap or list.
	for path, body := range bodies {
		for _, p := range privacyPlaces {
			if w.hidden(p) && strings.Contains(body, p.marker) {
				t.Errorf("LEAK: GET %s (no credentials) shows %q, of the %s", path, p.marker, p.desc)
			}
		}
	}
	// Each page where the model says: hidden ones 404 (with credentials
	// too: pages show the public view), visible ones linked from the
	// sitemap, /sources and llms.txt.
	for _, p := range privacyPlaces {
		path := w.pagePath(p)
		switch {
		case p.kind == placeSource:
			if !w.hidden(p) && !strings.Contains(bodies["/sources"], p.marker) {
				t.Errorf("/sources does not name the %s", p.desc)
			}
		case p.kind == placeAuthor:
			if !w.hidden(p) && !strings.Contains(bodies[w.pagePath(privacyPlaceOf(p.in))], p.marker) {
				t.Errorf("%s does not show %s", w.pagePath(privacyPlaceOf(p.in)), p.desc)
			}
		case w.hidden(p):
			w.fetchPage(t, path, 404)
			w.fetchPage(t, path, 404, bearer...)
			w.fetchPage(t, path, 404, "Authorization", "Basic "+basic(testUser, testPass))
			w.fetchPage(t, path, 404, "Accept", "text/html")
			if r := w.ts.do(t, "HEAD", path, nil); r.status != 404 {
				t.Errorf("HEAD %s: %d, want 404", path, r.status)
			}
		default:
			if !slices.Contains(listed, path) {
				t.Errorf("the sitemap does not list %s (%s): %v", path, p.desc, listed)
			}
			if !strings.Contains(bodies[path], p.marker) {
				t.Errorf("GET %s does not show %q (%s)", path, p.marker, p.desc)
			}
			if p.kind != placeThread {
				if !strings.Contains(bodies["/llms.txt"], "("+strings.ToLower(w.ts.url+path)+")") {
					t.Errorf("/llms.txt does not link %s (%s)", path, p.desc)
				}
				if !strings.Contains(bodies["/sources"], `href="`+path+`"`) {
					t.Errorf("/sources does not link %s (%s)", path, p.desc)
				}
			}
			if p.kind == placeDocument {
				for _, where := range []string{"/llms-full.txt", "/api/documents?limit=1000"} {
					if !strings.Contains(bodies[where], p.marker) {
						t.Errorf("%s does not have the %s", where, p.desc)
					}
				}
			}
		}
	}
	w.checkCounts(t, bodies["/healthz"], false)
	w.checkCountTexts(t, bodies)
	w.checkFiltered(t)
	w.checkQueries(t, false)
}

// checkCountTexts checks the counts that pages and lists show: public
// content only.
func (w *privacyWorld) checkCountTexts(t *testing.T, bodies map[string]string) {
	t.Helper()
	c := w.counts(false, "")
	home := fmt.Sprintf("%s in %s and %s from %s", count(c["messages"], "message"), count(c["channels"], "channel"),
		count(c["documents"], "document"), count(c["sources"], "source"))
	llms := fmt.Sprintf("over %s in %s and %s", count(c["messages"], "chat message"), count(c["channels"], "channel"), count(c["documents"], "document"))
	for path, want := range map[string]string{"/": home, "/llms.txt": llms} {
		if !strings.Contains(bodies[path], want) {
			t.Errorf("GET %s does not say %q", path, want)
		}
	}
	var list struct{ Total int }
	json.Unmarshal([]byte(bodies["/api/documents?limit=1000"]), &list)
	if list.Total != c["documents"] {
		t.Errorf("GET /api/documents: total %d, want %d", list.Total, c["documents"])
	}
	// Each source on /sources with what it shows.
	for _, id := range privacySourceIDs {
		sc := w.counts(false, id)
		_, section, listed := strings.Cut(bodies["/sources"], `id="source-`+id+`"`)
		section, _, _ = strings.Cut(section, "</section>")
		if shows := !w.sourceHidden(id); listed != shows {
			t.Errorf("/sources lists source %s: %v, want %v", id, listed, shows)
			continue
		}
		want := fmt.Sprintf("%s · %s · %s", count(sc["channels"], "channel"), count(sc["messages"], "message"), count(sc["documents"], "document"))
		if listed && !strings.Contains(section, want) {
			t.Errorf("/sources: source %s does not say %q", id, want)
		}
		if l := parseSourcesPage(t, bodies["/sources"])[id]; l.channels != l.listedChannels || l.documents != l.listedDocs {
			t.Errorf("/sources: source %s states %d channels and %d documents, lists %d and %d",
				id, l.channels, l.documents, l.listedChannels, l.listedDocs)
		}
	}
}

// checkFiltered narrows searches without credentials to each place's own
// source, channel or author: what is hidden stays hidden, what is visible
// is found.
func (w *privacyWorld) checkFiltered(t *testing.T) {
	t.Helper()
	type filtered struct {
		search bool // governed by SEARCH_ACCESS
		url    func(q string) string
	}
	for _, p := range privacyPlaces {
		if p.kind == placeSource {
			continue
		}
		src := url.QueryEscape(p.source)
		fs := []filtered{
			{true, func(q string) string { return "/api/search?q=" + q + "&source=" + src }},
			{true, func(q string) string { return "/?q=" + q + "&source=" + src }},
			{false, func(q string) string { return "/api/semantic-search?hyde=0&q=" + q + "&source=" + src }},
			{false, func(q string) string { return "/api/semantic-search?q=" + q + "&boost=" + src + ":10" }},
		}
		switch p.kind {
		case placeChannel, placeThread:
			fs = append(fs, filtered{true, func(q string) string { return "/api/search?q=" + q + "&channel=" + w.slugs[p.marker] }})
		case placeAuthor:
			fs = append(fs, filtered{true, func(q string) string { return "/api/search?q=" + q + "&from=" + p.id }})
		}
		for _, f := range fs {
			if f.search && w.searchBearer {
				continue // refused: checkQueries has it
			}
			echo := strings.Count(w.fetchPage(t, f.url(privacyProbe), 200), privacyProbe)
			n := strings.Count(w.fetchPage(t, f.url(p.marker), 200), p.marker)
			switch hidden := w.hidden(p); {
			case hidden && n > echo:
				t.Errorf("LEAK: GET %s (no credentials) shows the %s", f.url(p.marker), p.desc)
			case !hidden && n <= echo:
				t.Errorf("GET %s does not find the %s", f.url(p.marker), p.desc)
			}
		}
	}
}

// checkCounts compares a /healthz body with the model's counts.
func (w *privacyWorld) checkCounts(t *testing.T, body string, privileged bool) {
	t.Helper()
	var h map[string]any
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	for k, want := range w.counts(privileged, "") {
		if got, _ := h[k].(float64); int(got) != want {
			t.Errorf("/healthz (privileged %v): %s = %v, want %d", privileged, k, h[k], want)
		}
	}
}

// privacySurface is an endpoint that answers a query.
type privacySurface struct {
	name   string
	api    bool // credentials open private content (pages show the public view)
	search bool // governed by SEARCH_ACCESS
	v1     bool // Bearer only
	fetch  func(t *testing.T, ts *testServer, q string, header []string) resp
}

var privacySurfaces = []privacySurface{
	{name: "GET /?q=", search: true, fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.get(t, "/?q="+url.QueryEscape(q), h...)
	}},
	{name: "POST / (ask form)", fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.do(t, "POST", "/", strings.NewReader("ask="+url.QueryEscape(q)),
			append([]string{"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin"}, h...)...)
	}},
	{name: "GET /api/search", api: true, search: true, fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.get(t, "/api/search?q="+url.QueryEscape(q), h...)
	}},
	{name: "GET /api/semantic-search", api: true, fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.get(t, "/api/semantic-search?q="+url.QueryEscape(q), h...)
	}},
	{name: "POST /api/ask", api: true, fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.do(t, "POST", "/api/ask", askBody(q), append(slices.Clone(jsonCT), h...)...)
	}},
	{name: "POST /api/ask (SSE)", api: true, fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.do(t, "POST", "/api/ask", askBody(q), append([]string{"Content-Type", "application/json", "Accept", "text/event-stream"}, h...)...)
	}},
	{name: "POST /api/v1/ask", api: true, v1: true, fetch: func(t *testing.T, ts *testServer, q string, h []string) resp {
		return ts.do(t, "POST", "/api/v1/ask", askBody(q), append(slices.Clone(jsonCT), h...)...)
	}},
}

// checkQueries asks every query surface for every marker, without
// credentials or (privileged) with the Bearer token, and checks that no
// place the caller may not see shows up beyond the surface's echo of the
// query, and that the places they may see are found.
func (w *privacyWorld) checkQueries(t *testing.T, privileged bool) {
	t.Helper()
	var header []string
	if privileged {
		header = bearer
	}
	for _, s := range privacySurfaces {
		if s.v1 && !privileged {
			continue
		}
		refused := !privileged && s.search && w.searchBearer // 401 for every query
		status := 200
		if refused {
			status = 401
		}
		ask := func(q string) string {
			r := s.fetch(t, w.ts, q, header)
			if r.status != status {
				t.Errorf("%s %q (privileged %v): %d, want %d: %.200s", s.name, q, privileged, r.status, status, r.body)
			}
			if status != 200 && s.api {
				wantError(t, r, status)
			}
			return strings.ToLower(string(r.body))
		}
		echo := strings.Count(ask(privacyProbe), privacyProbe)
		for _, q := range privacyPlaces {
			body := ask(q.marker)
			for _, p := range privacyPlaces {
				shown := !w.hidden(p)
				if privileged && s.api {
					shown = !w.isGone(p)
				}
				allowed := 0
				if p == q {
					allowed = echo
				}
				if n := strings.Count(body, p.marker); !shown && n > allowed {
					t.Errorf("LEAK: %s %q (privileged %v) shows %q, of the %s (%s): %.300s",
						s.name, q.marker, privileged, p.marker, p.desc, map[bool]string{true: "deleted", false: "hidden"}[w.isGone(p)], body)
				}
			}
			found := !w.hidden(q)
			if privileged && s.api {
				found = !w.isGone(q)
			}
			if found && !refused && q.kind != placeSource && strings.Count(body, q.marker) <= echo {
				t.Errorf("%s %q (privileged %v) does not find the %s: %.300s", s.name, q.marker, privileged, q.desc, body)
			}
		}
	}
}

// checkPrivileged checks what the Bearer token and admin Basic Auth open:
// the API finds private content, pages still show the public view, and
// deleted content is gone for everyone.
func (w *privacyWorld) checkPrivileged(t *testing.T) {
	t.Helper()
	w.checkCounts(t, w.fetchPage(t, "/healthz", 200, bearer...), true)
	docs := w.fetchPage(t, "/api/documents?limit=1000", 200, bearer...)
	for _, p := range privacyPlaces {
		if p.kind == placeDocument && !strings.Contains(docs, p.marker) {
			t.Errorf("GET /api/documents with the token does not list the %s", p.desc)
		}
	}
	// Admin Basic Auth opens private content of /api/search too, where
	// SEARCH_ACCESS lets it search (bearer mode takes the token only).
	basicAuth := []string{"Authorization", "Basic " + basic(testUser, testPass)}
	if w.searchBearer {
		wantError(t, w.ts.get(t, "/api/search?q=zorbaxslackdm", basicAuth...), 401)
	}
	for _, p := range privacyPlaces {
		if p.kind == placeSource || w.searchBearer {
			continue
		}
		body := w.fetchPage(t, "/api/search?q="+p.marker, 200, basicAuth...)
		if found := strings.Contains(body, p.marker); found == w.isGone(p) {
			t.Errorf("GET /api/search?q=%s with Basic Auth: found %v, the %s is deleted: %v", p.marker, found, p.desc, w.isGone(p))
		}
	}
	w.checkQueries(t, true)
}

// TestPrivacyPublicSurfaces imports private and public conversations of
// every export format and walks every surface, in both SEARCH_ACCESS modes.
func TestPrivacyPublicSurfaces(t *testing.T) {
	for _, mode := range []string{"public", "bearer"} {
		t.Run("SEARCH_ACCESS="+mode, func(t *testing.T) {
			w := newPrivacyWorld(t, "", func(o *Options) { o.SearchAccess = mode })
			w.checkAll(t)
			// /api/v1/ask is for the token only.
			wantError(t, w.ts.do(t, "POST", "/api/v1/ask", askBody("zorbaxslackdm"), jsonCT...), 401)
			if mode == "bearer" {
				for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}} {
					wantError(t, w.ts.get(t, "/api/search?q=zorbaxslackdm", h...), 401)
				}
			}
		})
	}
}

// TestPrivacyVisibilityChanges changes channel and source visibility and
// enabled through the API; after each change every surface follows.
func TestPrivacyVisibilityChanges(t *testing.T) {
	w := newPrivacyWorld(t, "")
	chanPath := func(marker string) string {
		p := privacyPlaceOf(marker)
		return "/api/sources/" + p.source + "/channels/" + url.PathEscape(p.id)
	}
	setChannel := func(marker, vis string) func(*testing.T) {
		return func(t *testing.T) {
			r := w.admin(t, "PATCH", chanPath(marker), `{"visibility":"`+vis+`"}`, 200)
			if vis == record.VisibilityInherit {
				delete(w.chanVis, marker)
			} else {
				w.chanVis[marker] = vis
			}
			var c privacyChannel
			json.Unmarshal(r.body, &c)
			eff := map[bool]string{true: "private", false: "public"}[w.hidden(privacyPlaceOf(marker))]
			if c.ID != privacyPlaceOf(marker).id || c.Visibility != vis || c.EffectiveVisibility != eff {
				t.Errorf("PATCH %s %s: %s; want effectiveVisibility %s", chanPath(marker), vis, r.body, eff)
			}
		}
	}
	patchSource := func(id, body string, apply func()) func(*testing.T) {
		return func(t *testing.T) {
			w.admin(t, "PATCH", "/api/sources/"+id, body, 200)
			apply()
		}
	}
	steps := []struct {
		name   string
		change func(*testing.T)
	}{
		{"Slack thread of a public channel made private", setChannel("quorvexslackthread", "private")},
		{"that thread back to inherit", setChannel("quorvexslackthread", "inherit")},
		{"Slack private channel made public", setChannel("zorbaxslackgroup", "public")},
		{"Slack private channel back to inherit", setChannel("zorbaxslackgroup", "inherit")},
		{"Slack DM made public", setChannel("zorbaxslackdm", "public")},
		{"Slack DM set private", setChannel("zorbaxslackdm", "private")},
		{"Slack DM back to inherit", setChannel("zorbaxslackdm", "inherit")},
		{"Telegram public channel made private", setChannel("quorvextgnews", "private")},
		{"Telegram public channel back to inherit", setChannel("quorvextgnews", "inherit")},
		{"Discord source made private", patchSource("acme-discord", `{"visibility":"private"}`, func() { w.srcPrivate["acme-discord"] = true })},
		{"a channel of the private source made public", setChannel("quorvexdiscordpub", "public")},
		{"that channel back to inherit", setChannel("quorvexdiscordpub", "inherit")},
		{"Discord source public again", patchSource("acme-discord", `{"visibility":"public"}`, func() { w.srcPrivate["acme-discord"] = false })},
		{"private documents source made public", patchSource("handbook", `{"visibility":"public"}`, func() { w.srcPrivate["handbook"] = false })},
		{"documents source private again", patchSource("handbook", `{"visibility":"private"}`, func() { w.srcPrivate["handbook"] = true })},
		{"uploads source disabled", patchSource(record.UploadsSourceID, `{"enabled":false}`, func() { w.srcDisabled[record.UploadsSourceID] = true })},
		{"uploads source enabled again", patchSource(record.UploadsSourceID, `{"enabled":true}`, func() { w.srcDisabled[record.UploadsSourceID] = false })},
		{"Telegram source disabled", patchSource("acme-telegram", `{"enabled":false}`, func() { w.srcDisabled["acme-telegram"] = true })},
		{"a channel of the disabled source set public", setChannel("quorvextgforum", "public")},
		{"Telegram source enabled again", patchSource("acme-telegram", `{"enabled":true}`, func() { w.srcDisabled["acme-telegram"] = false })},
		{"that channel back to inherit", setChannel("quorvextgforum", "inherit")},
	}
	for _, st := range steps {
		if !t.Run(st.name, func(t *testing.T) {
			st.change(t)
			w.checkAdmin(t)
			w.checkPublic(t)
		}) {
			t.FailNow() // later steps assume this one's state
		}
	}
	w.checkPrivileged(t)
}

// TestPrivacyOperatorActionsPersist deletes channels, restores them and
// opts an author out and in, and checks that each holds across re-imports
// of the same files, a restart from the log alone (the data dir as a
// killed process leaves it) and a restart from a snapshot.
func TestPrivacyOperatorActionsPersist(t *testing.T) {
	w := newPrivacyWorld(t, t.TempDir())
	top := t // the restarted servers and their dirs outlive the subtests
	reopen := func(t *testing.T, dir string) {
		w.ts.srv.Shutdown(context.Background())
		w.ts.eng.Close()
		eng, idx, err := semantic.Open(engine.Options{DataDir: dir}.OpenWith, semantic.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w.ts, w.dir = serve(top, eng, idx, privacyOptions()), dir
		w.waitSemantic(t)
	}
	// crashRestart serves a copy of the data dir taken while the server
	// runs: acknowledged writes are in the log, and no snapshot is (Close
	// would write one).
	crashRestart := func(t *testing.T) {
		img := top.TempDir()
		if err := os.CopyFS(img, os.DirFS(w.dir)); err != nil {
			t.Fatal(err)
		}
		reopen(t, img)
		if s := w.ts.eng.LastSnapshot(); s != nil {
			t.Fatalf("the crash image holds a snapshot (%+v): this is not a log replay", s)
		}
	}
	reimport := func(t *testing.T) {
		w.importAll(t)
		w.learnSlugs(t)
		w.waitSemantic(t)
	}
	deleteChannel := func(marker string) {
		p := privacyPlaceOf(marker)
		w.admin(t, "DELETE", "/api/sources/"+p.source+"/channels/"+p.id, "", 204)
		w.gone[marker] = true
		w.excluded[p.source] = append(w.excluded[p.source], p.id)
	}
	optOuts := func(t *testing.T, want ...string) {
		var out struct{ Optouts []string }
		json.Unmarshal(w.admin(t, "GET", "/api/sources/acme-slack/optouts", "", 200).body, &out)
		if !slices.Equal(privacySorted(out.Optouts), privacySorted(want)) {
			t.Errorf("opt-outs %v, want %v", out.Optouts, want)
		}
	}

	deleteChannel("zorbaxslackgroup") // private, with a thread
	deleteChannel("quorvextgnews")    // public
	r := w.admin(t, "POST", "/api/sources/acme-slack/optouts", `{"author":"Dave"}`, 201)
	if m := r.json(t); m["author"] != "Dave" || m["removed"] != 2.0 {
		t.Errorf("opt-out: %s", r.body)
	}
	w.gone["quorvexslackdave"] = true
	w.waitSemantic(t)
	t.Run("after the deletes", w.checkAll)
	t.Run("after a re-import", func(t *testing.T) { reimport(t); w.checkAll(t); optOuts(t, "Dave") })
	t.Run("after a restart from the log", func(t *testing.T) { crashRestart(t); w.checkAll(t); optOuts(t, "Dave") })
	t.Run("re-import after the restart", func(t *testing.T) { reimport(t); w.checkAll(t) })

	// A restored channel comes back with the next import, not before.
	w.admin(t, "POST", "/api/sources/acme-telegram/channels/1400000004/restore", "", 200)
	w.excluded["acme-telegram"] = nil
	t.Run("restored, before the import", w.checkAll)
	delete(w.gone, "quorvextgnews")
	t.Run("restored and re-imported", func(t *testing.T) { reimport(t); w.checkAll(t) })

	if err := w.ts.eng.Snapshot(); err != nil {
		t.Fatal(err)
	}
	snap := w.ts.eng.LastSnapshot()
	t.Run("after a snapshot load", func(t *testing.T) {
		reopen(t, w.dir)
		if got := w.ts.eng.LastSnapshot(); got == nil || got.Seq != snap.Seq {
			t.Errorf("the engine did not load the snapshot of seq %d: %+v", snap.Seq, got)
		}
		w.checkAll(t)
		optOuts(t, "Dave")
	})
	t.Run("re-import after the snapshot load", func(t *testing.T) { reimport(t); w.checkAll(t) })

	// The private channel restored comes back private; the author opted in
	// again comes back with the next import.
	w.admin(t, "POST", "/api/sources/acme-slack/channels/G02LEADS/restore", "", 200)
	w.admin(t, "DELETE", "/api/sources/acme-slack/optouts/dave", "", 204)
	optOuts(t)
	w.excluded["acme-slack"] = nil
	delete(w.gone, "zorbaxslackgroup")
	delete(w.gone, "quorvexslackdave")
	t.Run("restored private channel and opted-in author, re-imported", func(t *testing.T) { reimport(t); w.checkAll(t) })
}

// TestPrivacyAdminErrors sends bad input to the visibility, channel,
// opt-out and settings endpoints: JSON errors naming the problem, never a
// 5xx, and nothing changes.
func TestPrivacyAdminErrors(t *testing.T) {
	w := newPrivacyWorld(t, "")
	const js = "application/json"
	tg := string(readPrivacy(t, "telegram-result.json"))
	cases := []struct {
		method, path, ct, body string
		status                 int
		words                  []string
	}{
		{"GET", "/api/sources/nope/channels", "", "", 404, []string{"nope"}},
		{"PATCH", "/api/sources/nope/channels/C01GENERAL", js, `{"visibility":"public"}`, 404, []string{"nope"}},
		{"PATCH", "/api/sources/acme-slack/channels/CNOPE", js, `{"visibility":"public"}`, 404, []string{"CNOPE"}},
		{"PATCH", "/api/sources/acme-slack/channels/1400000004", js, `{"visibility":"public"}`, 404, []string{"1400000004"}}, // another source's
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `{"visibility":"secret"}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `{"visibility":"PUBLIC"}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `{"visibility":true}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `{}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `{"visibility":"public"`, 400, nil},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `[{"visibility":"public"}]`, 400, nil},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", js, `{"visibility":"public"} {"visibility":"public"}`, 400, nil},
		{"PATCH", "/api/sources/acme-slack/channels/G02LEADS", "application/x-www-form-urlencoded", `visibility=public`, 415, nil},
		{"DELETE", "/api/sources/nope/channels/C01GENERAL", "", "", 404, []string{"nope"}},
		{"DELETE", "/api/sources/acme-slack/channels/CNOPE", "", "", 404, []string{"CNOPE"}},
		{"POST", "/api/sources/acme-slack/channels/G02LEADS/restore", "", "", 404, []string{"G02LEADS"}}, // not deleted
		{"POST", "/api/sources/nope/channels/G02LEADS/restore", "", "", 404, []string{"nope"}},
		{"GET", "/api/sources/nope/optouts", "", "", 404, []string{"nope"}},
		{"POST", "/api/sources/nope/optouts", js, `{"author":"dave"}`, 404, []string{"nope"}},
		{"POST", "/api/sources/acme-slack/optouts", js, `{"author":""}`, 400, []string{"author"}},
		{"POST", "/api/sources/acme-slack/optouts", js, `{"author":"   "}`, 400, []string{"author"}},
		{"POST", "/api/sources/acme-slack/optouts", js, `{}`, 400, []string{"author"}},
		{"POST", "/api/sources/acme-slack/optouts", js, `{"author":42}`, 400, []string{"author"}},
		{"POST", "/api/sources/acme-slack/optouts", js, `{"author":`, 400, nil},
		{"POST", "/api/sources/acme-slack/optouts", js, `{"author":"` + strings.Repeat("x", record.MaxNameBytes+1) + `"}`, 400, []string{"author"}},
		{"DELETE", "/api/sources/acme-slack/optouts/nobody", "", "", 404, []string{"nobody"}},
		{"DELETE", "/api/sources/nope/optouts/dave", "", "", 404, []string{"nope"}},
		{"PATCH", "/api/sources/acme-slack", js, `{"visibility":"secret"}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack", js, `{"visibility":"inherit"}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack", js, `{"visibility":1}`, 400, []string{"visibility"}},
		{"PATCH", "/api/sources/acme-slack", js, `{"enabled":"no"}`, 400, []string{"enabled"}},
		{"PATCH", "/api/sources/acme-slack", js, `{"visibility":`, 400, nil},
		{"PATCH", "/api/sources/nope", js, `{"visibility":"private"}`, 404, nil},
		{"POST", "/api/sources", js, `{"name":"x","type":"slack","visibility":"hidden"}`, 400, []string{"visibility"}},
		{"PATCH", "/api/settings", js, `{"siteName":5}`, 400, []string{"siteName"}},
		{"PATCH", "/api/settings", js, `{"color":"red"}`, 400, []string{"color"}},
		{"PATCH", "/api/settings", js, `{"siteName":`, 400, nil},
		{"PATCH", "/api/settings", js, `{"siteName":"` + strings.Repeat("x", 300) + `"}`, 400, []string{"siteName"}},
		{"POST", "/api/sources/nope/import", "", tg, 404, nil},
		{"POST", "/api/sources/acme-slack/import", "", tg, 400, []string{"telegram"}},
		{"POST", "/api/sources/acme-slack/import", "", "PK\x03\x04 not a zip", 400, nil},
		{"POST", "/api/sources/acme-telegram/import", "", `{"chats":{"list":[{"type":"personal_chat","id":"x","messages":[]}]}}`, 400, []string{"id"}},
		{"POST", "/api/sources/handbook/import", "", tg, 400, nil},
		{"POST", "/api/documents", js, `{"title":"x","content":"y","sourceId":"nope"}`, 400, []string{"nope"}},
		{"DELETE", "/api/documents/nope", "", "", 404, []string{"nope"}},
	}
	seq := w.ts.eng.Seq()
	for _, c := range cases {
		h := slices.Clone(bearer)
		if c.ct != "" {
			h = append(h, "Content-Type", c.ct)
		}
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		r := w.ts.do(t, c.method, c.path, body, h...)
		if r.status >= 500 {
			t.Errorf("%s %s %.60s: %d %s", c.method, c.path, c.body, r.status, r.body)
			continue
		}
		t.Run(c.method+" "+c.path, func(t *testing.T) { wantError(t, r, c.status, c.words...) })
	}
	if got := w.ts.eng.Seq(); got != seq {
		t.Errorf("bad input changed the engine: seq %d → %d", seq, got)
	}
	w.checkAdmin(t)
}

// adminFingerprint is everything the admin API reads, to tell that a
// refused request changed nothing.
func (w *privacyWorld) adminFingerprint(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{"/api/sources", "/api/settings", "/api/documents?limit=1000"} {
		b.Write(w.admin(t, "GET", p, "", 200).body)
	}
	var srcs struct{ Sources []struct{ ID string } }
	json.Unmarshal(w.admin(t, "GET", "/api/sources", "", 200).body, &srcs)
	for _, s := range srcs.Sources {
		b.Write(w.admin(t, "GET", "/api/sources/"+s.ID+"/channels", "", 200).body)
		b.Write(w.admin(t, "GET", "/api/sources/"+s.ID+"/optouts", "", 200).body)
	}
	return b.String()
}

// TestCrossSiteAdmin sends each state-changing admin request with valid
// Basic Auth as a browser would from another site: 403 and nothing
// changed; the same request from the site itself (or from a client that
// is not a browser) succeeds.
func TestCrossSiteAdmin(t *testing.T) {
	w := newPrivacyWorld(t, "")
	site := newSiteServer(t)
	w.admin(t, "POST", "/api/sources", `{"id":"xs-web","name":"Gadget docs","type":"web","config":{"urls":["`+site.URL+`/"],"allowPrivate":true,"delayMs":1}}`, 201)
	w.admin(t, "POST", "/api/sources", `{"id":"xs-doomed","name":"Doomed","type":"telegram"}`, 201)

	jsonBody := func(s string) func() (io.Reader, string) {
		return func() (io.Reader, string) { return strings.NewReader(s), "application/json" }
	}
	file := func(name string, data []byte, fields ...string) func() (io.Reader, string) {
		return func() (io.Reader, string) {
			return multipartBody(t, map[string]string{name: string(data)}, fields...)
		}
	}
	var docID string
	cases := []struct {
		method, path string
		body         func() (io.Reader, string)
		status       int
		after        func(t *testing.T, r resp)
	}{
		{"POST", "/api/sources", jsonBody(`{"id":"xs-new","name":"New","type":"telegram"}`), 201, nil},
		{"PATCH", "/api/sources/acme-telegram", jsonBody(`{"name":"Acme Telegram (renamed)"}`), 200, nil},
		{"PATCH", "/api/sources/acme-slack", jsonBody(`{"visibility":"private"}`), 200, nil},
		{"DELETE", "/api/sources/xs-doomed", nil, 204, nil},
		{"POST", "/api/sources/xs-web/crawl", nil, 200, nil},
		{"POST", "/api/sources/xs-web/test", nil, 200, nil},
		{"POST", "/api/sources/acme-telegram/import", file("result.json", readPrivacy(t, "telegram-result.json")), 200, nil},
		{"PATCH", "/api/sources/acme-discord/channels/1214165444198400001", jsonBody(`{"visibility":"public"}`), 200, nil},
		{"DELETE", "/api/sources/acme-discord/channels/1214180543692800002", nil, 204, nil},
		{"POST", "/api/sources/acme-discord/channels/1214180543692800002/restore", nil, 200, nil},
		{"POST", "/api/sources/acme-slack/optouts", jsonBody(`{"author":"carol"}`), 201, nil},
		{"DELETE", "/api/sources/acme-slack/optouts/carol", nil, 204, nil},
		{"PATCH", "/api/settings", jsonBody(`{"siteName":"Acme search"}`), 200, nil},
		{"PUT", "/api/settings/logo", func() (io.Reader, string) { return bytes.NewReader(testPNG(4)), "image/png" }, 200, nil},
		{"DELETE", "/api/settings/logo", nil, 204, nil},
		{"POST", "/api/documents", file("notes.md", []byte("# Cross-site notes\n\nquorvexcrosssite"), "sourceId", "handbook"), 201,
			func(t *testing.T, r resp) {
				docID = r.json(t)["documents"].([]any)[0].(map[string]any)["id"].(string)
			}},
		{"DELETE", "/api/documents/{doc}", nil, 204, nil},
		{"POST", "/api/admin/backup", nil, 200, nil},
	}
	auth := []string{"Authorization", "Basic " + basic(testUser, testPass)}
	refused := [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"},
		{"Referer", "https://evil.example/page"}, // a browser sending only a Referer
		{"Referer", "not a url"},
	}
	allowed := [][]string{
		{"Sec-Fetch-Site", "same-origin", "Origin", w.ts.url},
		{"Origin", w.ts.url},
		{"Sec-Fetch-Site", "none"},
		nil, // not a browser
		{"Referer", w.ts.url + "/dashboard"},
		{"Sec-Fetch-Site", "same-origin", "Referer", "https://evil.example/"}, // Sec-Fetch-Site speaks for the browser
	}
	for i, c := range cases {
		path := strings.ReplaceAll(c.path, "{doc}", docID)
		send := func(header []string, formLike bool) resp {
			var body io.Reader
			h := append(slices.Clone(auth), header...)
			switch {
			case formLike:
				body = strings.NewReader("visibility=public&author=x&name=x")
				h = append(h, "Content-Type", "application/x-www-form-urlencoded")
			case c.body != nil:
				var ct string
				body, ct = c.body()
				h = append(h, "Content-Type", ct)
			}
			return w.ts.do(t, c.method, path, body, h...)
		}
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			before, seq := w.adminFingerprint(t), w.ts.eng.Seq()
			for _, h := range refused {
				for _, formLike := range []bool{false, true} {
					r := send(h, formLike)
					wantError(t, r, 403)
					if seq2 := w.ts.eng.Seq(); seq2 != seq {
						t.Fatalf("%v (form-like %v): refused, but the engine changed: seq %d → %d", h, formLike, seq, seq2)
					}
				}
			}
			if after := w.adminFingerprint(t); after != before {
				t.Fatalf("a refused request changed what the admin API reads")
			}
			h := allowed[i%len(allowed)]
			r := send(h, false)
			if r.status != c.status {
				t.Fatalf("with %v: %d, want %d: %.300s", h, r.status, c.status, r.body)
			}
			if c.after != nil {
				c.after(t, r)
			}
		})
	}
	// The home page's ask box answers only its own site's form.
	r := w.ts.do(t, "POST", "/", strings.NewReader("ask=quorvextgnews"), "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "cross-site")
	if r.status != 403 {
		t.Errorf("cross-site POST / ask: %d", r.status)
	}
}

// TestPrivacyDiscordPrivateThread imports a DiscordChatExporter private
// thread (GuildPrivateThread) of a public channel: private by default,
// whatever its parent is.
func TestPrivacyDiscordPrivateThread(t *testing.T) {
	w := newPrivacyWorld(t, "")
	const marker, id = "zorbaxdiscordprivthread", "1214195643187200003"
	body, ct := multipartBody(t, map[string]string{"thread.json": string(readPrivacy(t, "discord-private-thread.json"))})
	if r := w.ts.do(t, "POST", "/api/sources/acme-discord/import", body, "Content-Type", ct, bearer[0], bearer[1]); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	w.waitSemantic(t)
	chans, _ := w.channels(t, "acme-discord")
	c := chans[id]
	if c.Kind != placeThread || c.ParentID != privacyPlaceOf("quorvexdiscordpub").id || !c.PlatformPrivate || c.EffectiveVisibility != record.VisibilityPrivate {
		t.Errorf("GET /api/sources/acme-discord/channels: the private thread is %+v; want a thread of the public channel, platformPrivate, effectiveVisibility private", c)
	}
	if r := w.ts.get(t, "/c/"+c.Slug); r.status != 404 {
		t.Errorf("LEAK: GET /c/%s (no credentials): %d, want 404", c.Slug, r.status)
	}
	if where := w.leaks(t, marker); len(where) > 0 {
		t.Errorf("LEAK: the private thread shows without credentials on:\n\t%s", strings.Join(where, "\n\t"))
	}
	if r := w.ts.get(t, "/api/search?q="+marker, bearer...); !strings.Contains(string(r.body), marker) {
		t.Errorf("GET /api/search with the token does not find the private thread: %s", r.body)
	}
}

// TestPrivacySlackMentionOfPrivateChannel imports a public Slack message
// that links a private channel (<#G02LEADS>): the public message may not
// name the private channel, which its readers on Slack itself do not see.
func TestPrivacySlackMentionOfPrivateChannel(t *testing.T) {
	w := newPrivacyWorld(t, "")
	day := `[{"type": "message", "text": "quorvexslackmention the reorg agenda is in <#G02LEADS>, ask alice to add you", "user": "U01ALICE", "ts": "1709715600.000100"}]`
	body, ct := multipartBody(t, map[string]string{"export.zip": string(privacySlackZip(t, map[string]string{"general/2024-03-06.json": day}))})
	if r := w.ts.do(t, "POST", "/api/sources/acme-slack/import", body, "Content-Type", ct, bearer[0], bearer[1]); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	w.waitSemantic(t)
	general := "/c/" + w.slugs["quorvexslackpub"]
	if page := w.fetchPage(t, general, 200); !strings.Contains(page, "quorvexslackmention") {
		t.Fatalf("%s does not show the new message", general)
	}
	if where := w.leaks(t, "zorbaxslackgroup"); len(where) > 0 {
		t.Errorf("LEAK: the name of the private channel G02LEADS shows without credentials on:\n\t%s", strings.Join(where, "\n\t"))
	}
}

// TestPrivacyFixtureMarkers checks that every marker is in the fixture
// and none is part of another: a typo would make a leak check vacuous.
func TestPrivacyFixtureMarkers(t *testing.T) {
	var all bytes.Buffer
	filepath.WalkDir(privacyData, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			all.Write(bytes.ToLower(b))
		}
		return err
	})
	all.WriteString(strings.ToLower(strings.Join(privacySources, "\n")))
	for _, p := range privacyPlaces {
		if !bytes.Contains(all.Bytes(), []byte(p.marker)) {
			t.Errorf("marker %s (%s) is in no fixture file", p.marker, p.desc)
		}
		for _, q := range privacyPlaces {
			if p != q && strings.Contains(q.marker, p.marker) {
				t.Errorf("marker %s is part of marker %s", p.marker, q.marker)
			}
		}
	}
	for _, m := range []string{"zorbaxdiscordprivthread"} {
		for _, p := range privacyPlaces {
			if strings.Contains(m, p.marker) || strings.Contains(p.marker, m) {
				t.Errorf("marker %s overlaps %s", m, p.marker)
			}
		}
	}
	if bytes.Contains(all.Bytes(), []byte(privacyProbe)) {
		t.Errorf("the probe %s is in the fixture", privacyProbe)
	}
}

// TestPrivateRecordsLeaveNoTrace: through the API, what private records
// hold changes nothing an anonymous caller reads — a public document's
// score for a word is the same before and after private documents
// holding the word are added, and a public channel's slug is the same
// whether or not a private channel of its name exists.
func TestPrivateRecordsLeaveNoTrace(t *testing.T) {
	world := func(private bool) (score float64, slug string) {
		ts := start(t)
		ts.eng.PutSource(record.Source{ID: "pub", Name: "Pub", Type: "slack", Enabled: true})
		ts.eng.PutSource(record.Source{ID: "priv", Name: "Priv", Type: "upload", Enabled: true, Visibility: record.VisibilityPrivate})
		if private {
			ts.eng.PutChannels([]record.Channel{{SourceID: "pub", ID: "d1", Name: "handbook", Private: true}})
		}
		ts.eng.PutChannels([]record.Channel{{SourceID: "pub", ID: "c1", Name: "handbook"}})
		ts.eng.PutMessages([]record.Message{{SourceID: "pub", ChannelID: "c1", ID: "m1", Author: "ana", Content: "the zorbax rollout is done", Timestamp: time.Now()}})
		ts.eng.PutDocuments([]record.Document{{SourceID: "pub", Key: "a", Title: "Guide", Content: "zorbax setup guide for everyone"}})
		if private {
			var docs []record.Document
			for i := range 20 {
				docs = append(docs, record.Document{SourceID: "priv", Key: fmt.Sprint(i), Title: "Secret", Content: strings.Repeat("zorbax salary ", i+1)})
			}
			ts.eng.PutDocuments(docs)
		}
		var out struct {
			Messages  []struct{ ChannelSlug string }
			Documents []struct{ Score float64 }
		}
		if err := json.Unmarshal(ts.get(t, "/api/search?q=zorbax").body, &out); err != nil || len(out.Documents) != 1 || len(out.Messages) != 1 {
			t.Fatalf("search: %v %+v", err, out)
		}
		return out.Documents[0].Score, out.Messages[0].ChannelSlug
	}
	s0, slug0 := world(false)
	s1, slug1 := world(true)
	if s0 != s1 {
		t.Errorf("a public document's score %v without private documents holding the word, %v with them", s0, s1)
	}
	if slug0 != "handbook" || slug1 != slug0 {
		t.Errorf("a public channel's slug %q without a private channel of its name, %q with one", slug0, slug1)
	}
}
