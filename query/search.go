package query

import (
	"time"

	"github.com/sift-search/sift/record"
)

// Bounds of SearchRequest paging.
const (
	MaxSearchLimit  = 100
	MaxSearchOffset = 10000
)

// SearchRequest is a full-text search. Filters given here apply together
// with those written in the query.
type SearchRequest struct {
	Query   string
	Limit   int // per list; 1..MaxSearchLimit
	Offset  int // 0..MaxSearchOffset
	Source  string
	Channel string // slug
	From    string // author name or display name, any case
	After   time.Time
	Before  time.Time
	// Private includes what callers without credentials may not see.
	Private bool
	// NoTypos turns typo tolerance off (typos=false): words match only as
	// written (and stemmed).
	NoTypos bool
	// Exhaustive ranks without pruning (index.Query.Exhaustive): the
	// reference for tests and benchmarks, never set by the API.
	Exhaustive bool
}

// MessageHit is a found message with its channel and source.
type MessageHit struct {
	record.Message
	ChannelName string
	ChannelSlug string
	SourceName  string
	SourceType  string
	Score       float64
	Highlight   Snippet // of the message's plain text (see mdtext), its matches marked
}

// DocumentHit is a found document.
type DocumentHit struct {
	record.Document
	Score     float64
	Highlight Snippet // of the plain text of the document's Markdown
}

// SearchResult holds both ranked lists and how many matched in all.
//
// A total is exact unless its AtLeast flag is set: a store that cannot
// count every match cheaply (the Weaviate store, for a ranked query whose
// candidates fill its window) gives the matches it read, a lower bound.
// The memory store's totals are always exact.
type SearchResult struct {
	Messages         []MessageHit
	Documents        []DocumentHit
	TotalMessages    int
	TotalDocuments   int
	MessagesAtLeast  bool // TotalMessages is a lower bound
	DocumentsAtLeast bool // TotalDocuments is a lower bound
	// Corrections name the query words found in no record the caller may
	// see, and the words their typo-tolerant matches were found as.
	Corrections []Correction
}

// TotalExact reports whether both totals are exact.
func (r *SearchResult) TotalExact() bool { return !r.MessagesAtLeast && !r.DocumentsAtLeast }

// Correction is a query word searched as the words it is one or two
// typos away from.
type Correction struct {
	Word    string   `json:"word"`    // as the query has it (folded)
	Matches []string `json:"matches"` // words of the index it was matched as, most frequent first
}
