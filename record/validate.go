package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on what a write may carry.
const (
	MaxIDBytes         = 256
	MaxNameBytes       = 1024
	MaxMessageBytes    = 1 << 20
	MaxDocumentBytes   = 32 << 20
	maxURLBytes        = 4096
	sourceIDPattern    = "1 to 64 characters of a-z, 0-9, '-', '_' and '.'"
	maxSourceIDBytes   = 64
	documentIDPrefix   = "d_"
	documentIDHexBytes = 8
)

// ValidSourceID reports whether id may name a source.
func ValidSourceID(id string) bool {
	if id == "" || len(id) > maxSourceIDBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// CheckText checks a field of caller text: valid UTF-8, within max bytes,
// and, when line is set, free of control characters.
func CheckText(field, s string, maxBytes int, required, line bool) error {
	if required && strings.TrimSpace(s) == "" {
		return invalidf("%s is required", field)
	}
	if len(s) > maxBytes {
		return invalidf("%s is too long: %d bytes, at most %d", field, len(s), maxBytes)
	}
	if !utf8.ValidString(s) {
		return invalidf("%s is not valid UTF-8", field)
	}
	if line && strings.ContainsFunc(s, unicode.IsControl) {
		return invalidf("%s contains control characters", field)
	}
	return nil
}

// MaxCursorBytes bounds a source's crawl cursor.
const MaxCursorBytes = 8 << 20

// CheckSource validates s and gives it its own config and crawl record,
// normalised as the log stores them.
func CheckSource(s *Source) error {
	if !ValidSourceID(s.ID) {
		return invalidf("id must be %s", sourceIDPattern)
	}
	if err := CheckText("name", s.Name, MaxNameBytes, true, true); err != nil {
		return err
	}
	if err := CheckText("type", s.Type, 64, true, true); err != nil {
		return err
	}
	if err := CheckText("schedule", s.Schedule, 64, false, true); err != nil {
		return err
	}
	if len(s.Cursor) > MaxCursorBytes {
		return invalidf("cursor is too long: %d bytes, at most %d", len(s.Cursor), MaxCursorBytes)
	}
	cfg, err := CloneConfig(s.Config)
	if err != nil {
		return invalidf("config: %v", err)
	}
	s.Config = cfg
	if err := checkRules(s); err != nil {
		return err
	}
	if s.LastCrawl != nil {
		lc := *s.LastCrawl
		lc.StartedAt, lc.FinishedAt = ExactTime(lc.StartedAt), ExactTime(lc.FinishedAt)
		s.LastCrawl = &lc
	}
	if s.LastImport != nil {
		li := *s.LastImport
		li.StartedAt, li.FinishedAt = ExactTime(li.StartedAt), ExactTime(li.FinishedAt)
		li.Skipped = maps.Clone(li.Skipped)
		for k, n := range li.Skipped {
			if n <= 0 {
				delete(li.Skipped, k)
			}
		}
		if len(li.Skipped) == 0 {
			li.Skipped = nil
		}
		s.LastImport = &li
	}
	return nil
}

// ExactTime is t as the log stores it — UTC, to the microsecond — so the
// live state and a replay of the log never differ.
func ExactTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMicro(t.UnixMicro()).UTC()
}

// CloneConfig deep-copies a source's config through JSON, which is also how
// the log stores it, so numbers are float64 live as after a replay.
func CloneConfig(c map[string]any) (map[string]any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// CheckChannel validates a channel as PutChannels does, before it looks
// at sources and slugs, and normalises it in place.
func CheckChannel(c *Channel) error {
	c.Name = CleanName(c.Name)
	if err := CheckText("channel id", c.ID, MaxIDBytes, true, true); err != nil {
		return err
	}
	if err := CheckText("channel name", c.Name, MaxNameBytes, true, true); err != nil {
		return err
	}
	if err := CheckText("channel topic", c.Topic, MaxNameBytes*4, false, false); err != nil {
		return err
	}
	if c.Kind == "" {
		c.Kind = "channel"
	}
	return nil
}

// CleanName drops control characters (IRC colour codes, stray newlines)
// from a display name and trims it.
func CleanName(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s))
}

// PutCounts says what PutMessagesCounted did with each message.
type PutCounts struct {
	New       int // stored, not there before
	Updated   int // replaced a stored message that differed
	Unchanged int // the same as the stored one: nothing written
	KeptOut   int // not stored: its channel is excluded or its author opted out
}

// CheckMessage validates a message as PutMessages does, before it looks
// at channels, and normalises it in place.
func CheckMessage(m *Message) error {
	m.Author, m.AuthorName = CleanName(m.Author), CleanName(m.AuthorName)
	m.Timestamp, m.EditedAt = ExactTime(m.Timestamp), ExactTime(m.EditedAt)
	for _, f := range []struct {
		name, val      string
		max            int
		required, line bool
	}{
		{"message id", m.ID, MaxIDBytes, true, true},
		{"message channel id", m.ChannelID, MaxIDBytes, true, true},
		{"message content", m.Content, MaxMessageBytes, false, false},
		{"message author", m.Author, MaxNameBytes, false, true},
		{"message author name", m.AuthorName, MaxNameBytes, false, true},
		{"message reply id", m.ReplyTo, MaxIDBytes, false, true},
		{"message url", m.URL, maxURLBytes, false, true},
	} {
		if err := CheckText(f.name, f.val, f.max, f.required, f.line); err != nil {
			return err
		}
	}
	if m.Timestamp.IsZero() {
		return invalidf("message %q: timestamp is required", m.ID)
	}
	return nil
}

// DocumentID derives a document's id from its source and key, so uploading
// the same file or crawling the same page again replaces the document.
func DocumentID(sourceID, key string) string {
	h := sha256.Sum256([]byte(sourceID + "\x00" + key))
	return documentIDPrefix + hex.EncodeToString(h[:documentIDHexBytes])
}

// CheckDocument validates a document as PutDocuments does, before it
// looks at sources and slugs, and normalises it in place: its source, key,
// format and id, its times (UpdatedAt now when not given).
func CheckDocument(d *Document, now time.Time) error {
	d.Title = strings.Join(strings.Fields(d.Title), " ") // titles are one line
	if err := CheckText("title", d.Title, MaxNameBytes, false, true); err != nil {
		return err
	}
	if err := CheckText("content", d.Content, MaxDocumentBytes, false, false); err != nil {
		return err
	}
	if err := CheckText("url", d.URL, maxURLBytes, false, true); err != nil {
		return err
	}
	if d.SourceID == "" {
		d.SourceID = UploadsSourceID
	}
	if d.Key == "" {
		d.Key = d.URL
	}
	if d.Key == "" {
		d.Key = d.Title
	}
	if d.Key == "" {
		return invalidf("a document needs a title, a url or a key")
	}
	if d.Format == "" {
		d.Format = FormatText
	}
	lang, ok := NormLanguage(d.Language)
	if !ok {
		return invalidf("language %q: give a language code such as de or pt-BR", d.Language)
	}
	d.Language = lang
	d.ID = DocumentID(d.SourceID, d.Key)
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = now
	}
	d.CreatedAt, d.UpdatedAt = ExactTime(d.CreatedAt), ExactTime(d.UpdatedAt)
	return nil
}

// LastOfEachID keeps, of documents with the same id, the last one: a batch
// naming one document twice stores it once.
func LastOfEachID(docs []Document) []Document {
	last := make(map[string]int, len(docs))
	for i := range docs {
		last[docs[i].ID] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := docs[:0]
	for i, d := range docs {
		if last[d.ID] == i {
			out = append(out, d)
		}
	}
	return out
}

// CopySource returns s with its own copy of everything it points to, so a
// caller may change it freely.
func CopySource(s *Source) Source {
	c := *s
	c.Config, _ = CloneConfig(s.Config) // it came through CloneConfig once: it encodes
	c.ChannelVisibility = maps.Clone(s.ChannelVisibility)
	c.ExcludedChannels = slices.Clone(s.ExcludedChannels)
	c.OptOuts = slices.Clone(s.OptOuts)
	if s.LastCrawl != nil {
		lc := *s.LastCrawl
		c.LastCrawl = &lc
	}
	if s.LastImport != nil {
		li := *s.LastImport
		li.Skipped = maps.Clone(s.LastImport.Skipped)
		c.LastImport = &li
	}
	return c
}

// DerivedURL is the URL a message of channel c gets when it stores none.
func DerivedURL(c *Channel, id string) string {
	if c.URL == "" {
		return ""
	}
	return c.URL + "/" + id
}

// NormLanguage reduces a language tag (de, de-DE, pt_BR, EN) to its
// primary subtag in lower case; ok is false for what is no language tag.
func NormLanguage(tag string) (lang string, ok bool) {
	tag = strings.TrimSpace(tag)
	if tag == "" {
		return "", true
	}
	primary, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	if len(primary) < 2 || len(primary) > 3 || len(tag) > 35 {
		return "", false
	}
	for i := 0; i < len(primary); i++ {
		if c := primary[i] | 0x20; c < 'a' || c > 'z' {
			return "", false
		}
	}
	return strings.ToLower(primary), true
}

// ChannelSlugKey is the key a hidden channel's slug suffix derives from.
func ChannelSlugKey(sourceID, channelID string) string { return sourceID + "\x00" + channelID }

// SameMessage reports whether storing b over a would change nothing.
func SameMessage(a, b *Message) bool {
	return a.Content == b.Content && a.Author == b.Author && a.AuthorName == b.AuthorName &&
		a.Timestamp.Equal(b.Timestamp) && a.EditedAt.Equal(b.EditedAt) && a.ReplyTo == b.ReplyTo &&
		a.URL == b.URL && a.ChannelID == b.ChannelID
}
