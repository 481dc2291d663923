package crawl

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
)

// Export is the content of one chat export, ready for the engine.
type Export struct {
	Format   string // discord, slack, telegram
	Channels []record.Channel
	Messages []record.Message
	// Skipped counts the messages of the file left out, by reason ("empty
	// message": 3): with Messages, they are every message the file holds.
	Skipped map[string]int
	// GuildID is the Discord server a DiscordChatExporter file comes from
	// ("0" for direct messages); empty for the other formats.
	GuildID string
}

// InFile is how many messages the export's file holds: those kept and
// those skipped.
func (x *Export) InFile() int {
	n := len(x.Messages)
	for _, c := range x.Skipped {
		n += c
	}
	return n
}

// Reasons a message of an export is skipped; the others name the type or
// subtype the importer does not keep ("unsupported subtype channel_join").
const (
	skipDuplicate = "duplicate id in file"
	skipEmpty     = "empty message"
	skipOther     = "other reasons"
)

// maxSkipReasons bounds the reasons an export's skips are counted by: they
// are stored with the source, and a hostile file could name many types.
const maxSkipReasons = 20

// skip counts a message left out for reason.
func (x *Export) skip(reason string) {
	if x.Skipped == nil {
		x.Skipped = map[string]int{}
	}
	reason = visibleName(reason, 80, skipOther)
	if _, ok := x.Skipped[reason]; !ok && len(x.Skipped) >= maxSkipReasons {
		reason = skipOther
	}
	x.Skipped[reason]++
}

// ErrFormat wraps every error about the content of an export file.
var ErrFormat = errors.New("malformed export")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// dceExport is the part of a DiscordChatExporter JSON export Sift reads
// (Tyrrrz/DiscordChatExporter, JsonMessageWriter.cs). Type fields are enum
// names such as "Default" and "Reply".
type dceExport struct {
	Guild struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"guild"`
	Channel struct {
		ID         string  `json:"id"`
		Type       string  `json:"type"`
		CategoryID string  `json:"categoryId"`
		Category   string  `json:"category"`
		Name       string  `json:"name"`
		Topic      *string `json:"topic"`
	} `json:"channel"`
	Messages []struct {
		ID              string  `json:"id"`
		Type            string  `json:"type"`
		Timestamp       string  `json:"timestamp"`
		TimestampEdited *string `json:"timestampEdited"`
		Content         string  `json:"content"`
		Author          struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Nickname string `json:"nickname"`
			IsBot    bool   `json:"isBot"`
		} `json:"author"`
		Attachments []struct {
			FileName string `json:"fileName"`
		} `json:"attachments"`
		Reference *struct {
			MessageID string `json:"messageId"`
		} `json:"reference"`
	} `json:"messages"`
}

// maxDiscordBytes bounds a DiscordChatExporter file.
const maxDiscordBytes = 512 << 20

// threadTypes are the DiscordChatExporter channel types of threads, whose
// categoryId is the parent channel.
var threadTypes = map[string]bool{"GuildPublicThread": true, "GuildPrivateThread": true, "GuildNewsThread": true}

// dcePrivateTypes are the DiscordChatExporter channel types of private
// conversations: DMs, group DMs and private threads.
var dcePrivateTypes = map[string]bool{"DirectTextChat": true, "DirectGroupTextChat": true, "GuildPrivateThread": true}

// ParseDiscordExport reads a DiscordChatExporter JSON export of one channel
// or thread. System messages (joins, pins, boosts…) are skipped; the result
// names sourceID as the source of everything. DMs and group DMs (also any
// channel of the "Direct Messages" pseudo-guild, id 0) and private threads
// are Private; Import makes a thread follow its private parent.
func ParseDiscordExport(r io.Reader, sourceID string) (*Export, error) {
	var in dceExport
	if err := decodeJSON(&capReader{r: r, limit: maxDiscordBytes}, &in); err != nil {
		if errors.Is(err, errExportTooLarge) {
			return nil, formatErr("DiscordChatExporter JSON: larger than %d MiB", maxDiscordBytes>>20)
		}
		return nil, formatErr("DiscordChatExporter JSON: %v", err)
	}
	if in.Channel.ID == "" || in.Channel.Name == "" {
		return nil, formatErr("DiscordChatExporter JSON: channel.id and channel.name are required")
	}
	ch := record.Channel{
		SourceID: sourceID, ID: in.Channel.ID, Name: in.Channel.Name, Kind: "channel",
		URL:     discordURL(in.Guild.ID, in.Channel.ID, ""),
		Private: dcePrivateTypes[in.Channel.Type] || in.Guild.ID == "0" || in.Guild.Name == "Direct Messages",
	}
	if in.Channel.Topic != nil {
		ch.Topic = *in.Channel.Topic
	}
	if threadTypes[in.Channel.Type] {
		ch.Kind, ch.ParentID = "thread", in.Channel.CategoryID
	}
	out := &Export{Format: "discord", Channels: []record.Channel{ch}, GuildID: in.Guild.ID}
	seen := make(map[string]bool, len(in.Messages))
	for i, m := range in.Messages {
		if m.Type != "Default" && m.Type != "Reply" {
			out.skip("unsupported type " + m.Type)
			continue
		}
		if m.ID == "" {
			return nil, formatErr("message %d: id is required", i)
		}
		ts, err := time.Parse(time.RFC3339Nano, m.Timestamp)
		if err != nil || ts.IsZero() {
			return nil, formatErr("message %s: timestamp %q is not RFC 3339", m.ID, m.Timestamp)
		}
		if seen[m.ID] {
			out.skip(skipDuplicate) // the first one is kept
			continue
		}
		seen[m.ID] = true
		content := m.Content
		for _, a := range m.Attachments {
			content = strings.TrimSpace(content + "\n[attachment: " + a.FileName + "]")
		}
		if strings.TrimSpace(content) == "" {
			out.skip(skipEmpty)
			continue
		}
		if !utf8.ValidString(content) {
			return nil, formatErr("message %s: content is not valid UTF-8", m.ID)
		}
		msg := record.Message{
			SourceID: sourceID, ChannelID: ch.ID, ID: m.ID, Author: m.Author.Name, Content: content,
			Timestamp: ts.UTC(), URL: discordURL(in.Guild.ID, ch.ID, m.ID),
		}
		if m.Author.Nickname != m.Author.Name {
			msg.AuthorName = m.Author.Nickname
		}
		if m.TimestampEdited != nil {
			if t, err := time.Parse(time.RFC3339Nano, *m.TimestampEdited); err == nil {
				msg.EditedAt = t.UTC()
			}
		}
		if m.Type == "Reply" && m.Reference != nil {
			msg.ReplyTo = m.Reference.MessageID
		}
		out.Messages = append(out.Messages, msg)
	}
	return out, nil
}

// discordURL links to a channel or, with a message id, to a message.
func discordURL(guild, channel, message string) string {
	if guild == "" {
		return ""
	}
	u := "https://discord.com/channels/" + guild + "/" + channel
	if message != "" {
		u += "/" + message
	}
	return u
}

// Import stores an export: channels first, then messages.
// (A thread follows its channel's visibility in the engine, whichever was
// imported first.) It returns how many messages were new or changed;
// importing the same export again changes nothing.
func Import(e Importer, x *Export) (int, error) {
	c, err := importCounted(e, x)
	return c.New + c.Updated, err
}

// importCounted is Import, saying what became of each message.
func importCounted(e Importer, x *Export) (record.PutCounts, error) {
	if _, err := e.PutChannels(x.Channels); err != nil {
		return record.PutCounts{}, fmt.Errorf("import channels: %w", err)
	}
	c, err := e.PutMessagesCounted(x.Messages)
	if err != nil {
		return c, fmt.Errorf("import messages: %w", err)
	}
	return c, nil
}
