package record

import "time"

// UploadsSourceID is the built-in source that holds uploaded documents.
const UploadsSourceID = "uploads"

// Source is a configured origin of content: a platform instance, a web site,
// or the uploads bucket.
type Source struct {
	ID        string
	Name      string
	Type      string         // discord, slack, discourse, github, web, upload, …
	Config    map[string]any // type-specific settings; secrets included (callers mask them)
	Schedule  string         // crawl interval such as "1h"; empty = manual
	Enabled   bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// Cursor is the source's crawl cursor, a record of its own (see
	// Engine.SetCursor): reads fill it in; PutSource stores it with the
	// source, UpdateSource when fn changes it, PutSourceIf never.
	Cursor     string      // connector-defined crawl position, opaque to the engine
	Version    uint64      // grows by one with every write of the source; see PutSourceIf
	LastCrawl  *CrawlInfo  // nil before the first crawl
	LastImport *ImportInfo // nil before the first import of an export file

	// What callers without credentials may see, and what an operator has
	// removed; see visibility.go. Logged with the source, so each change
	// is one write.
	Visibility        string            // VisibilityPublic or VisibilityPrivate
	ChannelVisibility map[string]string // channel id -> VisibilityPublic or VisibilityPrivate; absent = inherit
	ExcludedChannels  []string          // channel ids deleted by an operator: never stored again, nor their threads
	OptOuts           []string          // usernames whose messages are deleted and never stored again
}

// CrawlInfo describes the latest crawl of a source.
type CrawlInfo struct {
	JobID      string
	Status     string // running, ok, error
	StartedAt  time.Time
	FinishedAt time.Time
	Channels   int
	Messages   int
	Documents  int
	Error      string
}

// ImportInfo describes the latest import of an export file into a source.
type ImportInfo struct {
	JobID      string
	Status     string // running, ok, error
	StartedAt  time.Time
	FinishedAt time.Time
	File       string // the file's name as given, if any
	Format     string // discord, slack, telegram
	ImportCounts
	Error string
}

// ImportCounts are an import's figures. Every message of the file is
// counted once, once the import has read it: Messages = Stored + Updated +
// Unchanged + the Skipped counts.
type ImportCounts struct {
	Channels  int            // channels in the file
	Messages  int            // messages in the file
	Stored    int            // new
	Updated   int            // stored before, changed
	Unchanged int            // stored before, the same
	Skipped   map[string]int // messages left out, by reason: "empty message" → 3
}

// SkippedTotal is how many messages the import left out.
func (c *ImportCounts) SkippedTotal() int {
	n := 0
	for _, v := range c.Skipped {
		n += v
	}
	return n
}

// SourceStats counts what a source holds. Channels counts its
// conversations, Threads the threads in them (a Channel with a ParentID);
// Messages counts those of both.
type SourceStats struct {
	Channels  int
	Threads   int
	Messages  int
	Documents int
}

// Channel is a conversation of a source: a chat channel, a thread, a forum
// topic, an issue.
type Channel struct {
	SourceID  string
	ID        string // the platform's id, unique within the source
	Name      string
	Slug      string // assigned by the engine on creation, unique, never changes
	ParentID  string // for a thread, the id of its channel
	Kind      string // channel, thread, topic, issue, discussion
	Topic     string
	URL       string // the platform's link, if any
	CreatedAt time.Time
	// Private: the platform says it is a private conversation (a direct
	// message, a group DM, a private channel or chat). Callers without
	// credentials never see it unless an operator makes it public.
	Private bool

	// Hidden is derived on reads, never stored: whether callers without
	// credentials are kept from the channel (see visibility.go).
	Hidden bool
	// NameAuthor, given to writes and never stored, is whose words name
	// the channel (a thread named after its first message): when that
	// author opted out, the channel is stored as "Thread" instead.
	NameAuthor string
}

// Message is one chat message.
type Message struct {
	SourceID   string
	ChannelID  string // the platform id of its channel
	ID         string // the platform's id, unique within the source
	Author     string // username (handle)
	AuthorName string // display name, if it differs
	Content    string
	Timestamp  time.Time
	EditedAt   time.Time // zero when never edited
	ReplyTo    string    // id of the message this answers, if any
	URL        string    // the platform's permalink, if any
}

// Document is an uploaded file or a crawled page.
type Document struct {
	ID       string // derived from SourceID and Key, so re-uploads replace
	SourceID string
	Key      string // identity within the source: URL, file name or title
	Title    string
	Slug     string // assigned by the engine on creation, unique, never changes
	URL      string // origin (web page, file) if any
	Format   string // text, markdown
	// Language is the language the document declares (ISO 639-1: an HTML
	// page's lang, an upload's language field), "" when it declares none;
	// it is analysed in it when Sift stems that language, else detected.
	Language  string
	Content   string
	CreatedAt time.Time
	UpdatedAt time.Time

	// Hidden is derived on reads, never stored: whether callers without
	// credentials are kept from the document (its source is private).
	Hidden bool
}

// Document formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
)

// ChannelInfo is a channel as an operator sees it.
type ChannelInfo struct {
	Channel
	Visibility string // the operator's choice: public, private or inherit
	Messages   int
}

// Counts summarises what the engine holds: Channels counts conversations,
// Threads the threads in them.
type Counts struct {
	Sources, Channels, Threads, Messages, Documents int
	MessageTerms, DocumentTerms                     int
}
