package crawl

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

const sampleDCE = `{"guild":{"id":"1","name":"G"},
 "channel":{"id":"20","type":"GuildPublicThread","categoryId":"2","category":"chat","name":"cron help","topic":null},
 "dateRange":{"after":null,"before":null},"exportedAt":"2024-05-01T10:00:00+00:00",
 "messages":[
  {"id":"10","type":"Default","timestamp":"2024-04-30T09:00:00.123+02:00","timestampEdited":null,"isPinned":false,"content":"hi",
   "author":{"id":"5","name":"ana","discriminator":"0000","nickname":"Ana","isBot":false},
   "attachments":[{"id":"7","url":"https://cdn/a.png","fileName":"a.png","fileSizeBytes":123}],"embeds":[],"reactions":[],"mentions":[],"unknownField":1},
  {"id":"11","type":"GuildMemberJoin","timestamp":"2024-04-30T09:01:00+00:00","content":"","author":{"id":"6","name":"bo","nickname":"bo"}},
  {"id":"12","type":"Reply","timestamp":"2024-04-30T09:02:00+00:00","timestampEdited":"2024-04-30T09:03:00+00:00","content":"hello back",
   "author":{"id":"6","name":"bo","nickname":"bo","isBot":false},"attachments":[],"reference":{"type":"Default","messageId":"10","channelId":"20","guildId":"1"}},
  {"id":"13","type":"Default","timestamp":"2024-04-30T09:04:00+00:00","content":"   ","author":{"id":"6","name":"bo"}}
 ],"messageCount":4}`

func TestParseDiscordExport(t *testing.T) {
	x, err := ParseDiscordExport(strings.NewReader(sampleDCE), "src")
	if err != nil {
		t.Fatal(err)
	}
	ch := x.Channels[0]
	if ch.ID != "20" || ch.Name != "cron help" || ch.Kind != "thread" || ch.ParentID != "2" || ch.URL != "https://discord.com/channels/1/20" || ch.Private {
		t.Errorf("channel %+v", ch)
	}
	if len(x.Messages) != 2 {
		t.Fatalf("want 2 messages (join and blank skipped), got %d", len(x.Messages))
	}
	m := x.Messages[0]
	if m.Content != "hi\n[attachment: a.png]" || m.Author != "ana" || m.AuthorName != "Ana" ||
		m.Timestamp.Format("15:04:05.000Z07:00") != "07:00:00.123Z" || m.URL != "https://discord.com/channels/1/20/10" {
		t.Errorf("message %+v", m)
	}
	r := x.Messages[1]
	if r.ReplyTo != "10" || r.AuthorName != "" || r.EditedAt.IsZero() {
		t.Errorf("reply %+v", r)
	}
}

// TestDiscordExportPrivate: DMs, group DMs (and anything of the "Direct
// Messages" pseudo-guild) and private threads are private; a thread follows
// its private parent whichever is imported first.
func TestDiscordExportPrivate(t *testing.T) {
	export := func(guild, typ, id, category string) string {
		return `{"guild":{"id":"` + guild + `","name":"` + map[string]string{"0": "Direct Messages"}[guild] + `"},
		 "channel":{"id":"` + id + `","type":"` + typ + `","categoryId":"` + category + `","name":"c` + id + `"},
		 "messages":[{"id":"` + id + `1","type":"Default","timestamp":"2024-04-30T09:00:00+00:00","content":"hi","author":{"id":"5","name":"ana"}}]}`
	}
	for _, c := range []struct {
		guild, typ string
		want       bool
	}{
		{"1", "GuildTextChat", false}, {"1", "GuildPublicThread", false}, {"1", "GuildPrivateThread", true},
		{"0", "DirectTextChat", true}, {"0", "DirectGroupTextChat", true}, {"1", "DirectTextChat", true}, {"0", "GuildTextChat", true},
	} {
		x, err := ParseDiscordExport(strings.NewReader(export(c.guild, c.typ, "7", "2")), "src")
		if err != nil {
			t.Fatal(err)
		}
		if x.Channels[0].Private != c.want {
			t.Errorf("guild %s, %s: private %v", c.guild, c.typ, x.Channels[0].Private)
		}
	}

	e, _ := engine.Open(engine.Options{})
	defer e.Close()
	e.PutSource(record.Source{ID: "src", Name: "D", Type: "discord", Enabled: true})
	// The parent, crawled private, then its thread imported.
	if _, err := e.PutChannels([]record.Channel{{SourceID: "src", ID: "2", Name: "staff", Private: true}}); err != nil {
		t.Fatal(err)
	}
	x, _ := ParseDiscordExport(strings.NewReader(export("1", "GuildPublicThread", "20", "2")), "src")
	if _, err := Import(e, x); err != nil {
		t.Fatal(err)
	}
	if x.Channels[0].Private {
		t.Error("Import changed the export")
	}
	// A thread imported first, then its parent, private.
	x, _ = ParseDiscordExport(strings.NewReader(export("1", "GuildPublicThread", "30", "3")), "src")
	Import(e, x)
	if c, _ := e.ChannelByID("src", "30"); c.Private {
		t.Fatal("a thread of a public or unknown parent is private")
	}
	if _, err := Import(e, &Export{Channels: []record.Channel{{SourceID: "src", ID: "3", Name: "mods", Private: true}}}); err != nil {
		t.Fatal(err)
	}
	// The threads follow their parents, whichever came first.
	for _, id := range []string{"2", "20", "3", "30"} {
		if c, ok := e.ChannelByID("src", id); !ok || !c.Hidden {
			t.Errorf("channel %s: stored %v, hidden %v", id, ok, c.Hidden)
		}
	}
	if pub := e.Channels("src", false); len(pub) != 0 {
		t.Errorf("callers without credentials see %+v", pub)
	}
}

func TestParseDiscordExportErrors(t *testing.T) {
	for _, in := range []string{
		``, `{`, `[]`, `{"channel":{}}`,
		`{"channel":{"id":"1","name":"x"},"messages":[{"id":"1","type":"Default","timestamp":"yesterday","content":"x"}]}`,
		`{"channel":{"id":"1","name":"x"},"messages":[{"type":"Default","timestamp":"2024-01-01T00:00:00Z","content":"x"}]}`,
	} {
		if _, err := ParseDiscordExport(strings.NewReader(in), "s"); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestImportDemoExportIsIdempotent(t *testing.T) {
	f, err := os.Open("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := ParseDiscordExport(f, "demo")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := engine.Open(engine.Options{})
	defer e.Close()
	e.PutSource(record.Source{ID: "demo", Name: "Demo", Type: "discord", Enabled: true})
	n, err := Import(e, x)
	if err != nil || n < 300 {
		t.Fatalf("imported %d: %v", n, err)
	}
	if n, err := Import(e, x); err != nil || n != 0 {
		t.Fatalf("second import changed %d: %v", n, err)
	}
	r, _ := e.Search(query.SearchRequest{Query: "webhook signature mismatch", Limit: 5})
	if len(r.Messages) == 0 {
		t.Error("demo export not searchable")
	}
}

func FuzzParseDiscordExport(f *testing.F) {
	f.Add(sampleDCE)
	f.Add(string(dceFile("1", dceMessage("11", "Default", "a"), dceMessage("11", "Default", "b"), dceMessage("12", "ChannelPinnedMessage", ""))))
	f.Fuzz(func(t *testing.T, in string) {
		x, err := ParseDiscordExport(strings.NewReader(in), "s")
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error not ErrFormat: %v", err)
			}
			return
		}
		checkSkips(t, x)
		ids := map[string]bool{}
		for _, m := range x.Messages {
			if m.ID == "" || m.Timestamp.IsZero() || strings.TrimSpace(m.Content) == "" {
				t.Fatalf("message the engine would refuse: %+v", m)
			}
			if ids[m.ID] {
				t.Fatalf("message %q twice", m.ID)
			}
			ids[m.ID] = true
		}
	})
}
