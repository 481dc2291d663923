package crawl

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// maxTelegramBytes bounds a result.json.
const maxTelegramBytes = 512 << 20

// tgChat is a chat of a Telegram Desktop export, and the root of a
// single-chat export (telegramdesktop/tdesktop, export_output_json.cpp).
type tgChat struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	ID       json.Number  `json:"id"`
	Messages *[]tgMessage `json:"messages"`
}

type tgRoot struct {
	tgChat
	Chats     *tgList `json:"chats"`
	LeftChats *tgList `json:"left_chats"`
}

type tgList struct {
	List []tgChat `json:"list"`
}

type tgMessage struct {
	ID         json.Number     `json:"id"`
	Type       string          `json:"type"`
	Date       string          `json:"date"`
	Unix       tgScalar        `json:"date_unixtime"`
	Edited     string          `json:"edited"`
	EditedUnix tgScalar        `json:"edited_unixtime"`
	From       string          `json:"from"`
	Action     json.RawMessage `json:"action"` // of a service message: "pin_message"…
	FromID     tgScalar        `json:"from_id"`
	ReplyTo    json.Number     `json:"reply_to_message_id"`
	ReplyPeer  tgScalar        `json:"reply_to_peer_id"`
	Text       tgText          `json:"text"`
	Photo      json.RawMessage `json:"photo"`
	File       string          `json:"file"`
	FileName   string          `json:"file_name"`
	MediaType  string          `json:"media_type"`
	Sticker    string          `json:"sticker_emoji"`
	Poll       *struct {
		Question string `json:"question"`
	} `json:"poll"`
}

// tgScalar is a string or a number, as ids and times are written by
// different tdesktop versions.
type tgScalar string

func (s *tgScalar) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		return nil
	case '"':
		return json.Unmarshal(b, (*string)(s))
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		*s = tgScalar(b)
		return nil
	}
	return errors.New("a string or a number is expected, got " + jsonKind(b[0]))
}

// tgText is a message's text flattened to plain text. The export writes a
// string for a single plain run, else an array of strings and entity
// objects {type, text, href…}. A text of another shape is noted in bad,
// for the error to name the message.
type tgText struct {
	s, bad string
}

func (t *tgText) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		return nil
	case '"':
		return json.Unmarshal(b, &t.s)
	case '[':
	default:
		t.bad = "text is " + jsonKind(b[0]) + ", want a string or an array"
		return nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var sb strings.Builder
	for i, p := range parts {
		p = bytes.TrimSpace(p)
		var e struct {
			Type string `json:"type"`
			Text string `json:"text"`
			Href string `json:"href"`
		}
		switch {
		case len(p) > 0 && p[0] == '"':
			if err := json.Unmarshal(p, &e.Text); err != nil {
				return err
			}
		case len(p) > 0 && p[0] == '{':
			if err := json.Unmarshal(p, &e); err != nil {
				t.bad = "text[" + strconv.Itoa(i) + "]: " + err.Error()
				return nil
			}
		default:
			t.bad = "text[" + strconv.Itoa(i) + "] is " + jsonKind(p[0]) + ", want a string or an entity object"
			return nil
		}
		sb.WriteString(e.Text)
		if e.Type == "text_link" && e.Href != "" && e.Href != e.Text {
			sb.WriteString(" (" + e.Href + ")")
		}
	}
	t.s = sb.String()
	return nil
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// ParseTelegramExport reads a Telegram Desktop result.json of one chat, or
// of a whole account (chats.list and left_chats.list). Each chat becomes a
// channel, Private unless it is a public channel or supergroup; service messages (joins, pins, calls…) are skipped and so are
// messages with neither text nor media. Any problem is an ErrFormat naming
// the chat and message; at most 512 MiB are read. The result is sorted:
// channels by name, messages by channel, then time.
func ParseTelegramExport(r io.Reader, sourceID string) (*Export, error) {
	return parseTelegramExport(r, sourceID, maxTelegramBytes)
}

func parseTelegramExport(r io.Reader, sourceID string, limit int64) (*Export, error) {
	var root tgRoot
	if err := decodeJSON(&capReader{r: r, limit: limit}, &root); err != nil {
		if errors.Is(err, errExportTooLarge) {
			return nil, formatErr("Telegram result.json: larger than %d MiB", limit>>20)
		}
		return nil, formatErr("Telegram result.json: %v", err)
	}
	var chats []tgChat
	switch {
	case root.Chats != nil:
		chats = root.Chats.List
		if root.LeftChats != nil {
			chats = append(chats, root.LeftChats.List...)
		}
	case root.Messages != nil:
		chats = []tgChat{root.tgChat}
	default:
		return nil, formatErr("Telegram result.json: neither chats.list nor messages")
	}
	x := &Export{}
	seen := map[string]bool{}
	ids := map[string]bool{} // message ids, which name their chat
	for i := range chats {
		c := &chats[i]
		id, err := strconv.ParseInt(c.ID.String(), 10, 64)
		if err != nil {
			return nil, formatErr("Telegram result.json: chat %d: id %q is not an integer", i, c.ID)
		}
		ch := record.Channel{SourceID: sourceID, ID: strconv.FormatInt(id, 10), Kind: "channel", Private: !tgPublic[c.Type]}
		if seen[ch.ID] { // a chat both current and left: the first is read
			if c.Messages != nil {
				for range *c.Messages {
					x.skip("chat twice in the file")
				}
			}
			continue
		}
		seen[ch.ID] = true
		fallback := "chat " + ch.ID
		if c.Type == "saved_messages" {
			fallback = "Saved Messages"
		}
		ch.Name = visibleName(c.Name, 200, fallback)
		x.Channels = append(x.Channels, ch)
		if c.Messages == nil {
			continue
		}
		for j := range *c.Messages {
			m, skip, err := tgMessageOf(&(*c.Messages)[j], sourceID, ch.ID)
			switch {
			case err != nil:
				return nil, formatErr("Telegram result.json: chat %s: message %d: %v", ch.ID, j, err)
			case skip != "":
				x.skip(skip)
			case ids[m.ID]:
				x.skip(skipDuplicate)
			default:
				ids[m.ID] = true
				x.Messages = append(x.Messages, m)
			}
		}
	}
	out := sortExport(x.Channels, x.Messages, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) // numeric ids of one chat
	})
	out.Format, out.Skipped = "telegram", x.Skipped
	return out, nil
}

// tgPublic are the chat types anyone may read; every other type (personal,
// bot and saved chats, private groups and channels, and types unknown or
// missing) is private.
var tgPublic = map[string]bool{"public_channel": true, "public_supergroup": true}

// tgMessageOf validates a message and maps it; for a message with nothing
// to keep, it says why instead.
func tgMessageOf(m *tgMessage, sourceID, chat string) (msg record.Message, skip string, err error) {
	id, err := strconv.ParseInt(m.ID.String(), 10, 64)
	if err != nil {
		return record.Message{}, "", errors.New("id " + strconv.Quote(m.ID.String()) + " is not an integer")
	}
	ts, err := tgTime(m.Unix, m.Date, "date")
	if err != nil {
		return record.Message{}, "", err
	}
	var edited time.Time
	if m.EditedUnix != "" || m.Edited != "" {
		if edited, err = tgTime(m.EditedUnix, m.Edited, "edited"); err != nil {
			return record.Message{}, "", err
		}
		if !edited.After(ts) {
			edited = time.Time{} // exports of 2020 mark every message edited at 1970
		}
	}
	if m.Text.bad != "" {
		return record.Message{}, "", errors.New(m.Text.bad)
	}
	msg = record.Message{
		SourceID: sourceID, ChannelID: chat, ID: chat + "-" + strconv.FormatInt(id, 10),
		Author:    textcut.Prefix(cmp.Or(m.From, string(m.FromID)), record.MaxNameBytes),
		Timestamp: ts, EditedAt: edited,
	}
	if m.ReplyTo != "" && m.ReplyPeer == "" { // a reply to another chat cannot be linked
		to, err := strconv.ParseInt(m.ReplyTo.String(), 10, 64)
		if err != nil {
			return record.Message{}, "", errors.New("reply_to_message_id " + strconv.Quote(m.ReplyTo.String()) + " is not an integer")
		}
		msg.ReplyTo = chat + "-" + strconv.FormatInt(to, 10)
	}
	msg.Content = textcut.Prefix(strings.TrimSpace(m.Text.s), record.MaxMessageBytes)
	if msg.Content == "" {
		msg.Content = tgMedia(m)
	}
	switch {
	case m.Type == "service":
		var action string
		json.Unmarshal(m.Action, &action) // a name, if it is one
		return record.Message{}, strings.TrimSpace("service message " + action), nil
	case m.Type != "message":
		return record.Message{}, "unsupported type " + m.Type, nil
	case msg.Content == "":
		return record.Message{}, skipEmpty, nil
	}
	return msg, "", nil
}

// tgMedia describes the media of a message without text: "[photo]",
// "[file: a.pdf]", "[voice_message]"…, or "" if it has none.
func tgMedia(m *tgMessage) string {
	name := m.FileName
	if name == "" && m.File != "" && !strings.HasPrefix(m.File, "(") { // "(File not included…)"
		name = path.Base(m.File)
	}
	name = textcut.Prefix(visibleName(name, 200, ""), record.MaxNameBytes)
	switch {
	case len(m.Photo) > 0 && string(m.Photo) != "null":
		return "[photo]"
	case m.MediaType == "sticker" && m.Sticker != "":
		return "[sticker: " + textcut.Prefix(m.Sticker, record.MaxNameBytes) + "]"
	case m.Poll != nil && m.Poll.Question != "":
		return "[poll: " + textcut.Prefix(m.Poll.Question, record.MaxNameBytes) + "]"
	case m.Poll != nil:
		return "[poll]"
	case m.MediaType != "" && name != "":
		return "[" + textcut.Prefix(m.MediaType, record.MaxNameBytes) + ": " + name + "]"
	case m.MediaType != "":
		return "[" + textcut.Prefix(m.MediaType, record.MaxNameBytes) + "]"
	case name != "":
		return "[file: " + name + "]"
	case m.File != "":
		return "[file]"
	}
	return ""
}

// tgTime reads an *_unixtime field (epoch seconds), or else the matching
// date field, local time without an offset, taken as UTC.
func tgTime(unix tgScalar, date, field string) (time.Time, error) {
	if unix != "" {
		s := string(unix)
		if len(s) > 11 || !isDigits(s) {
			return time.Time{}, errors.New(field + "_unixtime " + strconv.Quote(s) + " is not epoch seconds")
		}
		n, _ := strconv.ParseInt(s, 10, 64)
		return time.Unix(n, 0).UTC(), nil
	}
	t, err := time.Parse("2006-01-02T15:04:05", date)
	if err != nil || t.IsZero() {
		return time.Time{}, errors.New("neither " + field + "_unixtime nor a valid " + field + ": " + strconv.Quote(date))
	}
	return t, nil
}
