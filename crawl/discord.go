package crawl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// The Discord connector reads a guild through the REST API v10
// (CONNECTORS.md §1): its text and announcement channels, forum posts and
// threads (active and archived public), and their messages, newest pages
// first on a full crawl and `after` the last message seen on an
// incremental one. A channel @everyone may not view, and its threads, and
// private threads, are Private.

const discordAPI = "https://discord.com/api/v10"

// discordMessagesPerCall is the API's page size limit; maxDiscordPages
// bounds one channel's crawl (10 million messages).
const (
	discordMessagesPerCall = 100
	maxDiscordPages        = 100_000
)

type discord struct {
	api      *apiClient
	guild    string
	channels map[string]bool // only these (and their threads), when set
}

func newDiscord(src record.Source, env Env) (Connector, error) {
	token, _ := src.Config["token"].(string)
	if token == "" {
		return nil, invalidConfig("config.token is needed to crawl a discord source (a bot token; without one the source takes imports only)")
	}
	guild, _ := src.Config["guildId"].(string)
	base, _ := src.Config["apiBase"].(string)
	return &discord{
		api:      newAPIClient(cmp.Or(base, discordAPI), "Bot "+token, "DiscordBot (https://github.com/sift-search/sift, 1) "+env.UserAgent, allowPrivate(src), env),
		guild:    guild,
		channels: configSet(src.Config, "channelIds"),
	}, nil
}

type discordUser struct {
	ID         string  `json:"id"`
	Username   string  `json:"username"`
	GlobalName *string `json:"global_name"`
	Bot        bool    `json:"bot"`
}

type discordChannel struct {
	ID         string  `json:"id"`
	Type       int     `json:"type"`
	Name       string  `json:"name"`
	Topic      *string `json:"topic"`
	ParentID   *string `json:"parent_id"`
	Position   int     `json:"position"`
	Overwrites []struct {
		ID    string `json:"id"`
		Type  int    `json:"type"` // 0 role, 1 member
		Allow string `json:"allow"`
		Deny  string `json:"deny"`
	} `json:"permission_overwrites"`
	Thread *struct {
		ArchiveTimestamp string `json:"archive_timestamp"`
	} `json:"thread_metadata"`
}

// everyone returns the allow and deny bitfields of the channel's overwrite
// for @everyone, the role whose id is the guild's; ok is false without one.
func (c *discordChannel) everyone(guild string) (allow, deny string, ok bool) {
	for _, o := range c.Overwrites {
		if o.Type == 0 && o.ID == guild {
			return o.Allow, o.Deny, true
		}
	}
	return "", "", false
}

type discordMessage struct {
	ID              string      `json:"id"`
	ChannelID       string      `json:"channel_id"`
	Type            int         `json:"type"`
	Content         string      `json:"content"`
	Timestamp       string      `json:"timestamp"`
	EditedTimestamp *string     `json:"edited_timestamp"`
	Author          discordUser `json:"author"`
	Reference       *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
	Attachments []struct {
		Filename string `json:"filename"`
	} `json:"attachments"`
	Embeds []struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"embeds"`
}

// Channel types (CONNECTORS.md §1.3).
const (
	dcText         = 0
	dcCategory     = 4
	dcAnnouncement = 5
	dcAnnThread    = 10
	dcPublicThread = 11
	dcPrivThread   = 12
	dcForum        = 15
	dcMedia        = 16
)

// Test asks who the bot is and whether it sees the guild's channels.
func (d *discord) Test(ctx context.Context) (string, error) {
	var me discordUser
	if err := d.api.get(ctx, "/users/@me", nil, &me); err != nil {
		return "", err
	}
	var chans []discordChannel
	if err := d.api.get(ctx, "/guilds/"+d.guild+"/channels", nil, &chans); err != nil {
		return "", err
	}
	n := 0
	for _, c := range chans {
		if readable(c.Type) {
			n++
		}
	}
	return fmt.Sprintf("connected as %s; guild %s has %d readable channels", me.Username, d.guild, n), nil
}

func readable(t int) bool { return t == dcText || t == dcAnnouncement }

// discordCursor is the newest message id seen per channel or thread.
type discordCursor struct {
	Last map[string]string `json:"last"`
}

// Crawl reads every readable channel and thread of the guild.
func (d *discord) Crawl(ctx context.Context, cursorText string, full bool, emit func(Batch) error) (string, error) {
	cur := discordCursor{Last: map[string]string{}}
	if cursorText != "" && json.Unmarshal([]byte(cursorText), &cur) != nil || cur.Last == nil {
		cur.Last = map[string]string{}
	}
	save := func() string { return encodeCursor(cur) }
	chans, err := d.listChannels(ctx)
	if err != nil {
		return "", err
	}
	if err := emit(Batch{Channels: chans}); err != nil {
		return "", err
	}
	var empty, total int
	for _, ch := range chans {
		after := cur.Last[ch.ID]
		if full {
			after = ""
		}
		seen, newest, blank, err := d.crawlChannel(ctx, ch.ID, after, emit)
		empty, total = empty+blank, total+seen
		if err != nil {
			if ctx.Err() != nil {
				return save(), err
			}
			if isAuthError(err) || isNotFound(err) {
				// A channel the bot may not read, or one deleted since the
				// listing: skipped, the crawl goes on.
				emit(Batch{Failed: []string{fmt.Sprintf("#%s (%s): %v", ch.Name, ch.ID, err)}})
				continue
			}
			return save(), err
		}
		if newest != "" && snowflakeLess(cur.Last[ch.ID], newest) {
			cur.Last[ch.ID] = newest
		}
		// Every message came back with its text: what is stored and was not
		// seen is gone upstream. (Blank messages — no Message Content
		// intent — prove nothing.)
		if full && blank == 0 {
			if err := emit(Batch{CompleteChannels: []string{ch.ID}}); err != nil {
				return save(), err
			}
		}
	}
	if total >= 20 && empty*2 > total {
		emit(Batch{Failed: []string{fmt.Sprintf("%d of %d messages came without text: the bot's Message Content intent is probably disabled (Developer Portal → Bot → Privileged Gateway Intents)", empty, total)}})
	}
	return save(), nil
}

// listChannels returns the guild's readable channels and its threads
// (active, and archived public ones of each text, announcement and forum
// channel), restricted to channelIds when set, each Private as
// privateChannels says.
func (d *discord) listChannels(ctx context.Context) ([]record.Channel, error) {
	var all []discordChannel
	if err := d.api.get(ctx, "/guilds/"+d.guild+"/channels", nil, &all); err != nil {
		return nil, err
	}
	base, err := d.everyonePermissions(ctx)
	if err != nil {
		return nil, err
	}
	private := privateChannels(d.guild, base, all)
	var active struct {
		Threads []discordChannel `json:"threads"`
	}
	if err := d.api.get(ctx, "/guilds/"+d.guild+"/threads/active", nil, &active); err != nil && !isAuthError(err) {
		return nil, err
	}
	want := func(id string, parent *string) bool {
		return d.channels == nil || d.channels[id] || parent != nil && d.channels[*parent]
	}
	var out []record.Channel
	stored := map[string]bool{}
	threads := active.Threads
	for _, c := range all {
		switch {
		case !snowflake.MatchString(c.ID):
			continue
		case readable(c.Type) && want(c.ID, nil):
			ch := record.Channel{ID: c.ID, Name: visibleName(c.Name, 200, "channel "+c.ID), Kind: "channel", URL: discordURL(d.guild, c.ID, ""),
				Private: private[c.ID]}
			if c.Topic != nil {
				ch.Topic = *c.Topic
			}
			out = append(out, ch)
			stored[c.ID] = true
		case (c.Type == dcForum || c.Type == dcMedia) && want(c.ID, nil):
		default:
			continue
		}
		archived, err := d.archivedThreads(ctx, c.ID)
		if err != nil && !isAuthError(err) {
			return nil, err
		}
		threads = append(threads, archived...)
	}
	seen := map[string]bool{}
	for _, t := range threads {
		if seen[t.ID] || !snowflake.MatchString(t.ID) || t.Type != dcPublicThread && t.Type != dcAnnThread && t.Type != dcPrivThread || !want(t.ID, t.ParentID) {
			continue
		}
		seen[t.ID] = true
		ch := record.Channel{ID: t.ID, Name: visibleName(t.Name, 200, "thread "+t.ID), Kind: "thread", URL: discordURL(d.guild, t.ID, "")}
		if t.ParentID != nil && snowflake.MatchString(*t.ParentID) {
			ch.ParentID = *t.ParentID
		}
		// A private thread is. Another follows its channel: the engine
		// makes it follow a stored one (so an operator who opens the
		// channel opens its threads); one of a channel not stored (a
		// forum's post) carries the channel's flag, private if unknown.
		parent, known := private[ch.ParentID]
		ch.Private = t.Type == dcPrivThread || !stored[ch.ParentID] && (parent || !known)
		out = append(out, ch)
	}
	return out, nil
}

// Permission bits (discord-api-docs topics/permissions.mdx).
const (
	permAdministrator = 3  // 1<<3: every permission, overwrites ignored
	permViewChannel   = 10 // 1<<10: VIEW_CHANNEL
)

// hasPerm reports whether a permission bitfield, a decimal string, has a bit
// set; a bitfield that is not a number has none.
func hasPerm(bits string, bit int) bool {
	n, ok := new(big.Int).SetString(bits, 10)
	return ok && n.Sign() >= 0 && n.Bit(bit) == 1
}

// everyonePermissions returns the permissions bitfield of the guild's
// @everyone role (GET /guilds/{id}/roles, the role whose id is the
// guild's), or "" when the bot may not list the roles or the role is
// missing: then channels are judged by their overwrites alone.
func (d *discord) everyonePermissions(ctx context.Context) (string, error) {
	var roles []struct {
		ID          string `json:"id"`
		Permissions string `json:"permissions"`
	}
	if err := d.api.get(ctx, "/guilds/"+d.guild+"/roles", nil, &roles); err != nil {
		if isAuthError(err) || isNotFound(err) {
			return "", nil
		}
		return "", err
	}
	for _, r := range roles {
		if r.ID == d.guild {
			return r.Permissions, nil
		}
	}
	return "", nil
}

// privateChannels tells, for every channel of the guild, whether @everyone
// may not view it: base is the @everyone role's permissions ("" = unknown,
// taken as viewing), then the channel's overwrite for @everyone applies,
// deny before allow, or else its category's. An @everyone with
// Administrator views everything.
func privateChannels(guild, base string, all []discordChannel) map[string]bool {
	categories := map[string]*discordChannel{}
	for i := range all {
		if all[i].Type == dcCategory {
			categories[all[i].ID] = &all[i]
		}
	}
	admin := hasPerm(base, permAdministrator)
	out := make(map[string]bool, len(all))
	for i := range all {
		c := &all[i]
		view := base == "" || hasPerm(base, permViewChannel)
		allow, deny, ok := c.everyone(guild)
		if cat := categories[deref(c.ParentID)]; !ok && cat != nil {
			allow, deny, ok = cat.everyone(guild)
		}
		if ok && hasPerm(deny, permViewChannel) {
			view = false
		}
		if ok && hasPerm(allow, permViewChannel) {
			view = true
		}
		out[c.ID] = !view && !admin
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// archivedThreads pages through a channel's archived public threads.
func (d *discord) archivedThreads(ctx context.Context, channel string) ([]discordChannel, error) {
	var out []discordChannel
	before := ""
	for page := 0; page < 1000; page++ {
		q := url.Values{"limit": {"100"}}
		if before != "" {
			q.Set("before", before)
		}
		var res struct {
			Threads []discordChannel `json:"threads"`
			HasMore bool             `json:"has_more"`
		}
		if err := d.api.get(ctx, "/channels/"+channel+"/threads/archived/public", q, &res); err != nil {
			return out, err
		}
		out = append(out, res.Threads...)
		if !res.HasMore || len(res.Threads) == 0 {
			break
		}
		last := res.Threads[len(res.Threads)-1]
		if last.Thread == nil || last.Thread.ArchiveTimestamp == "" {
			break
		}
		t, err := time.Parse(time.RFC3339Nano, last.Thread.ArchiveTimestamp)
		if err != nil {
			break
		}
		next := t.UTC().Format("2006-01-02T15:04:05.000Z")
		if next == before {
			break
		}
		before = next
	}
	return out, nil
}

// crawlChannel reads a channel's messages: those after the given id, or,
// with none, all of them from the newest back. It returns how many it saw,
// the newest id, and how many came without any text.
func (d *discord) crawlChannel(ctx context.Context, channel, after string, emit func(Batch) error) (seen int, newest string, blank int, err error) {
	path := "/channels/" + channel + "/messages"
	before := ""
	for pages := 0; ; pages++ {
		if pages == maxDiscordPages {
			return seen, newest, blank, fmt.Errorf("channel %s: more than %d pages of messages", channel, maxDiscordPages)
		}
		q := url.Values{"limit": {strconv.Itoa(discordMessagesPerCall)}}
		switch {
		case after != "":
			q.Set("after", after)
		case before != "":
			q.Set("before", before)
		}
		var page []discordMessage
		if err := d.api.get(ctx, path, q, &page); err != nil {
			return seen, newest, blank, err
		}
		if len(page) == 0 {
			return seen, newest, blank, nil
		}
		// Pages come newest first, after= included.
		slices.SortFunc(page, func(a, b discordMessage) int { return snowflakeCmp(a.ID, b.ID) })
		var msgs []record.Message
		for i := range page {
			m := &page[i]
			if snowflakeLess(newest, m.ID) {
				newest = m.ID
			}
			msg, ok, empty := d.message(channel, m)
			if empty {
				blank++
			}
			if ok {
				msgs = append(msgs, msg)
			}
		}
		seen += len(page)
		if len(msgs) > 0 {
			if err := emit(Batch{Messages: msgs}); err != nil {
				return seen, newest, blank, err
			}
		}
		if after != "" {
			next := page[len(page)-1].ID // the newest of this page
			if !snowflakeLess(after, next) {
				return seen, newest, blank, fmt.Errorf("channel %s: %w (after=%s)", channel, errCursorStuck, after)
			}
			after = next
		} else {
			if len(page) < discordMessagesPerCall {
				return seen, newest, blank, nil
			}
			next := page[0].ID // the oldest of this page
			if before != "" && !snowflakeLess(next, before) {
				return seen, newest, blank, fmt.Errorf("channel %s: %w (before=%s)", channel, errCursorStuck, before)
			}
			before = next
		}
	}
}

// message maps a Discord message; system messages (joins, pins, thread
// creations…) are not kept. empty reports a user message with no text at
// all, the sign of a missing Message Content intent.
func (d *discord) message(channel string, m *discordMessage) (msg record.Message, ok, empty bool) {
	switch m.Type {
	case 0, 19, 20, 23: // DEFAULT, REPLY, CHAT_INPUT_COMMAND, CONTEXT_MENU_COMMAND
	default:
		return msg, false, false
	}
	if !snowflake.MatchString(m.ID) {
		return msg, false, false
	}
	ts, err := time.Parse(time.RFC3339Nano, m.Timestamp)
	if err != nil {
		return msg, false, false
	}
	content := m.Content
	for _, e := range m.Embeds {
		if content == "" {
			content = strings.TrimSpace(e.Title + "\n" + e.Description)
		}
	}
	for _, a := range m.Attachments {
		content = strings.TrimSpace(content + "\n[attachment: " + a.Filename + "]")
	}
	if strings.TrimSpace(content) == "" {
		return msg, false, !m.Author.Bot
	}
	msg = record.Message{
		ChannelID: channel, ID: m.ID, Author: m.Author.Username, Content: textcut.Prefix(content, record.MaxMessageBytes),
		Timestamp: ts.UTC(), URL: discordURL(d.guild, channel, m.ID),
	}
	if m.Author.GlobalName != nil && *m.Author.GlobalName != m.Author.Username {
		msg.AuthorName = *m.Author.GlobalName
	}
	if m.EditedTimestamp != nil {
		if t, err := time.Parse(time.RFC3339Nano, *m.EditedTimestamp); err == nil {
			msg.EditedAt = t.UTC()
		}
	}
	if m.Reference != nil && m.Type == 19 && snowflake.MatchString(m.Reference.MessageID) {
		msg.ReplyTo = m.Reference.MessageID
	}
	return msg, true, false
}

// snowflakeCmp orders Discord ids numerically ("" first).
func snowflakeCmp(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func snowflakeLess(a, b string) bool { return snowflakeCmp(a, b) < 0 }
