package engine

import "time"

// What another store needs to treat records as this one does: the same
// validation, copies, ids and time precision (docs/store.md).

// CheckSource validates a source as PutSource does and normalises it in
// place (its own config, crawl and import records, times to microseconds).
func CheckSource(s *Source) error { return checkSource(s) }

// CopySource returns a deep copy of s.
func CopySource(s *Source) Source { return copySource(s) }

// SourceIDBase is the id CreateSource derives from a name before making it
// unique with FirstFree.
func SourceIDBase(name string) string { return sourceIDBase(name) }

// FirstFree returns base, or else the first of base-2, base-3… that taken
// does not report.
func FirstFree(base string, taken func(string) bool) string { return firstFree(base, taken) }

// ExactTime cuts t to the microseconds the store keeps.
func ExactTime(t time.Time) time.Time { return exactTime(t) }

// CheckChannel validates a channel as PutChannels does before it looks at
// sources and slugs, and normalises it in place (name, kind).
func CheckChannel(c *Channel) error { return checkChannel(c) }

// CheckMessage validates a message as PutMessages does before it looks at
// channels, and normalises it in place (author names, times).
func CheckMessage(m *Message) error { return checkMessage(m) }

// CheckDocument validates a document as PutDocuments does before it looks
// at sources and slugs, and normalises it in place (source, key, format,
// id, times; UpdatedAt now when not given).
func CheckDocument(d *Document, now time.Time) error { return checkDocument(d, now) }

// LastOfEachID keeps, of documents with the same id, the last one.
func LastOfEachID(docs []Document) []Document { return lastOfEachID(docs) }

// SlugFor returns the slug of a new record as the memory store gives it:
// the slug of name (fallback when it has none) made unique by a numeric
// suffix among the slugs taken reports; a record hidden from callers
// without credentials when it is made (hiddenKey: ChannelSlugKey or the
// document's id; "" for a visible one) gets a suffix of its key first.
func SlugFor(name, fallback, hiddenKey string, taken func(string) bool) string {
	return slugFor(name, fallback, hiddenKey, taken)
}

// ChannelSlugKey is the key a hidden channel's slug suffix derives from.
func ChannelSlugKey(sourceID, channelID string) string { return sourceID + "\x00" + channelID }

// CleanName drops control characters from a name and trims it.
func CleanName(s string) string { return cleanName(s) }

// ChannelHiddenBy computes whether channel c of source src (nil when
// unknown) is hidden from callers without credentials, finding the
// channels it is a thread of with parent (nil when unknown).
func ChannelHiddenBy(src *Source, c *Channel, parent func(id string) *Channel) bool {
	return channelHiddenBy(src, c, parent)
}

// SameMessage reports whether storing b over a would change nothing.
func SameMessage(a, b *Message) bool {
	return a.Content == b.Content && a.Author == b.Author && a.AuthorName == b.AuthorName &&
		a.Timestamp.Equal(b.Timestamp) && a.EditedAt.Equal(b.EditedAt) && a.ReplyTo == b.ReplyTo &&
		a.URL == b.URL && a.ChannelID == b.ChannelID
}

// DerivedURL is the URL a message of channel c gets when it stores none.
func DerivedURL(c *Channel, id string) string { return derivedURL(c, id) }

// AnonymousThread names a thread whose name quoted an opted-out author.
const AnonymousThread = anonymousThread

// CheckSettings validates changes to the settings.
func CheckSettings(changes map[string]string) error { return checkSettings(changes) }

// ApplySettings returns cur with changes made (an empty value removes a
// setting); ErrInvalid when that holds too many.
func ApplySettings(cur, changes map[string]string) (map[string]string, error) {
	return applySettings(cur, changes)
}
