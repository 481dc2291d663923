package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
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
	maxMessagesPerOp   = 4096
	maxOpPayloadBytes  = 32 << 20
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

// checkText checks a field of caller text: valid UTF-8, within max bytes,
// and, when line is set, free of control characters.
func checkText(field, s string, maxBytes int, required, line bool) error {
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

// PutSource creates or replaces a source, its crawl cursor included.
// CreatedAt is kept for an existing source and set for a new one; UpdatedAt
// is set to now; Version becomes the stored one plus one.
func (e *Engine) PutSource(s Source) (Source, error) {
	if err := checkSource(&s); err != nil {
		return Source{}, err
	}
	e.writeMu.Lock()
	seq, err := e.commitSource(&s, true)
	e.writeMu.Unlock()
	if err != nil {
		return Source{}, err
	}
	return copySource(&s), e.sync(seq)
}

// PutSourceIf creates or replaces a source like PutSource, provided the
// stored source's Version is version (0 when no source has the id, so
// version 0 creates one only if there is none); otherwise it changes
// nothing and returns an error wrapping ErrConflict. It leaves the crawl
// cursor as stored, whatever s.Cursor says: the cursor is SetCursor's.
func (e *Engine) PutSourceIf(s Source, version uint64) (Source, error) {
	if err := checkSource(&s); err != nil {
		return Source{}, err
	}
	return e.putSourceIf(&s, version, false)
}

// putSourceIf is PutSourceIf for a checked s; setCursor stores s.Cursor
// too, in the same record.
func (e *Engine) putSourceIf(s *Source, version uint64, setCursor bool) (Source, error) {
	e.writeMu.Lock()
	var stored uint64
	if old, ok := e.st.sources[s.ID]; ok {
		stored = old.Version
	}
	if stored != version {
		e.writeMu.Unlock()
		return Source{}, fmt.Errorf("%w: source %q is at version %d, not %d", ErrConflict, s.ID, stored, version)
	}
	seq, err := e.commitSource(s, setCursor)
	e.writeMu.Unlock()
	if err != nil {
		return Source{}, err
	}
	return copySource(s), e.sync(seq)
}

// updateAttempts bounds UpdateSource's retries after a conflict.
const updateAttempts = 64

// UpdateSource changes a stored source: it reads the source, gives fn a
// copy and stores fn's changes unless fn fails, by PutSourceIf on the
// version it read, so a write to the source in between is never lost. On
// such a conflict it reads the source again and calls fn again, up to a
// bound, then returns an error wrapping ErrConflict: fn may run more than
// once, must not write to the store, and should keep its effects to the
// copy it is given. The crawl cursor is stored only when fn changes it.
// The id and creation time cannot change.
func (e *Engine) UpdateSource(id string, fn func(*Source) error) (Source, error) {
	var err error
	for attempt := range updateAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(rand.IntN(attempt*50)+1) * time.Microsecond)
		}
		old, ok := e.Source(id)
		if !ok {
			return Source{}, ErrNotFound
		}
		s := copySource(&old)
		if err := fn(&s); err != nil {
			return Source{}, err
		}
		s.ID = id
		if err := checkSource(&s); err != nil {
			return Source{}, err
		}
		var out Source
		out, err = e.putSourceIf(&s, old.Version, s.Cursor != old.Cursor)
		if !errors.Is(err, ErrConflict) {
			return out, err
		}
	}
	return Source{}, err
}

// commitSource stamps s and logs it; the caller holds writeMu. Without
// setCursor the stored cursor stays (and s.Cursor is set to it).
func (e *Engine) commitSource(s *Source, setCursor bool) (uint64, error) {
	now := exactTime(time.Now())
	// A new source's version is the sequence number of its first write:
	// higher than any version a source of the same id, deleted since,
	// ever had (a version never passes its last write's number), so a
	// compare-and-set read before the delete cannot land on the new one.
	s.Version = e.seq + 1
	old, ok := e.st.sources[s.ID]
	if ok {
		s.CreatedAt = old.CreatedAt
		s.Version = old.Version + 1
	} else if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if !setCursor {
		s.Cursor = ""
		if ok {
			s.Cursor = old.Cursor
		}
	}
	s.CreatedAt, s.UpdatedAt = exactTime(s.CreatedAt), now
	return e.commit(&op{kind: opPutSource, source: *s, cursorOK: setCursor})
}

// SetCursor stores the crawl cursor of a source, a record of its own: it
// leaves the source's record and Version alone. ErrNotFound when there is
// no such source; deleting the source deletes its cursor.
func (e *Engine) SetCursor(sourceID, cursor string) error {
	if len(cursor) > MaxCursorBytes {
		return invalidf("cursor is too long: %d bytes, at most %d", len(cursor), MaxCursorBytes)
	}
	e.writeMu.Lock()
	if _, ok := e.st.sources[sourceID]; !ok {
		e.writeMu.Unlock()
		return ErrNotFound
	}
	seq, err := e.commit(&op{kind: opPutCursor, id: sourceID, cursor: cursor})
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}

// Cursor returns the crawl cursor of a source, "" before the first;
// ErrNotFound when there is no such source.
func (e *Engine) Cursor(sourceID string) (string, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s, ok := e.st.sources[sourceID]
	if !ok {
		return "", ErrNotFound
	}
	return s.Cursor, nil
}

// MaxCursorBytes bounds a source's crawl cursor.
const MaxCursorBytes = 8 << 20

// checkSource validates s and gives it its own config and crawl record,
// normalised as the log stores them.
func checkSource(s *Source) error {
	if !ValidSourceID(s.ID) {
		return invalidf("id must be %s", sourceIDPattern)
	}
	if err := checkText("name", s.Name, MaxNameBytes, true, true); err != nil {
		return err
	}
	if err := checkText("type", s.Type, 64, true, true); err != nil {
		return err
	}
	if err := checkText("schedule", s.Schedule, 64, false, true); err != nil {
		return err
	}
	if len(s.Cursor) > MaxCursorBytes {
		return invalidf("cursor is too long: %d bytes, at most %d", len(s.Cursor), MaxCursorBytes)
	}
	cfg, err := cloneConfig(s.Config)
	if err != nil {
		return invalidf("config: %v", err)
	}
	s.Config = cfg
	if err := checkRules(s); err != nil {
		return err
	}
	if s.LastCrawl != nil {
		lc := *s.LastCrawl
		lc.StartedAt, lc.FinishedAt = exactTime(lc.StartedAt), exactTime(lc.FinishedAt)
		s.LastCrawl = &lc
	}
	if s.LastImport != nil {
		li := *s.LastImport
		li.StartedAt, li.FinishedAt = exactTime(li.StartedAt), exactTime(li.FinishedAt)
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

// exactTime is t as the log stores it — UTC, to the microsecond — so the
// live state and a replay of the log never differ.
func exactTime(t time.Time) time.Time { return microTime(timeMicro(t)) }

// cloneConfig deep-copies a source's config through JSON, which is also how
// the log stores it, so numbers are float64 live as after a replay.
func cloneConfig(c map[string]any) (map[string]any, error) {
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

// DeleteSource removes a source and every channel, message and document
// that came from it.
func (e *Engine) DeleteSource(id string) error {
	if id == UploadsSourceID {
		return invalidf("the built-in %q source cannot be deleted", UploadsSourceID)
	}
	e.writeMu.Lock()
	if _, ok := e.st.sources[id]; !ok {
		e.writeMu.Unlock()
		return ErrNotFound
	}
	seq, err := e.commit(&op{kind: opDeleteSource, id: id})
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}

// PutChannels creates or updates channels and returns them with their slugs.
// An existing channel keeps its slug; a new one gets a unique slug of its name.
func (e *Engine) PutChannels(chs []Channel) ([]Channel, error) { return e.putChannels(chs, false) }

// putChannels is PutChannels; with keepSlugs, a new channel keeps the Slug
// it carries when that is a valid slug no other channel holds.
func (e *Engine) putChannels(chs []Channel, keepSlugs bool) ([]Channel, error) {
	out := make([]Channel, len(chs))
	copy(out, chs)
	for i := range out {
		if err := checkChannel(&out[i]); err != nil {
			return nil, err
		}
	}
	e.writeMu.Lock()
	taken := map[string]uint32{}
	for i := range out {
		c := &out[i]
		if _, ok := e.st.sources[c.SourceID]; !ok {
			e.writeMu.Unlock()
			return nil, invalidf("channel %q: unknown source %q", c.ID, c.SourceID)
		}
		if e.st.optedOut(c.SourceID, c.NameAuthor) {
			c.Name = anonymousThread
		}
		c.NameAuthor = ""
		if n, ok := e.st.chanKey[recKey{c.SourceID, c.ID}]; ok {
			c.Slug, c.CreatedAt = e.st.chans[n].Slug, e.st.chans[n].CreatedAt
			continue
		}
		if used := slugsIn(e.st.chanSlug, taken); !keepSlugs || !ValidSlug(c.Slug) || used(c.Slug) {
			c.Slug = slugFor(c.Name, "channel", e.st.newChannelSlugKey(c, out), used)
		}
		taken[c.Slug] = 0
		if c.CreatedAt.IsZero() {
			c.CreatedAt = time.Now()
		}
		c.CreatedAt = exactTime(c.CreatedAt)
	}
	seq, err := e.commit(&op{kind: opPutChannels, channels: out})
	e.writeMu.Unlock()
	if err != nil {
		return nil, err
	}
	return out, e.sync(seq)
}

// checkChannel validates a channel as PutChannels does, before it looks
// at sources and slugs, and normalises it in place.
func checkChannel(c *Channel) error {
	c.Name = cleanName(c.Name)
	if err := checkText("channel id", c.ID, MaxIDBytes, true, true); err != nil {
		return err
	}
	if err := checkText("channel name", c.Name, MaxNameBytes, true, true); err != nil {
		return err
	}
	if err := checkText("channel topic", c.Topic, MaxNameBytes*4, false, false); err != nil {
		return err
	}
	if c.Kind == "" {
		c.Kind = "channel"
	}
	return nil
}

// cleanName drops control characters (IRC colour codes, stray newlines)
// from a display name and trims it.
func cleanName(s string) string {
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

// PutMessages creates or updates messages; each names a source and one of
// its channels. Messages identical to the stored ones are skipped, so a
// repeated import writes nothing. It returns how many were new or changed.
// Author names lose control characters; times are kept to the microsecond.
func (e *Engine) PutMessages(msgs []Message) (int, error) {
	c, err := e.PutMessagesCounted(msgs)
	return c.New + c.Updated, err
}

// PutCounts says what PutMessagesCounted did with each message.
type PutCounts struct {
	New       int // stored, not there before
	Updated   int // replaced a stored message that differed
	Unchanged int // the same as the stored one: nothing written
	KeptOut   int // not stored: its channel is excluded or its author opted out
}

// PutMessagesCounted is PutMessages, counting what became of each message
// written; on an error, the counts are those of what was written before it.
func (e *Engine) PutMessagesCounted(msgs []Message) (PutCounts, error) {
	var counts PutCounts
	msgs = slices.Clone(msgs)
	for i := range msgs {
		if err := checkMessage(&msgs[i]); err != nil {
			return counts, err
		}
	}
	e.mu.RLock()
	for i := range msgs {
		if _, ok := e.st.chanKey[recKey{msgs[i].SourceID, msgs[i].ChannelID}]; !ok && !e.st.skipsMessage(&msgs[i]) {
			e.mu.RUnlock()
			return counts, invalidf("message %q: unknown channel %q of source %q", msgs[i].ID, msgs[i].ChannelID, msgs[i].SourceID)
		}
	}
	e.mu.RUnlock()

	lastSeq := uint64(0)
	for start := 0; start < len(msgs); {
		e.writeMu.Lock()
		batch := make([]Message, 0, min(len(msgs)-start, maxMessagesPerOp))
		var step PutCounts
		bytes := 0
		for ; start < len(msgs) && len(batch) < maxMessagesPerOp && bytes < maxOpPayloadBytes; start++ {
			m := msgs[start]
			if len(batch) > 0 && m.SourceID != batch[0].SourceID {
				break // one source per record
			}
			old, found := e.st.findMessage(m.SourceID, m.ID)
			switch {
			case e.st.skipsMessage(&m):
				step.KeptOut++ // an operator keeps it out
				continue
			case found && e.st.sameMessage(old, &m):
				step.Unchanged++
				continue
			case found:
				step.Updated++
			default:
				step.New++
			}
			batch = append(batch, m)
			bytes += len(m.Content) + len(m.ID) + len(m.ChannelID) + len(m.Author) + len(m.AuthorName) + len(m.ReplyTo) + len(m.URL) + 64
		}
		if len(batch) > 0 {
			seq, err := e.commit(&op{kind: opPutMessages, messages: batch})
			if err != nil {
				e.writeMu.Unlock()
				return counts, err
			}
			lastSeq = seq
		}
		counts.New, counts.Updated = counts.New+step.New, counts.Updated+step.Updated
		counts.Unchanged, counts.KeptOut = counts.Unchanged+step.Unchanged, counts.KeptOut+step.KeptOut
		e.writeMu.Unlock()
	}
	return counts, e.sync(lastSeq)
}

// checkMessage validates a message as PutMessages does, before it looks
// at channels, and normalises it in place.
func checkMessage(m *Message) error {
	m.Author, m.AuthorName = cleanName(m.Author), cleanName(m.AuthorName)
	m.Timestamp, m.EditedAt = exactTime(m.Timestamp), exactTime(m.EditedAt)
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
		if err := checkText(f.name, f.val, f.max, f.required, f.line); err != nil {
			return err
		}
	}
	if m.Timestamp.IsZero() {
		return invalidf("message %q: timestamp is required", m.ID)
	}
	return nil
}

// DeleteMessages deletes messages of a source by id; unknown ids are
// ignored. It returns how many were deleted.
func (e *Engine) DeleteMessages(sourceID string, ids []string) (int, error) {
	e.writeMu.Lock()
	n := len(e.st.messageSlots(sourceID, ids))
	if n == 0 {
		e.writeMu.Unlock()
		return 0, nil
	}
	seq, err := e.commit(&op{kind: opDeleteMessages, id: sourceID, ids: ids})
	e.writeMu.Unlock()
	if err != nil {
		return 0, err
	}
	return n, e.sync(seq)
}

// DocumentID derives a document's id from its source and key, so uploading
// the same file or crawling the same page again replaces the document.
func DocumentID(sourceID, key string) string {
	h := sha256.Sum256([]byte(sourceID + "\x00" + key))
	return documentIDPrefix + hex.EncodeToString(h[:documentIDHexBytes])
}

// PutDocuments creates or replaces documents and returns them as stored.
// SourceID defaults to the uploads source; Key defaults to the URL, else the
// title; the id derives from both. A replaced document keeps its slug.
func (e *Engine) PutDocuments(docs []Document) ([]Document, error) {
	return e.putDocuments(docs, false)
}

// putDocuments is PutDocuments; with keepSlugs, a new document keeps the
// Slug it carries when that is a valid slug no other document holds.
func (e *Engine) putDocuments(docs []Document, keepSlugs bool) ([]Document, error) {
	out := make([]Document, len(docs))
	copy(out, docs)
	now := time.Now()
	for i := range out {
		if err := checkDocument(&out[i], now); err != nil {
			return nil, err
		}
	}
	out = lastOfEachID(out)
	var lastSeq uint64
	for start := 0; start < len(out); {
		e.writeMu.Lock()
		taken := map[string]uint32{}
		end, bytes := start, 0
		for ; end < len(out) && (end == start || bytes+len(out[end].Content) < maxOpPayloadBytes); end++ {
			d := &out[end]
			bytes += len(d.Content) + len(d.Title) + 256
			if _, ok := e.st.sources[d.SourceID]; !ok {
				e.writeMu.Unlock()
				return nil, invalidf("document %q: unknown source %q", d.Title, d.SourceID)
			}
			if n, ok := e.st.docID[d.ID]; ok {
				d.Slug, d.CreatedAt = e.st.docs[n].Slug, e.st.docs[n].CreatedAt
				continue
			}
			if used := slugsIn(e.st.docSlug, taken); !keepSlugs || !ValidSlug(d.Slug) || used(d.Slug) {
				d.Slug = slugFor(d.Title, "doc", e.st.newDocumentSlugKey(d), used)
			}
			taken[d.Slug] = 0
			if d.CreatedAt.IsZero() {
				d.CreatedAt = d.UpdatedAt
			}
		}
		seq, err := e.commit(&op{kind: opPutDocuments, docs: out[start:end]})
		e.writeMu.Unlock()
		if err != nil {
			return nil, err
		}
		lastSeq, start = seq, end
	}
	return out, e.sync(lastSeq)
}

// checkDocument validates a document as PutDocuments does, before it
// looks at sources and slugs, and normalises it in place: its source, key,
// format and id, its times (UpdatedAt now when not given).
func checkDocument(d *Document, now time.Time) error {
	d.Title = strings.Join(strings.Fields(d.Title), " ") // titles are one line
	if err := checkText("title", d.Title, MaxNameBytes, false, true); err != nil {
		return err
	}
	if err := checkText("content", d.Content, MaxDocumentBytes, false, false); err != nil {
		return err
	}
	if err := checkText("url", d.URL, maxURLBytes, false, true); err != nil {
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
	d.CreatedAt, d.UpdatedAt = exactTime(d.CreatedAt), exactTime(d.UpdatedAt)
	return nil
}

// lastOfEachID keeps, of documents with the same id, the last one: a batch
// naming one document twice stores it once.
func lastOfEachID(docs []Document) []Document {
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

// DeleteDocument deletes a document by id.
func (e *Engine) DeleteDocument(id string) error {
	e.writeMu.Lock()
	if _, ok := e.st.docID[id]; !ok {
		e.writeMu.Unlock()
		return ErrNotFound
	}
	seq, err := e.commit(&op{kind: opDeleteDocuments, ids: []string{id}})
	e.writeMu.Unlock()
	if err != nil {
		return err
	}
	return e.sync(seq)
}
