package agent

import (
	"net/url"
	"strconv"
)

// Arguments and results of the tools. Optional numbers are pointers, so an
// absent value takes the HTTP API's default while an explicit one (even 0)
// is checked against its bounds. Field names follow the HTTP API's
// parameters, so its error messages name them.

// SearchArgs are the arguments of the search tool: GET /api/search.
type SearchArgs struct {
	Q       string `json:"q" jsonschema:"the query: words (all must match, stemmed, code identifiers split), \"quoted phrases\", -word to exclude"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"results per list (messages and documents each), 1 to 100, default 20"`
	Offset  *int   `json:"offset,omitempty" jsonschema:"results to skip in each list, for the next page, 0 to 10000"`
	Source  string `json:"source,omitempty" jsonschema:"only this source id (see list_sources)"`
	Channel string `json:"channel,omitempty" jsonschema:"only messages of this channel slug (see list_sources)"`
	From    string `json:"from,omitempty" jsonschema:"only messages by this author (username or display name)"`
	After   string `json:"after,omitempty" jsonschema:"only what is newer than this date or time, such as 2024-01-31 or 2024-01-31T15:04:05Z"`
	Before  string `json:"before,omitempty" jsonschema:"only what is older than this date or time"`
	Typos   *bool  `json:"typos,omitempty" jsonschema:"typo tolerance, default true: a word of 5 or more letters the index does not hold is also matched as the words one or two typos away; false matches words only as written"`
}

// Values are the query parameters of GET /api/search for a.
func (a SearchArgs) Values() url.Values {
	v := url.Values{}
	v.Set("q", a.Q)
	setInt(v, "limit", a.Limit)
	setInt(v, "offset", a.Offset)
	if a.Typos != nil && !*a.Typos {
		v.Set("typos", "false")
	}
	for name, s := range map[string]string{"source": a.Source, "channel": a.Channel, "from": a.From, "after": a.After, "before": a.Before} {
		if s != "" {
			v.Set(name, s)
		}
	}
	return v
}

// SearchResult is the answer of the search tool: the two ranked lists of
// GET /api/search, each hit cut to a snippet around the matches.
type SearchResult struct {
	Messages    []MessageHit  `json:"messages"`
	Documents   []DocumentHit `json:"documents"`
	Corrections []Correction  `json:"corrections,omitempty" jsonschema:"query words found only with typos, and the words they were matched as"`
}

// Correction is a query word the index does not hold, searched as the
// words it is one or two typos away from.
type Correction struct {
	Word    string   `json:"word"`
	Matches []string `json:"matches"`
}

// MessageHit is a chat message found by search.
type MessageHit struct {
	ID          string  `json:"id" jsonschema:"the message id, an anchor for read_channel's around"`
	Channel     string  `json:"channel" jsonschema:"channel name"`
	ChannelSlug string  `json:"channelSlug" jsonschema:"channel slug, for read_channel"`
	Source      string  `json:"source" jsonschema:"the platform (source) name"`
	Author      string  `json:"author"`
	Timestamp   string  `json:"timestamp"`
	Snippet     string  `json:"snippet" jsonschema:"the text around the matches, which are marked **like this**"`
	Score       float64 `json:"score"`
	URL         string  `json:"url" jsonschema:"link to cite: the message on its channel's page"`
}

// DocumentHit is a document found by search.
type DocumentHit struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Slug    string  `json:"slug" jsonschema:"for read_document"`
	Snippet string  `json:"snippet" jsonschema:"the text around the matches, which are marked **like this**"`
	Score   float64 `json:"score"`
	URL     string  `json:"url" jsonschema:"link to cite: the document's page"`
}

// SemanticArgs are the arguments of the semantic_search tool: GET
// /api/semantic-search.
type SemanticArgs struct {
	Q        string `json:"q" jsonschema:"what to look for, in plain words or as a question; no query syntax"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"results, 1 to 20, default 10"`
	MaxChars *int   `json:"max_chars,omitempty" jsonschema:"characters of content per result, 200 to 10000, default 2000"`
	Boost    string `json:"boost,omitempty" jsonschema:"comma-separated sourceId:multiplier pairs (multiplier 0.1 to 10, a bare id means 2) to favour or demote sources"`
	HyDE     *bool  `json:"hyde,omitempty" jsonschema:"expand the query with a hypothetical answer (default true); false embeds the query verbatim, faster and better for exact phrases or code identifiers"`
	Source   string `json:"source,omitempty" jsonschema:"only these sources: comma-separated source ids"`
}

// Values are the query parameters of GET /api/semantic-search for a.
func (a SemanticArgs) Values() url.Values {
	v := url.Values{}
	v.Set("q", a.Q)
	setInt(v, "limit", a.Limit)
	setInt(v, "max_chars", a.MaxChars)
	if a.Boost != "" {
		v.Set("boost", a.Boost)
	}
	if a.HyDE != nil && !*a.HyDE {
		v.Set("hyde", "0")
	}
	if a.Source != "" {
		v.Set("source", a.Source)
	}
	return v
}

// SemanticResult is the answer of the semantic_search tool.
type SemanticResult struct {
	Query   string        `json:"query"`
	Results []SemanticHit `json:"results"`
	Stale   bool          `json:"stale,omitempty" jsonschema:"true when the search ran before the index had taken in every write made before it: the latest content may be missing; search again shortly"`
}

// SemanticHit is a passage found by semantic search.
type SemanticHit struct {
	Type          string  `json:"type" jsonschema:"document (a section of a document) or message (a stretch of a conversation)"`
	Score         float64 `json:"score"`
	Title         string  `json:"title"`
	Source        string  `json:"source"`
	Content       string  `json:"content"`
	ContentLength int     `json:"contentLength" jsonschema:"characters of the whole passage"`
	Truncated     bool    `json:"truncated" jsonschema:"content was cut to max_chars"`
	URL           string  `json:"url" jsonschema:"link to cite; it locates the passage"`
}

// AskArgs are the arguments of the ask tool: POST /api/ask.
type AskArgs struct {
	Question string `json:"question" jsonschema:"the question, at most 4000 characters"`
	Messages []Turn `json:"messages,omitempty" jsonschema:"the conversation so far, oldest first (the answerer sees the last 20 turns)"`
}

// Turn is one turn of a conversation.
type Turn struct {
	Role    string `json:"role" jsonschema:"user or assistant"`
	Content string `json:"content" jsonschema:"at most 16000 characters"`
}

// AskResult is the answer of the ask tool.
type AskResult struct {
	Answer  string      `json:"answer" jsonschema:"the answer; [n] cites sources[n-1]"`
	Sources []AskSource `json:"sources"`
	Stale   bool        `json:"stale,omitempty" jsonschema:"true when the sources were retrieved before the index had taken in every write made before the question: the latest content may be missing; ask again shortly"`
}

// AskSource is a numbered source of an answer.
type AskSource struct {
	N        int     `json:"n" jsonschema:"the number the answer cites as [n]"`
	Type     string  `json:"type"`
	Score    float64 `json:"score"`
	Metadata string  `json:"metadata" jsonschema:"where it comes from: authors and channel, or title and source"`
	Preview  string  `json:"preview"`
	URL      string  `json:"url" jsonschema:"link to cite"`
}

// ReadDocumentArgs are the arguments of the read_document tool: GET
// /api/documents/{document}.
type ReadDocumentArgs struct {
	Document string `json:"document" jsonschema:"the document's id or slug (from search or semantic_search)"`
	Offset   *int   `json:"offset,omitempty" jsonschema:"first character to read, 0 to 1073741824, default 0; pass nextOffset to read on"`
	Length   *int   `json:"length,omitempty" jsonschema:"characters to read, 1 to 100000, default 20000"`
}

// Values are the query parameters of GET /api/documents/{document}.
func (a ReadDocumentArgs) Values() url.Values {
	v := url.Values{}
	setInt(v, "offset", a.Offset)
	setInt(v, "length", a.Length)
	return v
}

// DocumentWindow is a window of a document's content.
type DocumentWindow struct {
	ID          string `json:"id"`
	Slug        string `json:"slug"`
	Title       string `json:"title"`
	URL         string `json:"url" jsonschema:"link to cite: the document's page"`
	OriginURL   string `json:"originUrl,omitempty" jsonschema:"the web page or file it came from"`
	SourceID    string `json:"sourceId"`
	Source      string `json:"source"`
	UpdatedAt   string `json:"updatedAt"`
	Format      string `json:"format"`
	Content     string `json:"content"`
	Offset      int    `json:"offset"`
	Length      int    `json:"length"`
	TotalLength int    `json:"totalLength"`
	NextOffset  *int   `json:"nextOffset" jsonschema:"offset of the rest, null at the end"`
}

// ReadChannelArgs are the arguments of the read_channel tool: GET
// /api/channels/{channel}/messages.
type ReadChannelArgs struct {
	Channel string `json:"channel" jsonschema:"the channel's slug (channelSlug of a search hit, or from list_sources)"`
	Around  string `json:"around,omitempty" jsonschema:"a message id or a time (2024-01-31 or 2024-01-31T15:04:05Z): the messages centred on it"`
	Before  string `json:"before,omitempty" jsonschema:"a message id or a time: the messages just before it (page back)"`
	After   string `json:"after,omitempty" jsonschema:"a message id or a time: the messages just after it (page on)"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"messages, 1 to 200, default 50"`
}

// Values are the query parameters of GET /api/channels/{channel}/messages.
func (a ReadChannelArgs) Values() url.Values {
	v := url.Values{}
	for name, s := range map[string]string{"around": a.Around, "before": a.Before, "after": a.After} {
		if s != "" {
			v.Set(name, s)
		}
	}
	setInt(v, "limit", a.Limit)
	return v
}

// ChannelWindow is a stretch of a channel's messages in time order.
type ChannelWindow struct {
	Channel   ChannelRef      `json:"channel"`
	Messages  []WindowMessage `json:"messages"`
	HasBefore bool            `json:"hasBefore" jsonschema:"older messages exist: read on with before = the first message's id"`
	HasAfter  bool            `json:"hasAfter" jsonschema:"newer messages exist: read on with after = the last message's id"`
}

// ChannelRef describes a channel.
type ChannelRef struct {
	ID          string `json:"id"`
	Slug        string `json:"slug"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	SourceID    string `json:"sourceId"`
	Source      string `json:"source"`
	Kind        string `json:"kind,omitempty"`
	Topic       string `json:"topic,omitempty"`
	ParentSlug  string `json:"parentSlug,omitempty" jsonschema:"a thread's channel"`
	PlatformURL string `json:"platformUrl,omitempty"`
}

// WindowMessage is a message of a ChannelWindow.
type WindowMessage struct {
	ID          string `json:"id"`
	Author      string `json:"author"`
	AuthorName  string `json:"authorName,omitempty"`
	Content     string `json:"content"`
	Timestamp   string `json:"timestamp"`
	EditedAt    string `json:"editedAt,omitempty"`
	URL         string `json:"url" jsonschema:"link to cite: the message on its channel's page"`
	PlatformURL string `json:"platformUrl,omitempty"`
	ReplyTo     string `json:"replyTo,omitempty"`
	ThreadSlug  string `json:"threadSlug,omitempty" jsonschema:"the thread this message started: read it with read_channel"`
}

// ListSourcesArgs are the arguments of the list_sources tool.
type ListSourcesArgs struct {
	Source string `json:"source,omitempty" jsonschema:"only this source id"`
}

// SourceList is the answer of the list_sources tool.
type SourceList struct {
	Sources []SourceInfo `json:"sources"`
}

// SourceInfo is an indexed source with what the caller may see of it.
type SourceInfo struct {
	ID           string        `json:"id" jsonschema:"for search's source and semantic_search's source and boost"`
	Name         string        `json:"name"`
	Type         string        `json:"type" jsonschema:"discord, slack, discourse, github, web, upload, …"`
	Channels     int           `json:"channels"`
	Messages     int           `json:"messages"`
	Documents    int           `json:"documents"`
	URL          string        `json:"url"`
	ChannelList  []ChannelItem `json:"channelList,omitempty" jsonschema:"its channels (threads are reached from their messages), by name"`
	MoreChannels int           `json:"moreChannels,omitempty" jsonschema:"channels left out of channelList"`
}

// ChannelItem is a channel of a source.
type ChannelItem struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

// MaxListedChannels bounds the channels list_sources lists per source.
const MaxListedChannels = 200

func setInt(v url.Values, name string, n *int) {
	if n != nil {
		v.Set(name, strconv.Itoa(*n))
	}
}
