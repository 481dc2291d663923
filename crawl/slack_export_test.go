package crawl

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// slackFiles reads testdata/slack-export into a map of zip paths.
func slackFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	root := filepath.Join("testdata", "slack-export")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// zipFiles zips files in name order, as Slack does, with a macOS
// resource fork thrown in.
func zipFiles(t testing.TB, files map[string][]byte, method uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := []string{"__MACOSX/general/._2023-11-14.json"}
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Date(2023, 11, 16, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		data, ok := files[name]
		if !ok {
			data = []byte("\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func parseSlack(data []byte) (*Export, error) {
	return ParseSlackExport(bytes.NewReader(data), int64(len(data)), "src")
}

func unixUTC(sec, micro int64) time.Time { return time.Unix(sec, micro*1000).UTC() }

var wantSlack = Export{
	Channels: []record.Channel{
		{SourceID: "src", ID: "C01GENERAL-1699950060.000200", Name: "Deploy of status page (https://status.example.com) failed…",
			ParentID: "C01GENERAL", Kind: "thread", NameAuthor: "ana"},
		{SourceID: "src", ID: "D04ANABO", Name: "ana, bo", Kind: "channel", Private: true},
		{SourceID: "src", ID: "G05MPIM", Name: "ana, bo, cy", Kind: "channel", Topic: "Group messaging with: @ana @bo @cy", Private: true},
		{SourceID: "src", ID: "C02DEV", Name: "dev", Kind: "channel", Topic: "Build & deploy talk with @bo"},
		{SourceID: "src", ID: "C01GENERAL", Name: "general", Kind: "channel", Topic: "Company-wide & announcements"},
		// A thread whose start is not in the export: named after its first reply.
		{SourceID: "src", ID: "C01GENERAL-1699000000.000100", Name: "late reply to an old thread", ParentID: "C01GENERAL", Kind: "thread",
			NameAuthor: "bo"},
		{SourceID: "src", ID: "G03SECRET", Name: "secret-plans", Kind: "channel", Topic: "Q4 offsite", Private: true},
	},
	Messages: []record.Message{
		{SourceID: "src", ChannelID: "C01GENERAL-1699950060.000200", ID: "C01GENERAL-1699950120.000300", Author: "bo", AuthorName: "Bo Chen",
			Content: "@ana check `x < 3` in config", Timestamp: unixUTC(1699950120, 300), EditedAt: unixUTC(1699950180, 0),
			ReplyTo: "C01GENERAL-1699950060.000200"},
		{SourceID: "src", ChannelID: "C01GENERAL-1699950060.000200", ID: "C01GENERAL-1700036400.000100", Author: "ana", AuthorName: "Ana",
			Content: "Fixed: it was the <timeout> setting", Timestamp: unixUTC(1700036400, 100), ReplyTo: "C01GENERAL-1699950060.000200"},
		{SourceID: "src", ChannelID: "D04ANABO", ID: "D04ANABO-1699952000.000100", Author: "bo", AuthorName: "Bo Chen",
			Content: "can you review my PR?", Timestamp: unixUTC(1699952000, 100)},
		{SourceID: "src", ChannelID: "D04ANABO", ID: "D04ANABO-1699952060.000200", Author: "ana", AuthorName: "Ana",
			Content: "sure", Timestamp: unixUTC(1699952060, 200)},
		{SourceID: "src", ChannelID: "G05MPIM", ID: "G05MPIM-1699953000.000100", Author: "cy", Content: "lunch?", Timestamp: unixUTC(1699953000, 100)},
		{SourceID: "src", ChannelID: "C02DEV", ID: "C02DEV-1699950000.000100", Author: "bo", AuthorName: "Bo Chen",
			Content: "Pushed v2.3.1 > please review", Timestamp: unixUTC(1699950000, 100)},
		{SourceID: "src", ChannelID: "C02DEV", ID: "C02DEV-1699950030.000200", Author: "GitHub",
			Content: "Add Slack importer", Timestamp: unixUTC(1699950030, 200)},
		{SourceID: "src", ChannelID: "C01GENERAL", ID: "C01GENERAL-1699950060.000200", Author: "ana", AuthorName: "Ana",
			Content:   "Deploy of status page (https://status.example.com) failed again & again, @here any ideas?",
			Timestamp: unixUTC(1699950060, 200)},
		{SourceID: "src", ChannelID: "C01GENERAL", ID: "C01GENERAL-1699950240.000400", Author: "deploybot",
			Content: "Build #42 finished: https://ci.example.com/42", Timestamp: unixUTC(1699950240, 400)},
		{SourceID: "src", ChannelID: "C01GENERAL", ID: "C01GENERAL-1699950300.000500", Author: "cy",
			Content: "logs attached\n[file: deploy.log]", Timestamp: unixUTC(1699950300, 500)},
		{SourceID: "src", ChannelID: "C01GENERAL", ID: "C01GENERAL-1699950420.000700", Author: "bo", AuthorName: "Bo Chen",
			Content: "is looking into it", Timestamp: unixUTC(1699950420, 700)},
		{SourceID: "src", ChannelID: "C01GENERAL", ID: "C01GENERAL-1699950480.000800", Author: "cy",
			Content:   "see #dev and #dev and mail ops@example.com, @channel @ghost @U09NOPE @ops-team",
			Timestamp: unixUTC(1699950480, 800)},
		{SourceID: "src", ChannelID: "C01GENERAL", ID: "C01GENERAL-1700036460.000200", Author: "eve", AuthorName: "Eve",
			Content: "hello all", Timestamp: unixUTC(1700036460, 200)},
		{SourceID: "src", ChannelID: "C01GENERAL-1699000000.000100", ID: "C01GENERAL-1700036430.000150", Author: "bo", AuthorName: "Bo Chen",
			Content: "late reply to an old thread", Timestamp: unixUTC(1700036430, 150)},
		{SourceID: "src", ChannelID: "G03SECRET", ID: "G03SECRET-1699951000.000100", Author: "ana", AuthorName: "Ana",
			Content: "Offsite in Lisbon? :tada:", Timestamp: unixUTC(1699951000, 100)},
	},
}

// compareExport checks every field of every channel and message.
func compareExport(t *testing.T, got *Export, want Export) {
	t.Helper()
	if len(got.Channels) != len(want.Channels) {
		t.Errorf("%d channels, want %d", len(got.Channels), len(want.Channels))
	}
	for i := range min(len(got.Channels), len(want.Channels)) {
		if got.Channels[i] != want.Channels[i] {
			t.Errorf("channel %d:\n got %+v\nwant %+v", i, got.Channels[i], want.Channels[i])
		}
	}
	if len(got.Messages) != len(want.Messages) {
		t.Errorf("%d messages, want %d", len(got.Messages), len(want.Messages))
	}
	for i := range min(len(got.Messages), len(want.Messages)) {
		g, w := got.Messages[i], want.Messages[i]
		if g.Timestamp.Equal(w.Timestamp) && g.EditedAt.Equal(w.EditedAt) {
			g.Timestamp, g.EditedAt = w.Timestamp, w.EditedAt
		}
		if g != w || got.Messages[i].Timestamp.Location() != time.UTC {
			t.Errorf("message %d:\n got %+v\nwant %+v", i, got.Messages[i], w)
		}
	}
}

// checkExport asserts what every parsed export must hold. strict adds the
// engine's limits, which the Slack and Telegram parsers guarantee.
func checkExport(t *testing.T, x *Export, strict bool) {
	t.Helper()
	checkSkips(t, x)
	chans := map[string]record.Channel{}
	for _, c := range x.Channels {
		if c.ID == "" || c.Name == "" {
			t.Fatalf("channel without id or name: %+v", c)
		}
		if _, dup := chans[c.ID]; dup && strict {
			t.Fatalf("channel %q twice", c.ID)
		}
		chans[c.ID] = c
		if strict && (checkID(c.ID, record.MaxIDBytes) != nil || len(c.Name) > record.MaxNameBytes ||
			strings.TrimSpace(c.Name) == "" || strings.ContainsFunc(c.Name, unicode.IsControl) || !utf8.ValidString(c.Name+c.Topic) ||
			len(c.Topic) > 4*record.MaxNameBytes) {
			t.Fatalf("channel the engine would refuse: %+v", c)
		}
	}
	for _, c := range x.Channels {
		if _, ok := chans[c.ParentID]; strict && c.Kind == "thread" && !ok {
			t.Fatalf("thread %q of unknown channel %q", c.ID, c.ParentID)
		}
	}
	ids := map[string]bool{}
	for _, m := range x.Messages {
		if _, ok := chans[m.ChannelID]; !ok {
			t.Fatalf("message %q in unknown channel %q", m.ID, m.ChannelID)
		}
		if m.ID == "" || m.Timestamp.IsZero() || strings.TrimSpace(m.Content) == "" {
			t.Fatalf("message without id, time or content: %+v", m)
		}
		if !strict {
			continue
		}
		if ids[m.ID] {
			t.Fatalf("message %q twice", m.ID)
		}
		ids[m.ID] = true
		if checkID(m.ID, record.MaxIDBytes) != nil || m.ReplyTo != "" && checkID(m.ReplyTo, record.MaxIDBytes) != nil ||
			len(m.Content) > record.MaxMessageBytes || !utf8.ValidString(m.Content+m.Author+m.AuthorName) ||
			len(m.Author) > record.MaxNameBytes || len(m.AuthorName) > record.MaxNameBytes {
			t.Fatalf("message the engine would refuse: %+v", m)
		}
	}
}

// checkSkips asserts what every parsed export's skips must hold: a known
// format, a bounded set of readable reasons, each counting some message.
func checkSkips(t *testing.T, x *Export) {
	t.Helper()
	if x.Format != "discord" && x.Format != "slack" && x.Format != "telegram" {
		t.Fatalf("format %q", x.Format)
	}
	if len(x.Skipped) > maxSkipReasons+1 {
		t.Fatalf("%d skip reasons", len(x.Skipped))
	}
	for why, n := range x.Skipped {
		if n <= 0 || strings.TrimSpace(why) == "" || len(why) > record.MaxNameBytes || !utf8.ValidString(why) || strings.ContainsFunc(why, unicode.IsControl) {
			t.Fatalf("skip reason %q counts %d", why, n)
		}
	}
	if x.InFile() < len(x.Messages) {
		t.Fatalf("%d in the file, %d kept", x.InFile(), len(x.Messages))
	}
}

func TestParseSlackExport(t *testing.T) {
	data := zipFiles(t, slackFiles(t), zip.Deflate)
	x, err := parseSlack(data)
	if err != nil {
		t.Fatal(err)
	}
	compareExport(t, x, wantSlack)
	checkExport(t, x, true)

	// The same export zipped again inside a folder, as unzip-and-rezip does.
	nested := map[string][]byte{}
	for name, b := range slackFiles(t) {
		nested["Acme Slack export Nov 14 2023/"+name] = b
	}
	x, err = parseSlack(zipFiles(t, nested, zip.Store))
	if err != nil {
		t.Fatal(err)
	}
	compareExport(t, x, wantSlack)
}

// TestSlackExportPrivate: conversations of groups.json, mpims.json and
// dms.json, and of channels.json marked is_private, are stored private with
// their threads; the others public.
func TestSlackExportPrivate(t *testing.T) {
	files := slackFiles(t)
	files["channels.json"] = bytes.Replace(files["channels.json"], []byte("\n]"),
		[]byte(`, {"id": "C06LOCKED", "name": "locked", "is_private": true, "members": ["U01ANA"]}`+"\n]"), 1)
	files["locked/2023-11-14.json"] = []byte(`[{"type": "message", "text": "behind the door", "user": "U01ANA", "ts": "1699951500.000100"}]`)
	files["secret-plans/2023-11-14.json"] = []byte(`[
	  {"type": "message", "text": "Offsite in Lisbon? :tada:", "user": "U01ANA", "ts": "1699951000.000100", "thread_ts": "1699951000.000100", "reply_count": 1},
	  {"type": "message", "text": "Porto instead?", "user": "U02BO", "ts": "1699951060.000200", "thread_ts": "1699951000.000100"}]`)
	x, err := parseSlack(zipFiles(t, files, zip.Deflate))
	if err != nil {
		t.Fatal(err)
	}
	e := openImportEngine(t, t.TempDir())
	defer e.Close()
	if _, err := Import(e, x); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{
		"C01GENERAL": false, "C01GENERAL-1699950060.000200": false, "C02DEV": false,
		"G03SECRET": true, "G03SECRET-1699951000.000100": true, "D04ANABO": true, "G05MPIM": true, "C06LOCKED": true,
	} {
		if c, ok := e.ChannelByID("src", id); !ok || c.Hidden != want { // a thread follows its channel
			t.Errorf("channel %s: stored %v, hidden %v, want %v", id, ok, c.Hidden, want)
		}
	}
	for _, c := range e.Channels("src", false) {
		if c.Private || strings.HasPrefix(c.ID, "G") || strings.HasPrefix(c.ID, "D") {
			t.Errorf("callers without credentials see %+v", c)
		}
	}
	if r, _ := e.Search(query.SearchRequest{Query: "Porto"}); len(r.Messages) != 0 {
		t.Error("a reply in a private channel's thread is found without credentials")
	}
	if r, _ := e.Search(query.SearchRequest{Query: "Porto", Private: true}); len(r.Messages) != 1 {
		t.Error("the reply is not found with credentials")
	}
}

// TestSlackExportOrphanThreadName: a thread whose parent message is not in
// the export is named after its earliest reply, and by that reply's
// author, so an author who opted out does not name it.
func TestSlackExportOrphanThreadName(t *testing.T) {
	files := slackFiles(t)
	files["dev/2023-11-15.json"] = []byte(`[
	  {"type": "message", "text": "second reply", "user": "U01ANA", "ts": "1700036500.000200", "thread_ts": "1699900000.000100"},
	  {"type": "message", "text": "  Rollback   plan for the\nv2.3 release: first drain the queue workers, then revert", "user": "U02BO",
	   "ts": "1700036400.000100", "thread_ts": "1699900000.000100"}]`)
	x, err := parseSlack(zipFiles(t, files, zip.Deflate))
	if err != nil {
		t.Fatal(err)
	}
	const id, name = "C02DEV-1699900000.000100", "Rollback plan for the v2.3 release: first drain the queue…"
	i := slices.IndexFunc(x.Channels, func(c record.Channel) bool { return c.ID == id })
	if i < 0 {
		t.Fatalf("no thread channel %s in %+v", id, x.Channels)
	}
	if c := x.Channels[i]; c.Name != name || c.NameAuthor != "bo" || c.ParentID != "C02DEV" || c.Kind != "thread" {
		t.Errorf("orphan thread: %+v, want named %q by bo", c, name)
	}
	for _, m := range x.Messages {
		if m.ChannelID == id && m.ReplyTo != "" {
			t.Errorf("reply %s links to %s, which is not in the export", m.ID, m.ReplyTo)
		}
	}
	e := openImportEngine(t, t.TempDir())
	defer e.Close()
	if _, err := e.UpdateSource("src", func(s *record.Source) error { s.OptOuts = []string{"bo"}; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(e, x); err != nil {
		t.Fatal(err)
	}
	if c, ok := e.ChannelByID("src", id); !ok || strings.Contains(c.Name, "Rollback") {
		t.Errorf("with bo opted out the thread is %+v (stored %v)", c, ok)
	}
}

func TestParseSlackExportOrgUsers(t *testing.T) {
	files := slackFiles(t)
	files["org_users.json"] = files["users.json"]
	delete(files, "users.json")
	x, err := parseSlack(zipFiles(t, files, zip.Deflate))
	if err != nil {
		t.Fatal(err)
	}
	compareExport(t, x, wantSlack)
}

func TestSlackRender(t *testing.T) {
	p := &slackParser{users: map[string]*slackUser{"U1": {ID: "U1", Name: "ana"}}, chanNames: map[string]string{"C1": "general"}}
	f := func(in, want string) {
		t.Helper()
		if got := p.render(in); got != want {
			t.Errorf("render(%q) = %q, want %q", in, got, want)
		}
	}
	f("plain text", "plain text")
	f("<@U1>", "@ana")
	f("<@U1|someone>", "@ana")
	f("<@U2|bo>", "@bo")
	f("<@U2>", "@U2")
	f("<#C1>", "#general")
	f("<#C1|renamed>", "#renamed")
	f("<#C9>", "#C9")
	f("<!here> <!channel> <!everyone> <!here|@here>", "@here @channel @everyone @here")
	f("<!subteam^S1|@ops> <!subteam^S1>", "@ops @S1")
	f("<!date^1392734382^{date_num}|2014-02-18>", "2014-02-18")
	f("<https://x.example/a?b=1&amp;c=2|the &lt;docs&gt;>", "the <docs> (https://x.example/a?b=1&c=2)")
	f("<https://x.example>", "https://x.example")
	f("<https://x.example|https://x.example>", "https://x.example")
	f("<mailto:a@b.example|a@b.example>", "a@b.example")
	f("a &amp;lt; b &gt; c &amp; d", "a &lt; b > c & d")
	f("unclosed <https://x", "unclosed <https://x")
	f("<>", "")
}

func TestSlackTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1700000000.000100": unixUTC(1700000000, 100),
		"1700000000":        unixUTC(1700000000, 0),
		"1700000000.5":      unixUTC(1700000000, 500000),
		"0.000001":          unixUTC(0, 1),
	} {
		if got, ok := slackTime(in); !ok || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("slackTime(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".5", "1700000000.", "-1.0", "1e9", "1700000000.0000001234", "170000000000.0", " 1.0", "1.0 "} {
		if _, ok := slackTime(in); ok {
			t.Errorf("slackTime(%q) accepted", in)
		}
	}
}

func TestParseSlackExportErrors(t *testing.T) {
	mutate := func(fn func(files map[string][]byte)) []byte {
		files := slackFiles(t)
		fn(files)
		return zipFiles(t, files, zip.Deflate)
	}
	good := zipFiles(t, slackFiles(t), zip.Store)
	corrupt := bytes.Clone(good)
	i := bytes.Index(corrupt, []byte("Pushed v2.3.1"))
	corrupt[i] = 'p' // stored, so the checksum no longer matches
	setDay := func(name, body string) []byte {
		return mutate(func(f map[string][]byte) { f[name] = []byte(body) })
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a valid zip file"},
		{"not a zip", []byte("PK\x03\x04 not really"), "Slack export zip"},
		{"truncated zip", good[:len(good)/2], "not a valid zip file"},
		{"corrupt entry", corrupt, "dev/2023-11-14.json: zip: checksum error"},
		{"missing channels.json", mutate(func(f map[string][]byte) { delete(f, "channels.json") }), "channels.json: missing"},
		{"channels.json not a list", mutate(func(f map[string][]byte) { f["channels.json"] = []byte(`{"id":"C1"}`) }), "channels.json: json: cannot unmarshal object"},
		{"channel without id", mutate(func(f map[string][]byte) { f["groups.json"] = []byte(`[{"name":"x"}]`) }), "groups.json: conversation 0: id is missing"},
		{"channel id twice", mutate(func(f map[string][]byte) { f["groups.json"] = []byte(`[{"id":"C02DEV","name":"x"}]`) }), `groups.json: conversation id "C02DEV" appears twice`},
		{"bad users.json", mutate(func(f map[string][]byte) { f["users.json"] = []byte(`[{"id":"U1",}]`) }), "users.json: invalid character '}'"},
		{"bad JSON in a day file", setDay("general/2023-11-15.json", `[{"type":"message","ts":"1700036400.000100"`), "general/2023-11-15.json: the JSON ends early"},
		{"data after the JSON", setDay("general/2023-11-15.json", `[] []`), "general/2023-11-15.json: data after the JSON value"},
		{"bad ts", setDay("dev/2023-11-14.json", `[{"type":"message","text":"hi","ts":"yesterday"}]`), `dev/2023-11-14.json: message 0: ts "yesterday" is not a Slack timestamp`},
		{"missing ts", setDay("dev/2023-11-14.json", `[{"type":"message","subtype":"channel_join","text":"hi"}]`), `dev/2023-11-14.json: message 0: ts "" is not`},
		{"bad thread_ts", setDay("dev/2023-11-14.json", `[{"type":"message","text":"hi","ts":"1.0","thread_ts":"x"}]`), `message 0: thread_ts "x"`},
		{"bad edited.ts", setDay("dev/2023-11-14.json", `[{"type":"message","text":"hi","ts":"1.0","edited":{"ts":"1,5"}}]`), `message 0: edited.ts "1,5"`},
		{"text of wrong type", setDay("dev/2023-11-14.json", `[{"type":"message","text":42,"ts":"1.0"}]`), "dev/2023-11-14.json: json: cannot unmarshal number into Go struct field slackMessage.text"},
		{"day file not a list", setDay("dev/2023-11-14.json", `{"type":"message"}`), "dev/2023-11-14.json: json: cannot unmarshal object"},
		{"file twice", func() []byte {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			for _, body := range []string{`[]`, `[{"id":"C1","name":"a"}]`} {
				w, _ := zw.Create("channels.json")
				w.Write([]byte(body))
			}
			zw.Close()
			return buf.Bytes()
		}(), "channels.json: twice in the zip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, err := parseSlack(c.data)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an ErrFormat with %q", err, c.want)
			}
			if x != nil {
				t.Error("a malformed export returned content")
			}
		})
	}
}

// bytesAllocated returns how many bytes fn allocates.
func bytesAllocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// deflated returns n zero bytes, deflated, and their CRC-32.
func deflated(t *testing.T, n int) ([]byte, uint32) {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros, crc := make([]byte, 1<<20), uint32(0)
	for ; n > 0; n -= len(zeros) {
		w.Write(zeros[:min(n, len(zeros))])
		crc = crc32.Update(crc, crc32.IEEETable, zeros[:min(n, len(zeros))])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), crc
}

// rawZip is the test export plus entries written as given, with headers
// that may lie about their size.
func rawZip(t *testing.T, entries map[string]*zip.FileHeader, bodies map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range slackFiles(t) {
		w, _ := zw.Create(name)
		w.Write(b)
	}
	for name, h := range entries {
		h.Name, h.Method = name, zip.Deflate
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(bodies[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseSlackExportZipBombs(t *testing.T) {
	const bomb = 60 << 20
	zeros, crc := deflated(t, bomb)
	honest := rawZip(t, map[string]*zip.FileHeader{"general/2023-11-16.json": {
		CRC32: crc, CompressedSize64: uint64(len(zeros)), UncompressedSize64: bomb,
	}}, map[string][]byte{"general/2023-11-16.json": zeros})
	lying := rawZip(t, map[string]*zip.FileHeader{"general/2023-11-16.json": {
		CRC32: 0, CompressedSize64: uint64(len(zeros)), UncompressedSize64: 100,
	}}, map[string][]byte{"general/2023-11-16.json": zeros})
	// 45 files that claim 49 MB each: 2.2 GB in all.
	many, bodies := map[string]*zip.FileHeader{}, map[string][]byte{}
	empty, _ := deflated(t, 0)
	for d := 1; d <= 45; d++ {
		name := time.Date(2023, 12, d, 0, 0, 0, 0, time.UTC).Format("dev/2006-01-02.json")
		many[name] = &zip.FileHeader{CompressedSize64: uint64(len(empty)), UncompressedSize64: 49 << 20}
		bodies[name] = empty
	}
	total := rawZip(t, many, bodies)

	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"60 MB of zeros", honest, "general/2023-11-16.json: 60 MB decompressed, more than the 50 MB a file may hold"},
		{"header says 100 bytes", lying, "general/2023-11-16.json: zip: not a valid zip file"},
		{"2.2 GB in all", total, "more than the 1 GiB an export may hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := bytesAllocated(func() { _, err = parseSlack(c.data) })
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an ErrFormat with %q", err, c.want)
			}
			t.Logf("allocated %d KB", n>>10)
			if n > 4<<20 {
				t.Errorf("allocated %d MB to refuse a zip bomb", n>>20)
			}
		})
	}
}

// openImportEngine opens an engine with a data directory, with the source "src".
func openImportEngine(t *testing.T, dir string) *engine.Engine {
	t.Helper()
	e, err := engine.Open(engine.Options{DataDir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.PutSource(record.Source{ID: "src", Name: "Import", Type: "slack", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return e
}

// importTwice imports x into an engine on disk, then again, and again
// after reopening it: only the first import changes anything.
func importTwice(t *testing.T, x *Export, q string) {
	dir := t.TempDir()
	e := openImportEngine(t, dir)
	if n, err := Import(e, x); err != nil || n != len(x.Messages) {
		t.Fatalf("imported %d of %d: %v", n, len(x.Messages), err)
	}
	if n, err := Import(e, x); err != nil || n != 0 {
		t.Fatalf("second import changed %d: %v", n, err)
	}
	r, err := e.Search(query.SearchRequest{Query: q, Limit: 5, Private: true})
	if err != nil || len(r.Messages) == 0 {
		t.Errorf("%q not found: %v", q, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openImportEngine(t, dir)
	defer e.Close()
	if n, err := Import(e, x); err != nil || n != 0 {
		t.Fatalf("import after reopening changed %d: %v", n, err)
	}
	if c := e.Counts(true); c.Messages != len(x.Messages) {
		t.Errorf("engine holds %d messages, want %d", c.Messages, len(x.Messages))
	}
}

func TestImportSlackExportIsIdempotent(t *testing.T) {
	x, err := parseSlack(zipFiles(t, slackFiles(t), zip.Deflate))
	if err != nil {
		t.Fatal(err)
	}
	importTwice(t, x, "timeout setting")
}

func FuzzSlackExport(f *testing.F) {
	f.Add(zipFiles(f, slackFiles(f), zip.Deflate))
	older, _ := slackExportAt(f, "slack-export-2016")
	f.Add(zipFiles(f, older, zip.Store))
	f.Add(zipFiles(f, slackFiles(f), zip.Store))
	f.Add(zipFiles(f, map[string][]byte{
		"channels.json":            []byte(`[{"id":"C1","name":"a"}]`),
		"a/2024-01-01.json":        []byte(`[{"type":"message","ts":"1.000001","thread_ts":"1.000001","text":"<@U1> x"},{"ts":"2.5","thread_ts":"1.000001","text":"y"}]`),
		"dms.json":                 []byte(`[{"id":"D1","members":["U1"]}]`),
		"D1/2024-01-01.json":       []byte(`[{"ts":"3","text":"z","user":"U1"}]`),
		"users.json":               []byte(`[{"id":"U1","name":"u"}]`),
		"__MACOSX/a/._x.json":      []byte("junk"),
		"a/2024-01-02.json":        []byte(`[]`),
		"integration_logs.json":    []byte(`{}`),
		"a/not-a-day-file.json":    []byte(`{`),
		"mpims.json":               []byte(`[{"id":"G1","name":"mpdm-u-1","members":["U1","U2"]}]`),
		"mpdm-u-1/2024-01-01.json": []byte(`[{"ts":"4","text":"&lt;w&gt;"}]`),
	}, zip.Store))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := parseSlack(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error not ErrFormat: %v", err)
			}
			return
		}
		checkExport(t, x, true)
	})
}

// Format detection and dispatch (detect.go).

func TestDetectFormat(t *testing.T) {
	slackZip := zipFiles(t, slackFiles(t), zip.Deflate)
	demo, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	result := readTestdata(t, "telegram-result.json")
	contacts := `{"about":"Вот данные, которые вы запросили.","contacts":{"about":"","list":[` +
		strings.Repeat(`{"user_id":1,"first_name":"A","phone_number":"+1"},`, 200)
	f := func(head, want string) {
		t.Helper()
		if got := DetectFormat([]byte(head)); got != want {
			t.Errorf("DetectFormat(%.60q) = %q, want %q", head, got, want)
		}
	}
	f(string(slackZip), "slack")
	f(string(slackZip[:4]), "slack")
	f("PK\x05\x06"+strings.Repeat("\x00", 18), "slack")
	f(sampleDCE, "discord")
	f(sampleDCE[:60], "discord")
	f(string(demo[:4096]), "discord")
	f(`{"channel":{"id":"1","name":"x"},"exportedAt":"2024-05-01","guild":{"id":"2"},"messages":[]}`, "discord")
	f(string(result), "telegram")
	f(string(result[:4096]), "telegram")
	f(string(readTestdata(t, "telegram-chat.json")), "telegram")
	f("\uFEFF"+`{"name":"x","type":"personal_chat","id":1,"messages":[]}`, "telegram")
	f(`{"type":"saved_messages","id":1,"messages":[`, "telegram")
	f(contacts[:4096], "telegram")
	f(`{"about":"x","chats":{"list":[]}}`, "telegram")
	f(`{"left_chats":{"list":[]}}`, "telegram")
	f(`{"about":"x"}`, "")
	f(`{"messages":[]}`, "")
	f(`{"type":"x","nested":{"messages":[],"name":"y"}}`, "")
	f(`{"data":{"guild":1,"channel":2}}`, "")
	f(`{"text":"\"guild\":{}, \"channel\":{}"}`, "")
	f(`[{"guild":1,"channel":2}]`, "")
	f(`{"guild":{"channel":1}}`, "")
	f(``, "")
	f(`not json`, "")
	f(`PK`, "")
	f(`{"a":[1,2,{"b":3}],"guild":null,"c":true,"channel":null}`, "discord")
}

func TestDetectedParseExport(t *testing.T) {
	parse := func(format string, data []byte) (*Export, error) {
		return ParseExport(format, bytes.NewReader(data), int64(len(data)), "src")
	}
	x, err := parse("slack", zipFiles(t, slackFiles(t), zip.Deflate))
	if err != nil {
		t.Fatal(err)
	}
	compareExport(t, x, wantSlack)
	x, err = parse("telegram", readTestdata(t, "telegram-result.json"))
	if err != nil {
		t.Fatal(err)
	}
	compareExport(t, x, wantTelegram)
	x, err = parse("discord", []byte(sampleDCE))
	if err != nil || len(x.Messages) != 2 || x.Channels[0].ID != "20" {
		t.Fatalf("discord: %+v, %v", x, err)
	}
	for _, format := range []string{"", "Slack", "mattermost"} {
		_, err := parse(format, []byte(sampleDCE))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "discord, slack, telegram") {
			t.Errorf("format %q: %v", format, err)
		}
	}
	// A format other than the file's is an error, not a panic.
	for _, format := range exportFormats {
		if _, err := parse(format, []byte("{}")); !errors.Is(err, ErrFormat) {
			t.Errorf("%s of {}: %v", format, err)
		}
	}
}

func FuzzDetectFormat(f *testing.F) {
	f.Add(zipFiles(f, slackFiles(f), zip.Store))
	f.Add([]byte(sampleDCE))
	f.Add(readTestdata(f, "telegram-result.json"))
	f.Add(readTestdata(f, "telegram-chat.json"))
	f.Add([]byte(`{"about":"x","contacts":{"list":[]},"chats":{"list":[{"id":1,"messages":[]}]}}`))
	f.Add([]byte("\uFEFF{\"guild\":{},\"channel\":{\"id\":\"1\",\"name\":\"x\"},\"messages\":[]}"))
	f.Fuzz(func(t *testing.T, head []byte) {
		format := DetectFormat(head)
		if format == "" {
			return
		}
		if !slices.Contains(exportFormats, format) {
			t.Fatalf("DetectFormat returned %q", format)
		}
		x, err := ParseExport(format, bytes.NewReader(head), int64(len(head)), "src")
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%s: error not ErrFormat: %v", format, err)
			}
			return
		}
		checkExport(t, x, format != "discord") // the engine's limits are not ParseDiscordExport's promise
	})
}

// FuzzSlackExportFiles fuzzes the JSON inside an export, which
// FuzzSlackExport seldom reaches past the zip's checksums.
func FuzzSlackExportFiles(f *testing.F) {
	files := slackFiles(f)
	f.Add(string(files["channels.json"]), string(files["users.json"]), string(files["general/2023-11-14.json"]), string(files["dms.json"]))
	f.Add(`[{"id":"C01GENERAL","name":"general","topic":{"value":"<#C01GENERAL> &amp;"}}]`, `[{"id":"U1","name":"a","profile":{"display_name":"A"}}]`,
		`[{"ts":"1.1","thread_ts":"1.1","text":"<@U1|x> <!here|h> <https://a|b>"},{"ts":"1.2","thread_ts":"1.1","user":"U1","text":"r","edited":{"ts":"2"}}]`,
		`[{"id":"D04ANABO","members":["U1","U2"]}]`)
	f.Fuzz(func(t *testing.T, channels, users, day, dms string) {
		x, err := parseSlack(zipFiles(t, map[string][]byte{
			"channels.json": []byte(channels), "users.json": []byte(users), "dms.json": []byte(dms),
			"general/2023-11-14.json": []byte(day), "C01GENERAL/2023-11-15.json": []byte(day), "D04ANABO/2023-11-14.json": []byte(day),
		}, zip.Store))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error not ErrFormat: %v", err)
			}
			return
		}
		checkExport(t, x, true)
	})
}
