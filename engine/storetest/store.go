package storetest

import "github.com/sift-search/sift/engine"

// Store is what the suite exercises: the store's reads and writes, with
// the engine's value types. *engine.Engine implements it.
type Store interface {
	// Sources. An empty store holds the built-in engine.UploadsSourceID.
	PutSource(s engine.Source) (engine.Source, error)
	// CreateSource never replaces: a given id that exists is
	// engine.ErrConflict; without an id, one is derived from the name
	// with engine.Slugify and made unique with -2, -3… suffixes.
	CreateSource(s engine.Source) (engine.Source, error)
	// PutSourceIf replaces (or, at version 0, creates) a source only when
	// its stored Version is version, else engine.ErrConflict; it leaves
	// the crawl cursor alone. Every write of a source adds one to Version.
	PutSourceIf(s engine.Source, version uint64) (engine.Source, error)
	// UpdateSource is read → fn → PutSourceIf, retried on a conflict: fn
	// may run more than once and must not write.
	UpdateSource(id string, fn func(*engine.Source) error) (engine.Source, error)
	// SetCursor and Cursor store and read a source's crawl cursor, a
	// record of its own that leaves the source's Version alone;
	// engine.ErrNotFound without the source. Deleting a source deletes it.
	SetCursor(sourceID, cursor string) error
	Cursor(sourceID string) (string, error)
	DeleteSource(id string) error
	Source(id string) (engine.Source, bool)
	Sources() []engine.Source
	SourceStats(id string, private bool) engine.SourceStats
	Counts(private bool) engine.Counts

	// Channels.
	PutChannels(chs []engine.Channel) ([]engine.Channel, error)
	Channels(sourceID string, private bool) []engine.Channel
	ChannelBySlug(slug string) (engine.Channel, bool)
	ChannelByID(sourceID, id string) (engine.Channel, bool)
	SourceChannels(sourceID string) (chans []engine.ChannelInfo, excluded []string, err error)

	// Messages.
	PutMessages(msgs []engine.Message) (int, error)
	PutMessagesCounted(msgs []engine.Message) (engine.PutCounts, error)
	DeleteMessages(sourceID string, ids []string) (int, error)
	ChannelMessages(slug string, offset, limit int) ([]engine.Message, int, error)
	ChannelMessageIDs(slug string) ([]string, error)
	MessagePosition(slug, id string) (int, error)

	// Documents.
	PutDocuments(docs []engine.Document) ([]engine.Document, error)
	DeleteDocument(id string) error
	Document(id string) (engine.Document, bool)
	DocumentBySlug(slug string) (engine.Document, bool)
	Documents(offset, limit int, private bool) ([]engine.Document, int)
	SourceDocuments(sourceID string) []engine.Document

	// Full-text search.
	Search(req engine.SearchRequest) (*engine.SearchResult, error)
	// Suggest completes a query being typed. Word completions are the
	// store's own (a store may have none); titles match as
	// engine.MatchTitle says, visibility respected.
	Suggest(req engine.SuggestRequest) ([]engine.Suggestion, error)

	// What an operator controls.
	SetChannelVisibility(sourceID, channelID, vis string) (engine.ChannelInfo, error)
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

var _ Store = (*engine.Engine)(nil)
