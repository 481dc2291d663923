package crawl

import (
	"archive/zip"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// Limits of a Slack export, decompressed: one JSON file, and everything
// read. Both are checked against the zip headers before a byte is
// inflated; archive/zip fails a stream that outgrows its header.
const (
	maxSlackFileBytes  = 50 << 20
	maxSlackTotalBytes = 1 << 30
	maxSlackName       = 256 // bytes of a user or channel name
)

// slackConv is an entry of channels.json, groups.json, dms.json or
// mpims.json, and a conversation of conversations.list.
type slackConv struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Members   []string  `json:"members"`
	Topic     slackText `json:"topic"`
	Purpose   slackText `json:"purpose"`
	IsPrivate bool      `json:"is_private"`
	IsGroup   bool      `json:"is_group"` // a private channel, in older answers
	IsIM      bool      `json:"is_im"`
	IsMPIM    bool      `json:"is_mpim"`
}

// private reports whether the conversation says it is a private channel, a
// DM or a group DM.
func (c *slackConv) private() bool { return c.IsPrivate || c.IsGroup || c.IsIM || c.IsMPIM }

type slackText struct {
	Value string `json:"value"`
}

type slackProfile struct {
	Name        string `json:"name"` // set in a message's user_profile only
	DisplayName string `json:"display_name"`
	RealName    string `json:"real_name"`
	BotID       string `json:"bot_id"` // set in users.json for a bot user
}

// slackUser is an entry of users.json or org_users.json.
type slackUser struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	RealName string       `json:"real_name"`
	Profile  slackProfile `json:"profile"`
}

// bound cuts a user's names to maxSlackName: names are short, and a long
// one would multiply through the mentions of it.
func (u *slackUser) bound() {
	u.Name, u.RealName = textcut.Prefix(u.Name, maxSlackName), textcut.Prefix(u.RealName, maxSlackName)
	u.Profile.DisplayName, u.Profile.RealName = textcut.Prefix(u.Profile.DisplayName, maxSlackName), textcut.Prefix(u.Profile.RealName, maxSlackName)
}

// slackMessage is a message of a per-day file, as the Web API returns it.
type slackMessage struct {
	Type     string `json:"type"`
	Subtype  string `json:"subtype"`
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts"`
	User     string `json:"user"`
	BotID    string `json:"bot_id"`
	Username string `json:"username"`
	Text     string `json:"text"`
	Edited   *struct {
		TS string `json:"ts"`
	} `json:"edited"`
	Files []struct {
		Name  string `json:"name"`
		Title string `json:"title"`
	} `json:"files"`
	Attachments []struct {
		Text     string `json:"text"`
		Fallback string `json:"fallback"`
	} `json:"attachments"`
	UserProfile *slackProfile `json:"user_profile"`
	BotProfile  *struct {
		Name string `json:"name"`
	} `json:"bot_profile"`
	// Of a file_comment (older exports): the comment, {user, comment},
	// and the file it is on. Read leniently: only file_comment's matter.
	Comment json.RawMessage `json:"comment"`
	File    json.RawMessage `json:"file"`
}

// slackComment is the comment of a file_comment message.
type slackComment struct {
	User    string `json:"user"`
	Comment string `json:"comment"`
}

// slackKept are the subtypes that carry what people wrote; joins, leaves,
// topic changes, pins and the like are skipped.
var slackKept = map[string]bool{
	"": true, "thread_broadcast": true, "reply_broadcast": true, "bot_message": true,
	"me_message": true, "file_share": true, "file_comment": true,
}

// slackConversationFiles list the conversations of an export, in the order
// their folders are claimed. dms.json names folders by id only. All but
// channels.json hold private conversations.
var slackConversationFiles = []string{"channels.json", "groups.json", "mpims.json", "dms.json"}

// ParseSlackExport reads a Slack workspace export zip: the conversations of
// channels.json (required), groups.json, mpims.json and dms.json, the users
// of users.json or org_users.json, and one folder of YYYY-MM-DD.json files
// per conversation. Thread replies go into a channel of their thread, of
// kind "thread". Conversations of groups.json, mpims.json and dms.json,
// those marked is_private, is_im or is_mpim, and their threads, are
// Private. The whole export is validated before it is returned; any
// problem is an ErrFormat naming the file. At most 50 MB of one JSON file
// and 1 GiB in all are inflated. The result is sorted: channels by name,
// messages by channel, then time.
func ParseSlackExport(r io.ReaderAt, size int64, sourceID string) (*Export, error) {
	z, err := openSlackZip(r, size)
	if err != nil {
		return nil, err
	}
	if z.files["channels.json"] == nil {
		return nil, formatErr("channels.json: missing from the Slack export")
	}
	p := &slackParser{source: sourceID, users: map[string]*slackUser{}, chanNames: map[string]string{}, unnamed: map[string]bool{},
		private: map[string]bool{}, seen: map[string]int{}, threads: map[string]*slackThread{},
		bots: map[string]string{}, botMsgs: map[int]string{}, skipped: &Export{}}
	for _, name := range []string{"users.json", "org_users.json"} {
		if err := p.readUsers(z, name); err != nil {
			return nil, err
		}
	}
	folders, err := p.readConversations(z)
	if err != nil {
		return nil, err
	}
	days, err := z.dayFiles(folders)
	if err != nil {
		return nil, err
	}
	for _, d := range days {
		var msgs []slackMessage
		if err := z.decode(d.name, &msgs); err != nil {
			return nil, err
		}
		for i := range msgs {
			if err := p.add(d.conv, &msgs[i], d.name, i); err != nil {
				return nil, err
			}
		}
	}
	return p.export()
}

// slackZip is an export's files, by path under the export's root folder.
type slackZip struct {
	files  map[string]*zip.File
	budget int64 // decompressed bytes left to read
}

func openSlackZip(r io.ReaderAt, size int64) (*slackZip, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // nothing is extracted
		return nil, formatErr("Slack export zip: %v", err)
	}
	// An export unpacked and zipped again holds one folder at its root.
	prefix, roots := "", 0
	for _, f := range zr.File {
		if name := zipName(f); name == "channels.json" {
			prefix, roots = "", 1
			break
		} else if dir, ok := strings.CutSuffix(name, "/channels.json"); ok && !strings.Contains(dir, "/") && dir != "__MACOSX" {
			prefix, roots = dir+"/", roots+1
		}
	}
	if roots > 1 {
		prefix = ""
	}
	z := &slackZip{files: map[string]*zip.File{}, budget: maxSlackTotalBytes}
	for _, f := range zr.File {
		name, ok := strings.CutPrefix(zipName(f), prefix)
		if !ok || name == "" || strings.HasPrefix(name, "__MACOSX/") || strings.HasSuffix(name, "/") {
			continue
		}
		if z.files[name] != nil {
			return nil, formatErr("%s: twice in the zip", name)
		}
		z.files[name] = f
	}
	return z, nil
}

// zipName is the path of an entry with forward slashes and no leading "./",
// as some zip tools write them.
func zipName(f *zip.File) string {
	return strings.TrimPrefix(strings.ReplaceAll(f.Name, `\`, "/"), "./")
}

// decode reads one JSON file of the export into v.
func (z *slackZip) decode(name string, v any) error {
	f := z.files[name]
	size := f.UncompressedSize64
	if size > maxSlackFileBytes {
		return formatErr("%s: %d MB decompressed, more than the %d MB a file may hold", name, size>>20, maxSlackFileBytes>>20)
	}
	if int64(size) > z.budget {
		return formatErr("%s: the export holds more than %d GiB decompressed", name, maxSlackTotalBytes>>30)
	}
	z.budget -= int64(size)
	rc, err := f.Open()
	if err != nil {
		return formatErr("%s: %v", name, err)
	}
	defer rc.Close()
	if err := decodeJSON(rc, v); err != nil {
		return formatErr("%s: %v", name, err)
	}
	return nil
}

type slackDay struct {
	name string // folder/YYYY-MM-DD.json
	conv string // channel id
}

// dayFiles returns the per-day files of the conversations' folders, in
// name order, after checking that they fit in what may still be inflated.
func (z *slackZip) dayFiles(folders map[string]string) ([]slackDay, error) {
	var days []slackDay
	for name := range z.files {
		dir, file := path.Split(name)
		conv, ok := folders[strings.TrimSuffix(dir, "/")]
		if ok && isDayFile(file) { // not canvases, integration logs, files
			days = append(days, slackDay{name, conv})
		}
	}
	slices.SortFunc(days, func(a, b slackDay) int { return strings.Compare(a.name, b.name) })
	var total uint64
	for _, d := range days {
		size := z.files[d.name].UncompressedSize64
		if size > maxSlackFileBytes {
			return nil, formatErr("%s: %d MB decompressed, more than the %d MB a file may hold", d.name, size>>20, maxSlackFileBytes>>20)
		}
		total += size
	}
	if total > uint64(z.budget) {
		return nil, formatErr("Slack export: %d MB of messages decompressed, more than the %d GiB an export may hold",
			total>>20, maxSlackTotalBytes>>30)
	}
	return days, nil
}

// isDayFile reports whether name is YYYY-MM-DD.json.
func isDayFile(name string) bool {
	date, ok := strings.CutSuffix(name, ".json")
	if !ok || len(date) != 10 {
		return false
	}
	_, err := time.Parse(time.DateOnly, date)
	return err == nil
}

// slackThread is the channel of a thread's replies.
type slackThread struct {
	id, parent, ts string
	replies        []int // indexes in slackParser.msgs
}

type slackParser struct {
	source    string
	users     map[string]*slackUser
	chanNames map[string]string // channel id → name, for <#C…> links; public conversations only
	unnamed   map[string]bool   // private conversations: links to them name none
	private   map[string]bool   // conversation id → private, for its threads
	channels  []record.Channel
	msgs      []record.Message
	seen      map[string]int // message id → index in msgs
	threads   map[string]*slackThread
	bots      map[string]string // bot id → name, from users.json and the messages that name it
	// botMsgs, of an export (nil for a crawl, which stores as it goes),
	// holds the bot messages that did not name their bot: index in msgs →
	// bot id, named by export.
	botMsgs map[int]string
	skipped *Export // counts the messages of an export left out; nil for a crawl
}

// skip counts a message left out of an export.
func (p *slackParser) skip(reason string) {
	if p.skipped != nil {
		p.skipped.skip(reason)
	}
}

func (p *slackParser) readUsers(z *slackZip, name string) error {
	if z.files[name] == nil {
		return nil
	}
	var users []slackUser
	if err := z.decode(name, &users); err != nil {
		return err
	}
	for i := range users {
		if u := &users[i]; u.ID != "" && p.users[u.ID] == nil {
			u.bound()
			p.users[u.ID] = u
			if bot := u.Profile.BotID; bot != "" && p.bots[bot] == "" {
				p.bots[bot] = cmp.Or(u.Profile.RealName, u.RealName, u.Name)
			}
		}
	}
	return nil
}

// readConversations turns the conversation files into channels and returns
// which channel each folder holds: channels by name or id, DMs by id.
func (p *slackParser) readConversations(z *slackZip) (map[string]string, error) {
	type conv struct {
		slackConv
		file string
	}
	var convs []conv
	ids := map[string]bool{}
	for _, file := range slackConversationFiles {
		if z.files[file] == nil {
			continue
		}
		var list []slackConv
		if err := z.decode(file, &list); err != nil {
			return nil, err
		}
		for i, c := range list {
			if err := checkID(c.ID, record.MaxIDBytes-32); err != nil {
				return nil, formatErr("%s: conversation %d: id %v", file, i, err)
			}
			if ids[c.ID] {
				return nil, formatErr("%s: conversation id %q appears twice", file, c.ID)
			}
			ids[c.ID] = true
			if file == "channels.json" && !c.private() {
				p.chanNames[c.ID] = textcut.Prefix(c.Name, maxSlackName)
			} else {
				p.unnamed[c.ID] = true
			}
			convs = append(convs, conv{c, file})
		}
	}
	folders := map[string]string{}
	for _, c := range convs {
		name := c.Name
		if c.file == "dms.json" || c.file == "mpims.json" {
			name = p.memberNames(c.Members, name)
		}
		topic := c.Topic.Value
		if topic == "" {
			topic = c.Purpose.Value
		}
		private := c.file != "channels.json" || c.private()
		p.private[c.ID] = private
		p.channels = append(p.channels, record.Channel{
			SourceID: p.source, ID: c.ID, Kind: "channel", Private: private,
			Name: visibleName(name, 200, c.ID), Topic: textcut.Prefix(p.render(topic), 4*record.MaxNameBytes),
		})
		keys := []string{c.ID}
		if c.file != "dms.json" && c.Name != "" && c.Name != c.ID {
			keys = append(keys, c.Name)
		}
		for _, k := range keys {
			if other, ok := folders[k]; ok {
				return nil, formatErr("%s: folder %q would hold both %s and %s", c.file, k, other, c.ID)
			}
			folders[k] = c.ID
		}
	}
	return folders, nil
}

// memberNames names a DM or group DM after its members.
func (p *slackParser) memberNames(members []string, fallback string) string {
	var names []string
	for _, id := range members[:min(len(members), 20)] {
		if u := p.users[id]; u != nil && u.Name != "" {
			names = append(names, u.Name)
		} else {
			names = append(names, textcut.Prefix(id, maxSlackName))
		}
	}
	if len(members) > 20 {
		names = append(names, fmt.Sprintf("and %d more", len(members)-20))
	}
	if len(names) == 0 {
		return fallback
	}
	return strings.Join(names, ", ")
}

// add validates one message of a day file and keeps it if it carries text.
func (p *slackParser) add(channel string, m *slackMessage, file string, i int) error {
	ts, ok := slackTime(m.TS)
	if !ok {
		return formatErr("%s: message %d: ts %q is not a Slack timestamp", file, i, m.TS)
	}
	if _, ok := slackTime(m.ThreadTS); !ok && m.ThreadTS != "" {
		return formatErr("%s: message %d: thread_ts %q is not a Slack timestamp", file, i, m.ThreadTS)
	}
	var edited time.Time
	if m.Edited != nil && m.Edited.TS != "" {
		if edited, ok = slackTime(m.Edited.TS); !ok {
			return formatErr("%s: message %d: edited.ts %q is not a Slack timestamp", file, i, m.Edited.TS)
		}
	}
	switch {
	case m.Type != "message" && m.Type != "":
		p.skip("unsupported type " + m.Type)
		return nil
	case !slackKept[m.Subtype]:
		p.skip("unsupported subtype " + m.Subtype)
		return nil
	}
	id := channel + "-" + m.TS
	if _, dup := p.seen[id]; dup {
		p.skip(skipDuplicate)
		return nil
	}
	text, commenter := m.Text, ""
	if m.Subtype == "file_comment" {
		var c slackComment
		if json.Unmarshal(m.Comment, &c) == nil && strings.TrimSpace(c.Comment) != "" {
			text, commenter = c.Comment, c.User
		}
		var f struct{ Name, Title string }
		if json.Unmarshal(m.File, &f) == nil && cmp.Or(f.Title, f.Name) != "" && text != m.Text {
			text += "\n[comment on file: " + cmp.Or(f.Title, f.Name) + "]"
		}
	}
	content := p.render(text)
	if strings.TrimSpace(content) == "" {
		for _, a := range m.Attachments {
			content += "\n" + p.render(cmp.Or(a.Text, a.Fallback))
		}
	}
	for _, f := range m.Files {
		if name := cmp.Or(f.Name, f.Title); name != "" {
			content = strings.TrimSpace(content) + "\n[file: " + name + "]"
		}
	}
	content = textcut.Prefix(strings.TrimSpace(content), record.MaxMessageBytes)
	if content == "" {
		p.skip(skipEmpty)
		return nil
	}
	msg := record.Message{SourceID: p.source, ChannelID: channel, ID: id, Content: content, Timestamp: ts, EditedAt: edited}
	if commenter != "" && m.User == "" {
		m.User = commenter
	}
	msg.Author, msg.AuthorName = p.author(m)
	if msg.Author == "" && m.BotID != "" {
		if p.botMsgs != nil {
			p.botMsgs[len(p.msgs)] = m.BotID // named once every message is read
		} else {
			msg.Author = "bot"
		}
	}
	if m.ThreadTS != "" && m.ThreadTS != m.TS {
		tid := channel + "-" + m.ThreadTS
		t := p.threads[tid]
		if t == nil {
			t = &slackThread{id: tid, parent: channel, ts: m.ThreadTS}
			p.threads[tid] = t
		}
		msg.ChannelID = tid
		t.replies = append(t.replies, len(p.msgs))
	}
	p.seen[id] = len(p.msgs)
	p.msgs = append(p.msgs, msg)
	return nil
}

// author returns the handle and, if it differs, the display name of a
// message's author. A bot's message (subtype bot_message, or any with a
// bot_id) is named by its username or bot profile, else by the users.json
// entry of its bot or user; failing those, it comes back without a name,
// for export to name it after another message of the same bot, and never
// after its raw id.
func (p *slackParser) author(m *slackMessage) (string, string) {
	if m.Subtype == "bot_message" || m.BotID != "" || m.User == "" {
		bot := ""
		if m.BotProfile != nil {
			bot = m.BotProfile.Name
		}
		name := textcut.Prefix(strings.TrimSpace(cmp.Or(m.Username, bot)), record.MaxNameBytes)
		if name != "" && m.BotID != "" && p.bots[m.BotID] == "" {
			if p.bots == nil {
				p.bots = map[string]string{}
			}
			p.bots[m.BotID] = name
		}
		if name == "" && m.BotID != "" {
			name = p.bots[m.BotID]
		}
		if name == "" && m.User != "" && p.users[m.User] != nil {
			name = p.users[m.User].Name
		}
		if name != "" || m.BotID != "" {
			return textcut.Prefix(name, record.MaxNameBytes), ""
		}
	}
	name, display := m.User, ""
	if u := p.users[m.User]; u != nil {
		name = cmp.Or(u.Name, m.User)
		display = cmp.Or(u.Profile.DisplayName, u.RealName, u.Profile.RealName)
	} else if pr := m.UserProfile; pr != nil {
		name = cmp.Or(pr.Name, m.User)
		display = cmp.Or(pr.DisplayName, pr.RealName)
	}
	if display == name {
		display = ""
	}
	return textcut.Prefix(name, record.MaxNameBytes), textcut.Prefix(display, record.MaxNameBytes)
}

// export adds the thread channels, links replies to their parents and
// sorts everything.
func (p *slackParser) export() (*Export, error) {
	for i, bot := range p.botMsgs {
		p.msgs[i].Author = cmp.Or(p.bots[bot], "bot")
	}
	convs := make(map[string]bool, len(p.channels))
	for _, c := range p.channels {
		convs[c.ID] = true
	}
	for _, t := range p.threads {
		if convs[t.id] {
			return nil, formatErr("Slack export: thread %s has the id of a conversation", t.id)
		}
		p.channels = append(p.channels, p.threadChannel(t))
	}
	x := sortExport(p.channels, p.msgs, strings.Compare)
	x.Format, x.Skipped = "slack", p.skipped.Skipped
	return x, nil
}

// threadChannel is the channel of a thread's replies, named after its
// parent message when that was read, else (the parent is older than the
// export, or was deleted) after its earliest reply, and links the replies
// to the parent. NameAuthor is whose words name it, so that an author who
// opted out names nothing.
func (p *slackParser) threadChannel(t *slackThread) record.Channel {
	// Not Private of its own: the engine makes a thread follow its
	// channel, stored with it, so an operator who opens a private
	// channel opens its threads too.
	ch := record.Channel{SourceID: p.source, ID: t.id, ParentID: t.parent, Kind: "thread"}
	fallback := "thread " + t.ts
	parentID := t.parent + "-" + t.ts
	if n, ok := p.seen[parentID]; ok && p.msgs[n].ChannelID == t.parent {
		ch.Name = visibleName(p.msgs[n].Content, 60, fallback)
		ch.NameAuthor = p.msgs[n].Author
		for _, r := range t.replies {
			p.msgs[r].ReplyTo = parentID
		}
	} else if len(t.replies) > 0 {
		first := &p.msgs[slices.MinFunc(t.replies, func(a, b int) int {
			ma, mb := &p.msgs[a], &p.msgs[b]
			return cmp.Or(ma.Timestamp.Compare(mb.Timestamp), strings.Compare(ma.ID, mb.ID))
		})]
		ch.Name = visibleName(first.Content, 60, fallback)
		ch.NameAuthor = first.Author
	} else {
		ch.Name = fallback
	}
	return ch
}

// sortExport orders channels by name, then id, and messages by their
// channel's place, then time, then tie of their ids. O(n log n).
func sortExport(chs []record.Channel, msgs []record.Message, tie func(a, b string) int) *Export {
	slices.SortFunc(chs, func(a, b record.Channel) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	rank := make(map[string]int, len(chs))
	for i, c := range chs {
		rank[c.ID] = i
	}
	type key struct {
		rank int
		ts   time.Time
		m    *record.Message
	}
	keys := make([]key, len(msgs))
	for i := range msgs {
		keys[i] = key{rank[msgs[i].ChannelID], msgs[i].Timestamp, &msgs[i]}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return tie(a.m.ID, b.m.ID)
	})
	out := make([]record.Message, len(msgs))
	for i, k := range keys {
		out[i] = *k.m
	}
	return &Export{Channels: chs, Messages: out}
}
