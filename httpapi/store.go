package httpapi

import (
	"context"
	"io"
	"time"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/semantic"
)

// Store is what the server reads and writes: the engine, or a store that
// behaves as it does (engine/storetest states how). It is the four small
// interfaces below.
type Store interface {
	Catalog
	Content
	Searcher
	Instance
}

// Catalog is the sources and what operators decide about them.
type Catalog interface {
	Sources() []record.Source
	Source(id string) (record.Source, bool)
	PutSource(s record.Source) (record.Source, error)
	// CreateSource stores a new source: an id that exists is
	// record.ErrConflict; without an id, one is derived from the name and
	// made unique (acme-discord, then acme-discord-2…).
	CreateSource(s record.Source) (record.Source, error)
	UpdateSource(id string, fn func(*record.Source) error) (record.Source, error)
	SourceStats(id string, private bool) record.SourceStats
	SourceChannels(sourceID string) (chans []record.ChannelInfo, excluded []string, err error)
	SourceDocuments(sourceID string) []record.Document
	SetChannelVisibility(sourceID, channelID, vis string) (record.ChannelInfo, error)
	ExcludeChannel(sourceID, channelID string) error
	RestoreChannel(sourceID, channelID string) error
	OptOut(sourceID, author string) (removed int, err error)
	OptIn(sourceID, author string) error
}

// Content is the channels, messages and documents: read by slug for the
// pages and the reading API, written by uploads.
type Content interface {
	Channels(sourceID string, private bool) []record.Channel
	OrphanThreads(sourceID string, private bool) []record.Channel
	ChannelBySlug(slug string) (record.Channel, bool)
	ChannelByID(sourceID, id string) (record.Channel, bool)
	ChannelMessages(slug string, offset, limit int) ([]record.Message, int, error)
	ChannelWindow(slug string, q record.WindowQuery) (record.ChannelWindow, error)
	ChannelPageTimes(slug string, size int) ([]time.Time, error)
	MessagePosition(slug, id string) (int, error)
	Documents(offset, limit int, private bool) ([]record.Document, int)
	Document(id string) (record.Document, bool)
	DocumentBySlug(slug string) (record.Document, bool)
	PutChannels(chs []record.Channel) ([]record.Channel, error)
	PutMessages(msgs []record.Message) (int, error)
	PutDocuments(docs []record.Document) ([]record.Document, error)
	DeleteDocument(id string) error
}

// Searcher ranks messages and documents by words, and completes a query
// being typed.
type Searcher interface {
	Search(req query.SearchRequest) (*query.SearchResult, error)
	// Suggest completes the last word of a query (a store may have no
	// word completions) and matches the titles of channels and documents
	// (query.MatchTitle), among what the caller may see.
	Suggest(req query.SuggestRequest) ([]query.Suggestion, error)
}

// Instance is the state of the whole store, for health, metrics and the
// dashboard, the instance's settings, and backups.
type Instance interface {
	// Seq is the sequence number of the last applied write; it never waits.
	Seq() uint64
	Counts(private bool) record.Counts
	LogStatus() record.LogStatus
	LastSnapshot() *record.SnapshotInfo
	Backup(w io.Writer) (uint64, error)
	Settings() map[string]string
	UpdateSettings(changes map[string]string) (map[string]string, error)
}

// Semantic ranks passages by meaning (semantic.Index).
type Semantic interface {
	Search(ctx context.Context, req semantic.Request) (*semantic.Result, error)
	Status() semantic.Status
}

// Asker answers questions (POST /api/ask, the ask box, the MCP ask tool);
// ask.New makes one.
type Asker interface {
	// Admit reserves a place for one question without waiting, or refuses
	// it with ask.ErrBusy; release frees it.
	Admit() (release func(), err error)
	Ask(ctx context.Context, req ask.Request, sink ask.Sink) (ask.Usage, error)
	// Refused counts the questions Admit refused.
	Refused() int64
	// UsesModel reports whether answers come from a chat model (else the
	// extractive answerer).
	UsesModel() bool
}

// Insights records what people search and ask, and reports on it
// (insights.Recorder). Record must never wait.
type Insights interface {
	Record(ev insights.Event)
	Report(q insights.Query) insights.Report
	// RetentionDays is how many days it keeps: the longest window a
	// report covers.
	RetentionDays() int
}

// Crawler runs the crawls, imports and deletions of sources, one at a time
// per source; crawl.NewRunner makes one.
type Crawler interface {
	Crawl(sourceID string, full bool) (crawl.Result, error)
	Test(ctx context.Context, sourceID string) (crawl.TestResult, error)
	Import(sourceID string, f crawl.ImportFile) (crawl.ImportResult, error)
	// Delete removes a source with everything it produced, cancelling the
	// job running for it first.
	Delete(sourceID string) error
	// Running reports the job running for a source, if any.
	Running(sourceID string) (id, kind string, ok bool)
}
