package crawl

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// Imports as jobs (import_run.go): every message of the file accounted for,
// recorded on the source, and a Discord file checked against its guild.

// exportFile writes data to a file and opens it, as the CLI and the
// uploads hand files to Import.
func exportFile(t *testing.T, name string, data []byte) ImportFile {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return ImportFile{Name: p, R: f, Size: int64(len(data))}
}

// slackExportAt reads an unpacked Slack export under testdata into zip
// paths, and counts the messages of its day files.
func slackExportAt(t testing.TB, dir string) (map[string][]byte, int) {
	t.Helper()
	files, inFile := map[string][]byte{}, 0
	root := filepath.Join("testdata", dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		if strings.Contains(filepath.ToSlash(rel), "/") && isDayFile(filepath.Base(p)) {
			var msgs []json.RawMessage
			if err := json.Unmarshal(b, &msgs); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			inFile += len(msgs)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, inFile
}

// checkCounts asserts that an import accounted for every message of its
// file once.
func checkCounts(t *testing.T, res ImportResult, inFile int) {
	t.Helper()
	if res.Messages != inFile || res.Stored+res.Updated+res.Unchanged+res.SkippedTotal() != inFile {
		t.Fatalf("%d in the file, result %d: %d stored + %d updated + %d unchanged + %d skipped %v",
			inFile, res.Messages, res.Stored, res.Updated, res.Unchanged, res.SkippedTotal(), res.Skipped)
	}
	if res.Changed != res.Stored+res.Updated {
		t.Fatalf("changed %d, stored %d, updated %d", res.Changed, res.Stored, res.Updated)
	}
}

var rawBotID = regexp.MustCompile(`^B[0-9A-Z]{6,}$`)

// TestImportSlackAccountsForEveryMessage imports an older-style Slack
// export (file comments, bots named in several ways, a message twice,
// joins, pins, an empty message): the figures add up to the messages of
// the file, bots are named, the file comment is kept, and the import is
// recorded on the source, across a restart.
func TestImportSlackAccountsForEveryMessage(t *testing.T) {
	files, inFile := slackExportAt(t, "slack-export-2016")
	dir := t.TempDir()
	eng, err := engine.Open(engine.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.PutSource(record.Source{ID: "acme", Name: "Acme Slack", Type: "slack", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(eng, RunnerOptions{})
	res, err := r.Import("acme", exportFile(t, "acme-2016.zip", zipFiles(t, files, zip.Deflate)))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, res, inFile)
	wantSkipped := map[string]int{
		"unsupported subtype channel_join": 2, "unsupported subtype pinned_item": 1,
		skipDuplicate: 1, skipEmpty: 1,
	}
	if res.Stored != 9 || res.Updated != 0 || res.Unchanged != 0 || !maps.Equal(res.Skipped, wantSkipped) ||
		res.Format != "slack" || res.File != "acme-2016.zip" || res.Channels != 2 || res.JobID == "" {
		t.Fatalf("first import: %+v", res)
	}

	// Authors: bots by name, never by id; the file comment by its commenter.
	authors := map[string]string{} // content prefix → author
	for _, slug := range []string{"general", "ops"} {
		msgs, _, err := eng.ChannelMessages(slug, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if rawBotID.MatchString(m.Author) || m.Author == "" {
				t.Errorf("message %s has author %q: %q", m.ID, m.Author, m.Content)
			}
			authors[strings.SplitN(m.Content, "\n", 2)[0]] = m.Author
		}
	}
	for content, author := range map[string]string{
		"Build #812 of acme-api succeeded (2 min 13 sec)": "jenkins", // named by a later message of its bot
		"Deploy of acme-api 1.4.2 to production started":  "jenkins",
		"Daily standup: what did you ship yesterday?":     "Standup Bot", // its bot user in users.json
		"Standup summary: 2 answers":                      "Standup Bot", // bot_profile
		"Disk usage on db-1 at 91%":                       "bot",         // named nowhere
		"Step 3 needs the staging token first, see #ops":  "bo",          // the file comment
	} {
		if got, ok := authors[content]; !ok || got != author {
			t.Errorf("%q: author %q (found %v), want %q", content, got, ok, author)
		}
	}
	comment, err := eng.Search(query.SearchRequest{Query: "staging token", Limit: 5, Private: true})
	if err != nil || len(comment.Messages) != 1 || !strings.Contains(comment.Messages[0].Content, "[comment on file: runbook.md]") {
		t.Fatalf("the file comment: %+v %v", comment, err)
	}

	src, _ := eng.Source("acme")
	li := src.LastImport
	if li == nil || li.JobID != res.JobID || li.Status != "ok" || li.File != "acme-2016.zip" || li.Stored != 9 ||
		li.Messages != inFile || !maps.Equal(li.Skipped, wantSkipped) || li.FinishedAt.Before(li.StartedAt) || src.LastCrawl != nil {
		t.Fatalf("recorded: %+v", li)
	}

	// Again: everything unchanged. Then with one message edited: updated.
	again, err := r.Import("acme", exportFile(t, "acme-2016.zip", zipFiles(t, files, zip.Store)))
	checkCounts(t, again, inFile)
	if err != nil || again.Stored != 0 || again.Unchanged != 9 || again.Changed != 0 {
		t.Fatalf("second import: %+v %v", again, err)
	}
	edited := maps.Clone(files)
	edited["ops/2016-02-20.json"] = []byte(strings.Replace(string(files["ops/2016-02-20.json"]), "looking at db-1 now", "db-1 cleaned up", 1))
	third, err := r.Import("acme", exportFile(t, "acme-2016-edited.zip", zipFiles(t, edited, zip.Deflate)))
	checkCounts(t, third, inFile)
	if err != nil || third.Updated != 1 || third.Unchanged != 8 || third.Stored != 0 {
		t.Fatalf("third import: %+v %v", third, err)
	}
	r.Close()

	// The record survives a restart (the log) and a snapshot.
	eng.Close()
	for range 2 {
		eng, err = engine.Open(engine.Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		src, _ = eng.Source("acme")
		if li := src.LastImport; li == nil || li.JobID != third.JobID || li.Updated != 1 || li.Unchanged != 8 || !maps.Equal(li.Skipped, wantSkipped) {
			t.Fatalf("after reopening: %+v", src.LastImport)
		}
		if err := eng.Snapshot(); err != nil {
			t.Fatal(err)
		}
		eng.Close()
	}
}

// TestImportOperatorKeepsOut: messages an operator keeps out are skipped,
// with their reason, and still add up.
func TestImportOperatorKeepsOut(t *testing.T) {
	files, inFile := slackExportAt(t, "slack-export-2016")
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "acme", Name: "Acme", Type: "slack", Enabled: true, OptOuts: []string{"jenkins"}})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	res, err := r.Import("acme", exportFile(t, "x.zip", zipFiles(t, files, zip.Deflate)))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, res, inFile)
	if res.Skipped[skipKeptOut] != 2 || res.Stored != 7 {
		t.Fatalf("%+v", res)
	}
}

// dceFile is a DiscordChatExporter export of guild with the messages
// given as JSON objects.
func dceFile(guild string, msgs ...string) []byte {
	return []byte(`{"guild":{"id":"` + guild + `","name":"Acme","iconUrl":"https://cdn.discordapp.com/embed/avatars/0.png"},
 "channel":{"id":"700","type":"GuildTextChat","categoryId":"600","category":"Text Channels","name":"help","topic":null},
 "dateRange":{"after":null,"before":null},"exportedAt":"2024-05-01T10:00:00+00:00",
 "messages":[` + strings.Join(msgs, ",") + `],"messageCount":` + itoa(len(msgs)) + `}`)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func dceMessage(id, typ, content string) string {
	return `{"id":"` + id + `","type":"` + typ + `","timestamp":"2024-04-30T09:00:0` + id[len(id)-1:] + `+00:00","timestampEdited":null,"isPinned":false,
  "content":"` + content + `","author":{"id":"5","name":"ana","discriminator":"0000","nickname":"Ana","isBot":false},
  "attachments":[],"embeds":[],"stickers":[],"reactions":[],"mentions":[]}`
}

// TestImportDiscordCounts: a message id twice in the file is stored once
// and counted as skipped, with system and empty messages.
func TestImportDiscordCounts(t *testing.T) {
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "dc", Name: "Acme Discord", Type: "discord", Enabled: true, Config: map[string]any{"guildId": "81384788765712384"}})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	file := dceFile("81384788765712384",
		dceMessage("1001", "Default", "how do I rotate the logs?"),
		dceMessage("1002", "Reply", "logrotate, daily"),
		dceMessage("1002", "Reply", "logrotate, daily"),
		dceMessage("1003", "GuildMemberJoin", ""),
		dceMessage("1004", "Default", " "),
		dceMessage("1005", "Default", "thanks"))
	res, err := r.Import("dc", exportFile(t, "help.json", file))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, res, 6)
	want := map[string]int{skipDuplicate: 1, "unsupported type GuildMemberJoin": 1, skipEmpty: 1}
	if res.Stored != 3 || !maps.Equal(res.Skipped, want) {
		t.Fatalf("%+v", res)
	}
	if st := eng.SourceStats("dc", true); st.Messages != res.Stored {
		t.Fatalf("%d stored, the source holds %d", res.Stored, st.Messages)
	}
}

// TestImportDiscordGuild: a file of another guild than the source's is
// refused, naming both; a source without a guildId takes the file's.
func TestImportDiscordGuild(t *testing.T) {
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "dc", Name: "Acme Discord", Type: "discord", Enabled: true, Config: map[string]any{"guildId": "111"}})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	other := dceFile("222", dceMessage("1001", "Default", "hi"))
	_, err := r.Import("dc", exportFile(t, "other.json", other))
	if !errors.Is(err, record.ErrConflict) || !strings.Contains(err.Error(), "111") || !strings.Contains(err.Error(), "222") {
		t.Fatalf("import of another guild: %v", err)
	}
	if st := eng.SourceStats("dc", true); st.Messages+st.Channels+st.Threads != 0 {
		t.Fatalf("a refused import stored %+v", st)
	}
	src, _ := eng.Source("dc")
	if src.LastImport != nil {
		t.Fatalf("a refused import is recorded: %+v", src.LastImport)
	}

	// Direct messages are of no guild: they go into any discord source.
	if res, err := r.Import("dc", exportFile(t, "dm.json", dceFile("0", dceMessage("1009", "Default", "psst")))); err != nil || res.Stored != 1 {
		t.Fatalf("a DM export: %+v %v", res, err)
	}

	// Import-only: no token, no guildId; the first import sets it.
	cfg, err := CheckConfig("discord", map[string]any{})
	if err != nil {
		t.Fatalf("an import-only discord source: %v", err)
	}
	if _, err := CheckConfig("discord", map[string]any{"token": "t"}); err == nil || !strings.Contains(err.Error(), "config.guildId") {
		t.Fatalf("a discord source with a token and no guildId: %v", err)
	}
	eng.PutSource(record.Source{ID: "io", Name: "Import only", Type: "discord", Enabled: true, Config: cfg})
	if res, err := r.Import("io", exportFile(t, "a.json", other)); err != nil || res.Stored != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	src, _ = eng.Source("io")
	if src.Config["guildId"] != "222" {
		t.Fatalf("guildId not recorded: %v", src.Config)
	}
	if _, err := r.Import("io", exportFile(t, "b.json", dceFile("333", dceMessage("1002", "Default", "x")))); !errors.Is(err, record.ErrConflict) {
		t.Fatalf("then a file of another guild: %v", err)
	}
}

type tgRawList struct {
	List []struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"list"`
}

// TestImportTelegramCounts: service messages and the rest add up.
func TestImportTelegramCounts(t *testing.T) {
	data := readTestdata(t, "telegram-result.json")
	var root struct {
		Chats     tgRawList `json:"chats"`
		LeftChats tgRawList `json:"left_chats"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	inFile := 0
	for _, c := range append(root.Chats.List, root.LeftChats.List...) {
		inFile += len(c.Messages)
	}
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "tg", Name: "Telegram", Type: "telegram", Enabled: true})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	res, err := r.Import("tg", exportFile(t, "result.json", data))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, res, inFile)
	if res.Stored != len(wantTelegram.Messages) || res.SkippedTotal() == 0 {
		t.Fatalf("%+v", res)
	}
	for why := range res.Skipped {
		if !strings.HasPrefix(why, "service message") && why != skipEmpty && why != skipDuplicate && why != "chat twice in the file" {
			t.Errorf("unexpected reason %q", why)
		}
	}
}

// TestImportMalformedChangesNothing: a file that does not parse, or is of
// another guild, is refused and changes nothing, the source's record
// included.
func TestImportMalformedChangesNothing(t *testing.T) {
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "dc", Name: "D", Type: "discord", Enabled: true, Config: map[string]any{"guildId": "7"}})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	seq := eng.Seq()
	bad := `{"guild":{"id":"1"},"channel":{"id":"2","name":"x"},"messages":[{"id":"3","type":"Default","timestamp":"yesterday","content":"hi"}]}`
	if _, err := r.Import("dc", exportFile(t, "bad.json", []byte(bad))); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "timestamp") {
		t.Fatalf("%v", err)
	}
	if _, err := r.Import("dc", exportFile(t, "other.json", dceFile("8", dceMessage("1001", "Default", "hi")))); !errors.Is(err, record.ErrConflict) {
		t.Fatalf("%v", err)
	}
	if src, _ := eng.Source("dc"); eng.Seq() != seq || src.LastImport != nil {
		t.Fatalf("refused imports changed the engine: seq %d → %d, %+v", seq, eng.Seq(), src.LastImport)
	}
	if _, err := ReadExport(strings.NewReader(bad), int64(len(bad)), "dc"); !errors.Is(err, ErrFormat) {
		t.Fatalf("ReadExport: %v", err)
	}
}

func TestInterruptedImportIsMarked(t *testing.T) {
	eng := webEngine(t)
	eng.PutSource(record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true,
		LastImport: &record.ImportInfo{JobID: "j_1", Status: "running", StartedAt: time.Now(), File: "x.zip"}})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	s, _ := eng.Source("s")
	if s.LastImport.Status != "error" || !strings.Contains(s.LastImport.Error, "interrupted") || s.LastCrawl != nil {
		t.Fatalf("%+v", s.LastImport)
	}
}
