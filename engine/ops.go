package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sift-search/sift/internal/bin"
	"github.com/sift-search/sift/record"
)

// opKind is the type byte of a write-ahead log record.
type opKind uint8

const (
	opPutSourceV1     opKind = 1 // read only: a source before visibility
	opDeleteSource    opKind = 2
	opPutChannelsV1   opKind = 3 // read only: channels before visibility
	opPutMessages     opKind = 4
	opDeleteMessages  opKind = 5
	opPutDocumentsV1  opKind = 6 // read only: documents before languages
	opDeleteDocuments opKind = 7
	opPutSource       opKind = 8
	opPutChannels     opKind = 9
	opPutSettings     opKind = 10
	opPutCursor       opKind = 11
	opPutDocuments    opKind = 12 // documents with their declared language
	opPutInsights     opKind = 13 // rows of the insights table (insights.go)
)

// op is one logged mutation. Which fields are set depends on kind.
type op struct {
	kind     opKind
	source   record.Source     // opPutSource
	cursorOK bool              // opPutSource: source.Cursor is to be stored (else the stored cursor stays)
	cursor   string            // opPutCursor
	id       string            // opDeleteSource, opDeleteMessages, opPutCursor: the source id
	channels []record.Channel  // opPutChannels
	messages []record.Message  // opPutMessages (all of one source)
	ids      []string          // opDeleteMessages: message ids; opDeleteDocuments: document ids
	docs     []record.Document // opPutDocuments
	settings map[string]string // opPutSettings: the whole set
	insights []record.Insight  // opPutInsights
}

// encode appends the payload of o (its kind travels in the record header).
func (o *op) encode(e *bin.Enc) error {
	switch o.kind {
	case opPutSource:
		return encodeSourceRecord(e, &o.source, o.cursorOK)
	case opPutCursor:
		e.String(o.id)
		e.String(o.cursor)
	case opDeleteSource:
		e.String(o.id)
	case opPutChannels:
		e.Uvarint(uint64(len(o.channels)))
		for i := range o.channels {
			encodeChannel(e, &o.channels[i])
		}
	case opPutMessages:
		if len(o.messages) == 0 {
			return fmt.Errorf("BUG: empty message batch")
		}
		e.String(o.messages[0].SourceID)
		e.Uvarint(uint64(len(o.messages)))
		for i := range o.messages {
			encodeMessage(e, &o.messages[i])
		}
	case opDeleteMessages:
		e.String(o.id)
		encodeStrings(e, o.ids)
	case opPutDocuments:
		e.Uvarint(uint64(len(o.docs)))
		for i := range o.docs {
			encodeDocument(e, &o.docs[i])
		}
	case opDeleteDocuments:
		encodeStrings(e, o.ids)
	case opPutSettings:
		encodeStringMap(e, o.settings)
	case opPutInsights:
		e.Uvarint(uint64(len(o.insights)))
		for i := range o.insights {
			encodeInsight(e, &o.insights[i])
		}
	default:
		return fmt.Errorf("BUG: encode op kind %d", o.kind)
	}
	return nil
}

// decodeOp decodes a record payload; it never panics on any input.
func decodeOp(kind opKind, payload []byte) (op, error) {
	d := &bin.Dec{B: payload}
	o := op{kind: kind}
	switch kind {
	case opPutSource, opPutSourceV1:
		o.kind = opPutSource
		o.source, o.cursorOK = decodeSourceRecord(d, kind == opPutSource)
	case opPutCursor:
		o.id = d.String()
		o.cursor = d.String()
	case opDeleteSource:
		o.id = d.String()
	case opPutChannels, opPutChannelsV1:
		o.kind = opPutChannels
		o.channels = make([]record.Channel, d.Count(8))
		for i := range o.channels {
			o.channels[i] = decodeChannel(d, kind == opPutChannels)
		}
	case opPutMessages:
		src := d.String()
		o.messages = make([]record.Message, d.Count(8))
		for i := range o.messages {
			o.messages[i] = decodeMessage(d, src)
		}
	case opDeleteMessages:
		o.id = d.String()
		o.ids = decodeStrings(d)
	case opPutDocuments, opPutDocumentsV1:
		o.kind = opPutDocuments
		o.docs = make([]record.Document, d.Count(10))
		for i := range o.docs {
			o.docs[i] = decodeDocument(d, kind == opPutDocuments)
		}
	case opDeleteDocuments:
		o.ids = decodeStrings(d)
	case opPutSettings:
		o.settings = decodeStringMap(d)
	case opPutInsights:
		o.insights = make([]record.Insight, d.Count(7))
		for i := range o.insights {
			o.insights[i] = decodeInsight(d)
		}
	default:
		return op{}, fmt.Errorf("unknown record type %d", kind)
	}
	if err := d.Done(); err != nil {
		return op{}, fmt.Errorf("decode record type %d: %w", kind, err)
	}
	return o, nil
}

func encodeStrings(e *bin.Enc, ss []string) {
	e.Uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.String(s)
	}
}

func decodeStrings(d *bin.Dec) []string {
	ss := make([]string, d.Count(1))
	for i := range ss {
		ss[i] = d.String()
	}
	return ss
}

// encodeStringMap writes m in key order, so equal maps encode alike.
func encodeStringMap(e *bin.Enc, m map[string]string) {
	e.Uvarint(uint64(len(m)))
	for _, k := range sortedKeys(m) {
		e.String(k)
		e.String(m[k])
	}
}

func decodeStringMap(d *bin.Dec) map[string]string {
	n := d.Count(2)
	m := make(map[string]string, n)
	for range n {
		k := d.String()
		m[k] = d.String()
	}
	return m
}

// Times are microseconds since the epoch; 0 is the zero time.
func encodeTime(e *bin.Enc, t time.Time) { e.Varint(timeMicro(t)) }
func decodeTime(d *bin.Dec) time.Time    { return microTime(d.Varint()) }

// encodeSourceRecord writes s as the log and snapshots store it: the
// fields of encodeSource, then its version and whether its cursor field is
// the crawl cursor to store (see decodeSourceRecord).
func encodeSourceRecord(e *bin.Enc, s *record.Source, cursorOK bool) error {
	if err := encodeSource(e, s); err != nil {
		return err
	}
	e.Uvarint(s.Version)
	e.Bool(cursorOK)
	return nil
}

// encodeSource writes s up to its last import, as written before sources
// had versions.
func encodeSource(e *bin.Enc, s *record.Source) error {
	cfg, err := json.Marshal(s.Config)
	if err != nil {
		return fmt.Errorf("encode source config: %w", err)
	}
	e.String(s.ID)
	e.String(s.Name)
	e.String(s.Type)
	e.Bytes(cfg)
	e.String(s.Schedule)
	e.Bool(s.Enabled)
	encodeTime(e, s.CreatedAt)
	encodeTime(e, s.UpdatedAt)
	e.String(s.Cursor)
	e.Bool(s.LastCrawl != nil)
	if c := s.LastCrawl; c != nil {
		e.String(c.JobID)
		e.String(c.Status)
		encodeTime(e, c.StartedAt)
		encodeTime(e, c.FinishedAt)
		e.Uvarint(uint64(c.Channels))
		e.Uvarint(uint64(c.Messages))
		e.Uvarint(uint64(c.Documents))
		e.String(c.Error)
	}
	e.String(s.Visibility)
	encodeStringMap(e, s.ChannelVisibility)
	encodeStrings(e, s.ExcludedChannels)
	encodeStrings(e, s.OptOuts)
	e.Bool(s.LastImport != nil)
	if c := s.LastImport; c != nil {
		e.String(c.JobID)
		e.String(c.Status)
		encodeTime(e, c.StartedAt)
		encodeTime(e, c.FinishedAt)
		e.String(c.File)
		e.String(c.Format)
		for _, n := range []int{c.Channels, c.Messages, c.Stored, c.Updated, c.Unchanged} {
			e.Uvarint(uint64(n))
		}
		e.Uvarint(uint64(len(c.Skipped)))
		for _, k := range sortedKeys(c.Skipped) {
			e.String(k)
			e.Uvarint(uint64(c.Skipped[k]))
		}
		e.String(c.Error)
	}
	return nil
}

// decodeSource reads a source; ext says the record has the fields added
// with visibility (opPutSource, snapshots from version 3). The last import
// came later still, at the end of the same record: a source record is a
// whole payload (of its log record or snapshot frame), so one that ends
// after the opted-out usernames was written before and has none. The
// version and the cursor flag came last: a record without them has version
// 0 and its cursor field is the crawl cursor (cursorOK), as it was before
// cursors were records of their own; with them, the flag says whether the
// cursor field is to be stored or the stored cursor kept.
func decodeSourceRecord(d *bin.Dec, ext bool) (s record.Source, cursorOK bool) {
	cursorOK = true
	s.ID = d.String()
	s.Name = d.String()
	s.Type = d.String()
	if cfg := d.Bytes(); d.Err == nil {
		if err := json.Unmarshal(cfg, &s.Config); err != nil {
			d.Err = fmt.Errorf("source config: %w", err)
		}
	}
	s.Schedule = d.String()
	s.Enabled = d.Bool()
	s.CreatedAt = decodeTime(d)
	s.UpdatedAt = decodeTime(d)
	s.Cursor = d.String()
	if d.Bool() {
		c := &record.CrawlInfo{}
		c.JobID = d.String()
		c.Status = d.String()
		c.StartedAt = decodeTime(d)
		c.FinishedAt = decodeTime(d)
		c.Channels = int(d.Uvarint())
		c.Messages = int(d.Uvarint())
		c.Documents = int(d.Uvarint())
		c.Error = d.String()
		s.LastCrawl = c
	}
	if ext {
		s.Visibility = d.String()
		s.ChannelVisibility = decodeStringMap(d)
		s.ExcludedChannels = decodeStrings(d)
		s.OptOuts = decodeStrings(d)
		if d.Err == nil && d.Len() > 0 && d.Bool() {
			s.LastImport = decodeImportInfo(d)
		}
		if d.Err == nil && d.Len() > 0 {
			s.Version = d.Uvarint()
			cursorOK = d.Bool()
		}
	}
	if s.Visibility == "" {
		s.Visibility = record.VisibilityPublic
	}
	return s, cursorOK
}

// decodeSource is decodeSourceRecord without the cursor flag.
func decodeSource(d *bin.Dec, ext bool) record.Source {
	s, _ := decodeSourceRecord(d, ext)
	return s
}

func decodeImportInfo(d *bin.Dec) *record.ImportInfo {
	c := &record.ImportInfo{}
	c.JobID = d.String()
	c.Status = d.String()
	c.StartedAt = decodeTime(d)
	c.FinishedAt = decodeTime(d)
	c.File = d.String()
	c.Format = d.String()
	for _, n := range []*int{&c.Channels, &c.Messages, &c.Stored, &c.Updated, &c.Unchanged} {
		*n = int(d.Uvarint())
	}
	if n := d.Count(2); n > 0 {
		c.Skipped = make(map[string]int, n)
		for range n {
			k := d.String()
			c.Skipped[k] = int(d.Uvarint())
		}
	}
	c.Error = d.String()
	return c
}

func encodeChannel(e *bin.Enc, c *record.Channel) {
	e.String(c.SourceID)
	e.String(c.ID)
	e.String(c.Name)
	e.String(c.Slug)
	e.String(c.ParentID)
	e.String(c.Kind)
	e.String(c.Topic)
	e.String(c.URL)
	encodeTime(e, c.CreatedAt)
	e.Bool(c.Private)
}

// decodeChannel reads a channel; ext says the record has the private flag
// (opPutChannels, snapshots from version 3).
func decodeChannel(d *bin.Dec, ext bool) record.Channel {
	c := record.Channel{
		SourceID: d.String(), ID: d.String(), Name: d.String(), Slug: d.String(),
		ParentID: d.String(), Kind: d.String(), Topic: d.String(), URL: d.String(),
		CreatedAt: decodeTime(d),
	}
	if ext {
		c.Private = d.Bool()
	}
	return c
}

// encodeMessage leaves out SourceID, which the batch carries once.
func encodeMessage(e *bin.Enc, m *record.Message) {
	e.String(m.ChannelID)
	e.String(m.ID)
	e.String(m.Author)
	e.String(m.AuthorName)
	e.String(m.Content)
	encodeTime(e, m.Timestamp)
	encodeTime(e, m.EditedAt)
	e.String(m.ReplyTo)
	e.String(m.URL)
}

func decodeMessage(d *bin.Dec, source string) record.Message {
	return record.Message{
		SourceID: source, ChannelID: d.String(), ID: d.String(), Author: d.String(),
		AuthorName: d.String(), Content: d.String(), Timestamp: decodeTime(d),
		EditedAt: decodeTime(d), ReplyTo: d.String(), URL: d.String(),
	}
}

func encodeDocument(e *bin.Enc, doc *record.Document) {
	e.String(doc.ID)
	e.String(doc.SourceID)
	e.String(doc.Key)
	e.String(doc.Title)
	e.String(doc.Slug)
	e.String(doc.URL)
	e.String(doc.Format)
	e.String(doc.Content)
	encodeTime(e, doc.CreatedAt)
	encodeTime(e, doc.UpdatedAt)
	e.String(doc.Language)
}

// decodeDocument reads a document; withLang for the encodings that carry
// its language (opPutDocuments, snapshot version 5).
func decodeDocument(d *bin.Dec, withLang bool) record.Document {
	doc := record.Document{
		ID: d.String(), SourceID: d.String(), Key: d.String(), Title: d.String(),
		Slug: d.String(), URL: d.String(), Format: d.String(), Content: d.String(),
		CreatedAt: decodeTime(d), UpdatedAt: decodeTime(d),
	}
	if withLang {
		doc.Language = d.String()
	}
	return doc
}
