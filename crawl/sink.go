package crawl

import "github.com/sift-search/sift/record"

// Sink is the store a Runner crawls and imports into: the records of the
// sources it reads and updates, and the channels, messages and documents
// it writes. The engine is one; a write is durable when it returns.
type Sink interface {
	Importer
	Sources() []record.Source
	Source(id string) (record.Source, bool)
	// UpdateSource applies fn to a copy of the source and stores it, unless
	// fn fails; record.ErrNotFound when there is no such source. fn may run
	// more than once (after a concurrent write) and must not write.
	UpdateSource(id string, fn func(*record.Source) error) (record.Source, error)
	// Cursor and SetCursor read and store a source's crawl cursor, a small
	// record of its own; record.ErrNotFound when there is no such source.
	Cursor(sourceID string) (string, error)
	SetCursor(sourceID, cursor string) error
	// DeleteSource removes a source with everything it produced.
	DeleteSource(id string) error
	// PutMessages stores messages and returns how many were new or changed.
	PutMessages(msgs []record.Message) (int, error)
	// MessageIDs returns the ids of the messages of a source's channel, by
	// the channel's platform id; record.ErrNotFound for an unknown channel.
	MessageIDs(sourceID, channelID string) ([]string, error)
	// DeleteMessages removes a source's messages by id and returns how many
	// there were.
	DeleteMessages(sourceID string, ids []string) (int, error)
	// PutDocuments stores documents; record.ErrInvalid refuses the batch.
	PutDocuments(docs []record.Document) ([]record.Document, error)
	DeleteDocument(id string) error
}

// Importer is what Import writes an export to: channels, then messages,
// saying what became of each.
type Importer interface {
	PutChannels(chs []record.Channel) ([]record.Channel, error)
	PutMessagesCounted(msgs []record.Message) (record.PutCounts, error)
}
