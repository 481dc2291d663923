package engine

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
	Cursor    string     // connector-defined crawl position, opaque to the engine
	LastCrawl *CrawlInfo // nil before the first crawl
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

// SourceStats counts what a source holds.
type SourceStats struct {
	Channels  int
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
	ID        string // derived from SourceID and Key, so re-uploads replace
	SourceID  string
	Key       string // identity within the source: URL, file name or title
	Title     string
	Slug      string // assigned by the engine on creation, unique, never changes
	URL       string // origin (web page, file) if any
	Format    string // text, markdown
	Content   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Document formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
)
