package crawl

import "github.com/sift-search/sift/engine"

// Sink is the store a Runner crawls and imports into: the records of the
// sources it reads and updates, and the channels, messages and documents
// it writes. The engine is one; a write is durable when it returns.
type Sink interface {
	Importer
	Sources() []engine.Source
	Source(id string) (engine.Source, bool)
	// UpdateSource applies fn to a copy of the source and stores it, unless
	// fn fails; engine.ErrNotFound when there is no such source. fn may run
	// more than once (after a concurrent write) and must not write.
	UpdateSource(id string, fn func(*engine.Source) error) (engine.Source, error)
	// Cursor and SetCursor read and store a source's crawl cursor, a small
	// record of its own; engine.ErrNotFound when there is no such source.
	Cursor(sourceID string) (string, error)
	SetCursor(sourceID, cursor string) error
	// DeleteSource removes a source with everything it produced.
	DeleteSource(id string) error
	// PutMessages stores messages and returns how many were new or changed.
	PutMessages(msgs []engine.Message) (int, error)
	// MessageIDs returns the ids of the messages of a source's channel, by
	// the channel's platform id; engine.ErrNotFound for an unknown channel.
	MessageIDs(sourceID, channelID string) ([]string, error)
	// DeleteMessages removes a source's messages by id and returns how many
	// there were.
	DeleteMessages(sourceID string, ids []string) (int, error)
	// PutDocuments stores documents; engine.ErrInvalid refuses the batch.
	PutDocuments(docs []engine.Document) ([]engine.Document, error)
	DeleteDocument(id string) error
}

// Importer is what Import writes an export to: channels, then messages,
// saying what became of each.
type Importer interface {
	PutChannels(chs []engine.Channel) ([]engine.Channel, error)
	PutMessagesCounted(msgs []engine.Message) (engine.PutCounts, error)
}
