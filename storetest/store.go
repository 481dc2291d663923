package storetest

import (
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// Store is what the suite exercises: the store's reads and writes, with
// the engine's value types. *engine.Engine implements it.
type Store interface {
	// Sources. An empty store holds the built-in record.UploadsSourceID.
	PutSource(s record.Source) (record.Source, error)
	// CreateSource never replaces: a given id that exists is
	// record.ErrConflict; without an id, one is derived from the name
	// with record.Slugify and made unique with -2, -3… suffixes.
	CreateSource(s record.Source) (record.Source, error)
	// PutSourceIf replaces (or, at version 0, creates) a source only when
	// its stored Version is version, else record.ErrConflict; it leaves
	// the crawl cursor alone. Every write of a source adds one to Version.
	PutSourceIf(s record.Source, version uint64) (record.Source, error)
	// UpdateSource is read → fn → PutSourceIf, retried on a conflict: fn
	// may run more than once and must not write.
	UpdateSource(id string, fn func(*record.Source) error) (record.Source, error)
	// SetCursor and Cursor store and read a source's crawl cursor, a
	// record of its own that leaves the source's Version alone;
	// record.ErrNotFound without the source. Deleting a source deletes it.
	SetCursor(sourceID, cursor string) error
	Cursor(sourceID string) (string, error)
	DeleteSource(id string) error
	Source(id string) (record.Source, bool)
	Sources() []record.Source
	SourceStats(id string, private bool) record.SourceStats
	Counts(private bool) record.Counts

	// Channels.
	PutChannels(chs []record.Channel) ([]record.Channel, error)
	Channels(sourceID string, private bool) []record.Channel
	ChannelBySlug(slug string) (record.Channel, bool)
	ChannelByID(sourceID, id string) (record.Channel, bool)
	SourceChannels(sourceID string) (chans []record.ChannelInfo, excluded []string, err error)

	// Messages.
	PutMessages(msgs []record.Message) (int, error)
	PutMessagesCounted(msgs []record.Message) (record.PutCounts, error)
	DeleteMessages(sourceID string, ids []string) (int, error)
	ChannelMessages(slug string, offset, limit int) ([]record.Message, int, error)
	ChannelMessageIDs(slug string) ([]string, error)
	MessagePosition(slug, id string) (int, error)

	// Documents.
	PutDocuments(docs []record.Document) ([]record.Document, error)
	DeleteDocument(id string) error
	Document(id string) (record.Document, bool)
	DocumentBySlug(slug string) (record.Document, bool)
	Documents(offset, limit int, private bool) ([]record.Document, int)
	SourceDocuments(sourceID string) []record.Document

	// Full-text search.
	Search(req query.SearchRequest) (*query.SearchResult, error)
	// Suggest completes a query being typed. Word completions are the
	// store's own (a store may have none); titles match as
	// query.MatchTitle says, visibility respected.
	Suggest(req query.SuggestRequest) ([]query.Suggestion, error)

	// What an operator controls.
	SetChannelVisibility(sourceID, channelID, vis string) (record.ChannelInfo, error)
	ExcludeChannel(sourceID, channelID string) error
	RestoreChannel(sourceID, channelID string) error
	OptOut(sourceID, author string) (removed int, err error)
	OptIn(sourceID, author string) error
	Settings() map[string]string
	UpdateSettings(changes map[string]string) (map[string]string, error)
}

// Snapshotter is a Store that can write its whole state at once; the
// suite takes a snapshot in the middle of a history when a store has it.
type Snapshotter interface {
	Snapshot() error
}
