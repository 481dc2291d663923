package crawl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sift-search/sift/record"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var wantTelegram = Export{
	Channels: []record.Channel{
		{SourceID: "src", ID: "100000002", Name: "Bo Chen", Kind: "channel", Private: true},
		{SourceID: "src", ID: "4000001", Name: "Old Group", Kind: "channel", Private: true},
		{SourceID: "src", ID: "100000001", Name: "Saved Messages", Kind: "channel", Private: true},
		{SourceID: "src", ID: "1834567890", Name: "Sift Users", Kind: "channel", Private: true},
	},
	Messages: []record.Message{
		{SourceID: "src", ChannelID: "100000002", ID: "100000002-10", Author: "Bo Chen", Content: "lunch at 1?", Timestamp: unixUTC(1699960000, 0)},
		{SourceID: "src", ChannelID: "100000002", ID: "100000002-11", Author: "Ana Lima", Content: "yes! https://maps.example.com/x",
			Timestamp: unixUTC(1699960060, 0), ReplyTo: "100000002-10"},
		{SourceID: "src", ChannelID: "4000001", ID: "4000001-30", Author: "Cy", Content: "farewell",
			Timestamp: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)},
		{SourceID: "src", ChannelID: "100000001", ID: "100000001-20", Author: "Ana Lima", Content: "note to self: try Sift",
			Timestamp: unixUTC(1700038800, 0)},
		{SourceID: "src", ChannelID: "1834567890", ID: "1834567890-2", Author: "Ana Lima", Content: "How do I import a Slack export?",
			Timestamp: unixUTC(1699949100, 0)},
		{SourceID: "src", ChannelID: "1834567890", ID: "1834567890-3", Author: "Bo Chen",
			Content:   "Use sift import — see the docs (https://sift.example.com/docs/import) or https://sift.example.com @ana_l",
			Timestamp: unixUTC(1699949400, 0), EditedAt: unixUTC(1699949520, 0), ReplyTo: "1834567890-2"},
		{SourceID: "src", ChannelID: "1834567890", ID: "1834567890-4", Author: "Ana Lima", Content: "[photo]", Timestamp: unixUTC(1699950000, 0)},
		{SourceID: "src", ChannelID: "1834567890", ID: "1834567890-5", Author: "Bo Chen", Content: "[file: report.pdf]", Timestamp: unixUTC(1699950060, 0)},
		{SourceID: "src", ChannelID: "1834567890", ID: "1834567890-6", Author: "Bo Chen", Content: "[voice_message]", Timestamp: unixUTC(1699950120, 0)},
		{SourceID: "src", ChannelID: "1834567890", ID: "1834567890-8", Author: "user100000009", Content: "bye", Timestamp: unixUTC(1699950240, 0)},
	},
}

var wantTelegramChat = Export{
	Channels: []record.Channel{{SourceID: "src", ID: "1700000001", Name: "Sift Announcements", Kind: "channel"}},
	Messages: []record.Message{
		{SourceID: "src", ChannelID: "1700000001", ID: "1700000001-101", Author: "Sift Announcements",
			Content: "Sift 1.2 is out #release\nChangelog: https://sift.example.com/changelog", Timestamp: unixUTC(1700136000, 0)},
		{SourceID: "src", ChannelID: "1700000001", ID: "1700000001-102", Author: "Sift Announcements",
			Content: "[poll: Which importer next?]", Timestamp: unixUTC(1700136300, 0)},
	},
}

func TestParseTelegramExport(t *testing.T) {
	for _, c := range []struct {
		file string
		want Export
	}{
		{"telegram-result.json", wantTelegram},
		{"telegram-chat.json", wantTelegramChat},
	} {
		t.Run(c.file, func(t *testing.T) {
			x, err := ParseTelegramExport(bytes.NewReader(readTestdata(t, c.file)), "src")
			if err != nil {
				t.Fatal(err)
			}
			compareExport(t, x, c.want)
			checkExport(t, x, true)
		})
	}
}

func TestParseTelegramExportFallbacks(t *testing.T) {
	in := `{"chats":{"list":[
	  {"type":"personal_chat","id":7,"messages":[
	    {"id":1,"type":"message","date_unixtime":1700000000,"from_id":"user9","text":"","sticker_emoji":"👍","media_type":"sticker","file":"stickers/s.webp"},
	    {"id":2,"type":"message","date_unixtime":"1700000001","from":"Ana","text":"","media_type":"video_file","file_name":"clip.mp4","file":"video_files/clip.mp4"},
	    {"id":2,"type":"message","date_unixtime":"1700000002","from":"Ana","text":"the same id again"},
	    {"id":3,"type":"message","date_unixtime":"1700000003","from":"Ana","text":"other chat","reply_to_message_id":1,"reply_to_peer_id":"channel5"},
	    {"id":4,"type":"message","date_unixtime":"1700000004","from":"Ana","text":"","file":"files/notes.txt"},
	    {"id":5,"type":"message","date_unixtime":"1700000005","from":"Ana","text":"","poll":{"question":""}},
	    {"id":6,"type":"message","date_unixtime":"1700000006","from":"Ana","text":null,"location_information":{"latitude":1}}
	  ]},
	  {"name":"","type":"private_group","id":"-8","messages":[]},
	  {"name":"dup","type":"private_group","id":7,"messages":[{"id":9,"type":"message","date_unixtime":"1","text":"dropped"}]}
	]}}`
	x, err := ParseTelegramExport(strings.NewReader(in), "src")
	if err != nil {
		t.Fatal(err)
	}
	compareExport(t, x, Export{
		Channels: []record.Channel{
			{SourceID: "src", ID: "-8", Name: "chat -8", Kind: "channel", Private: true},
			{SourceID: "src", ID: "7", Name: "chat 7", Kind: "channel", Private: true},
		},
		Messages: []record.Message{
			{SourceID: "src", ChannelID: "7", ID: "7-1", Author: "user9", Content: "[sticker: 👍]", Timestamp: unixUTC(1700000000, 0)},
			{SourceID: "src", ChannelID: "7", ID: "7-2", Author: "Ana", Content: "[video_file: clip.mp4]", Timestamp: unixUTC(1700000001, 0)},
			{SourceID: "src", ChannelID: "7", ID: "7-3", Author: "Ana", Content: "other chat", Timestamp: unixUTC(1700000003, 0)},
			{SourceID: "src", ChannelID: "7", ID: "7-4", Author: "Ana", Content: "[file: notes.txt]", Timestamp: unixUTC(1700000004, 0)},
			{SourceID: "src", ChannelID: "7", ID: "7-5", Author: "Ana", Content: "[poll]", Timestamp: unixUTC(1700000005, 0)},
		},
	})
}

// TestTelegramPrivateChats: only public channels and supergroups are
// public; every other chat type, unknown or missing included, is private.
func TestTelegramPrivateChats(t *testing.T) {
	types := []string{"personal_chat", "bot_chat", "saved_messages", "private_group", "private_supergroup",
		"private_channel", "public_supergroup", "public_channel", "secret_chat", ""}
	var list []string
	for i, typ := range types {
		field := ""
		if typ != "" {
			field = fmt.Sprintf(`"type":%q,`, typ)
		}
		list = append(list, fmt.Sprintf(`{"name":"chat %d",%s"id":%d,"messages":[{"id":1,"type":"message","date_unixtime":"1700000000","from":"Ana","text":"hello"}]}`, i, field, i))
	}
	x, err := ParseTelegramExport(strings.NewReader(`{"chats":{"list":[`+strings.Join(list, ",")+`]}}`), "src")
	if err != nil {
		t.Fatal(err)
	}
	e := openImportEngine(t, t.TempDir())
	defer e.Close()
	if _, err := Import(e, x); err != nil {
		t.Fatal(err)
	}
	for i, typ := range types {
		want := typ != "public_channel" && typ != "public_supergroup"
		if c, ok := e.ChannelByID("src", fmt.Sprint(i)); !ok || c.Private != want {
			t.Errorf("chat of type %q: stored %v, private %v", typ, ok, c.Private)
		}
	}
	if pub := e.Channels("src", false); len(pub) != 2 {
		t.Errorf("callers without credentials see %d chats, want 2", len(pub))
	}
}

func TestParseTelegramExportErrors(t *testing.T) {
	msg := func(fields string) string {
		return `{"name":"x","type":"personal_chat","id":1,"messages":[{"id":1,"type":"message",` + fields + `}]}`
	}
	for _, c := range []struct{ in, want string }{
		{``, "the JSON ends early"},
		{`{"name":"x","messages":[`, "the JSON ends early"},
		{`[]`, "cannot unmarshal array"},
		{`{}`, "neither chats.list nor messages"},
		{`{"chats":{"list":[]}} {}`, "data after the JSON value"},
		{`{"name":"x","messages":[]}`, `chat 0: id "" is not an integer`},
		{`{"chats":{"list":[{"id":1.5,"messages":[]}]}}`, `chat 0: id "1.5" is not an integer`},
		{`{"id":"abc","messages":[]}`, `invalid number literal`},
		{msg(`"date_unixtime":"yesterday","text":"hi"`), `chat 1: message 0: date_unixtime "yesterday" is not epoch seconds`},
		{msg(`"date_unixtime":"-5","text":"hi"`), `date_unixtime "-5" is not epoch seconds`},
		{msg(`"date_unixtime":true,"text":"hi"`), `a string or a number is expected, got a boolean`},
		{msg(`"text":"hi"`), `neither date_unixtime nor a valid date: ""`},
		{msg(`"date":"14/11/2023","text":"hi"`), `neither date_unixtime nor a valid date: "14/11/2023"`},
		{msg(`"date_unixtime":"1","edited_unixtime":"soon","text":"hi"`), `edited_unixtime "soon" is not epoch seconds`},
		{msg(`"date_unixtime":"1","text":42`), `chat 1: message 0: text is a number, want a string or an array`},
		{msg(`"date_unixtime":"1","text":{"type":"bold"}`), `text is an object, want a string or an array`},
		{msg(`"date_unixtime":"1","text":["a",5]`), `text[1] is a number, want a string or an entity object`},
		{msg(`"date_unixtime":"1","text":[{"type":"bold","text":5}]`), `text[0]: json: cannot unmarshal number`},
		{msg(`"date_unixtime":"1","text":"hi","reply_to_message_id":2.5`), `reply_to_message_id "2.5" is not an integer`},
		{`{"name":"x","id":1,"messages":[{"id":"one","type":"message","date_unixtime":"1","text":"hi"}]}`, `invalid number literal`},
		{`{"name":"x","id":1,"messages":[{"id":1e3,"type":"service","date_unixtime":"1"}]}`, `message 0: id "1e3" is not an integer`},
	} {
		x, err := ParseTelegramExport(strings.NewReader(c.in), "src")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant an ErrFormat with %q", c.in, err, c.want)
		}
		if x != nil {
			t.Errorf("%s: a malformed export returned content", c.in)
		}
	}
}

func TestParseTelegramExportTooLarge(t *testing.T) {
	data := readTestdata(t, "telegram-result.json")
	if _, err := parseTelegramExport(bytes.NewReader(data), "src", int64(len(data))); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := parseTelegramExport(bytes.NewReader(append(data, ' ')), "src", int64(len(data)))
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("one byte past the limit: %v", err)
	}
	_, err = parseTelegramExport(bytes.NewReader(data), "src", 1000)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("far past the limit: %v", err)
	}
}

func TestImportTelegramExportIsIdempotent(t *testing.T) {
	x, err := ParseTelegramExport(bytes.NewReader(readTestdata(t, "telegram-result.json")), "src")
	if err != nil {
		t.Fatal(err)
	}
	importTwice(t, x, "import slack export")
}

func FuzzTelegramExport(f *testing.F) {
	f.Add(string(readTestdata(f, "telegram-result.json")))
	f.Add(string(readTestdata(f, "telegram-chat.json")))
	f.Add(`{"id":1,"messages":[{"id":1,"type":"message","date_unixtime":"1","text":["a",{"type":"text_link","text":"b","href":"c"}]}]}`)
	f.Add(`{"chats":{"list":[{"id":2,"type":"saved_messages","messages":[{"id":3,"type":"message","date":"2020-01-01T00:00:00","photo":"p","text":""}]}]},"left_chats":{"list":[{"id":2}]}}`)
	f.Add(`{"id":1,"messages":[{"id":1,"type":"service","date_unixtime":"1","action":"pin_message","text":""},{"id":1,"type":"message","date_unixtime":"1","text":"a"},{"id":1,"type":"message","date_unixtime":"2","text":"b"},{"id":2,"type":"x","date_unixtime":"1","action":{"y":1},"text":""}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		x, err := ParseTelegramExport(strings.NewReader(in), "src")
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error not ErrFormat: %v", err)
			}
			return
		}
		checkExport(t, x, true)
	})
}

// TestTelegramEditBeforeDate: exports of 2020 mark every message "edited"
// at 1970; an edit time not after the message's own is no edit.
func TestTelegramEditBeforeDate(t *testing.T) {
	in := `{"name":"c","type":"public_channel","id":5,"messages":[
	  {"id":1,"type":"message","date":"2020-05-01T10:00:00","edited":"1970-01-01T05:00:00","from":"Ana","text":"old export"},
	  {"id":2,"type":"message","date_unixtime":"1700000000","edited_unixtime":"1700000060","from":"Ana","text":"really edited"}
	]}`
	x, err := ParseTelegramExport(strings.NewReader(in), "src")
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Messages) != 2 || !x.Messages[0].EditedAt.IsZero() || !x.Messages[1].EditedAt.Equal(unixUTC(1700000060, 0)) {
		t.Fatalf("edit times %v, %v", x.Messages[0].EditedAt, x.Messages[1].EditedAt)
	}
}
