package record

// Insight is one row of the insights table: how often Text was searched
// (or asked, with Ask) on Day through Endpoint, by callers with or without
// credentials. The key is (Day, Endpoint, Ask, Authenticated, Text).
type Insight struct {
	Day           int32 // days since 1970-01-01, UTC
	Endpoint      uint8 // where the query came in; the insights package names the values
	Ask           bool  // a question; else a search
	Authenticated bool  // the caller had credentials
	// Text is the query or question as the insights package normalized
	// it; "" is the row of the day's totals of the rest of the key.
	Text       string
	Count      uint32 // 0 in PutInsights deletes the row
	NoResults  uint32 // of Count, searches that found nothing
	Unanswered uint32 // of Count, questions whose answer found no source
}

// Bounds of an insight row.
const (
	MaxInsightTextBytes = 1024
)
