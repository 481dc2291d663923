package httpapi

import (
	"context"
	"time"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/semantic"
)

// The backend functions answer a typed, checked request for a caller: the
// JSON handlers call them after parsing the request (search.go,
// semantic.go, ask.go, sse.go, reading.go), the MCP tools with the request
// built from their arguments (mcp.go), and the pages with the request of
// their search and ask boxes (pages_home.go). Their errors map to HTTP status in
// respond.go. The rate limit is decided before they run.

// caller is who a backend function answers: whether it may see private
// content, and the names its use is counted under.
type caller struct {
	private bool
	// signedIn counts the use as an authenticated one in the insights
	// even when it sees only public content (the pages do).
	signedIn bool
	endpoint string            // the dashboard's (stats): "GET /api/search", "MCP search"
	via      insights.Endpoint // the insights'
}

// authenticated reports whether the use counts as authenticated.
func (c caller) authenticated() bool { return c.private || c.signedIn }

// searchFor runs a full-text search for c and counts it.
func (s *api) searchFor(req query.SearchRequest, c caller) (*query.SearchResult, error) {
	req.Private = c.private
	start := time.Now()
	res, err := s.eng.Search(req)
	if err != nil {
		return nil, err
	}
	total := res.TotalMessages + res.TotalDocuments
	s.stats.record(c.endpoint, req.Query, total, time.Since(start))
	if req.Offset == 0 {
		s.tally.noteSearch(c.via, req.Query, c.authenticated(), total)
	}
	return res, nil
}

// semanticFor runs a semantic search for c, bounded by semanticTimeout,
// and counts it.
func (s *api) semanticFor(ctx context.Context, req semantic.Request, c caller) (*semantic.Result, error) {
	req.Private = c.private
	ctx, cancel := context.WithTimeout(ctx, semanticTimeout)
	defer cancel()
	start := time.Now()
	res, err := s.semantic.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	s.stats.record(c.endpoint, req.Query, len(res.Hits), time.Since(start))
	s.tally.noteSearch(c.via, req.Query, c.authenticated(), len(res.Hits))
	return res, nil
}

// answerSink is where an answer goes (ask.Sink), saying what it took in
// for the counts.
type answerSink interface {
	ask.Sink
	drawn() int     // the sources the answer drew on
	noAnswer() bool // the answer was ask.NoAnswer
}

// askInto answers a question for c into sink and counts it. The caller
// bounds ctx and holds the asker's admission (Asker.Admit).
func (s *api) askInto(ctx context.Context, req ask.Request, c caller, sink answerSink) (ask.Usage, error) {
	req.Private = c.private
	start := time.Now()
	usage, err := s.asker.Ask(ctx, req, sink)
	if err != nil {
		return usage, err
	}
	s.stats.record(c.endpoint, req.Question, sink.drawn(), time.Since(start))
	s.tally.noteAsk(c.via, req.Question, c.authenticated(), sink.drawn(), sink.noAnswer())
	return usage, nil
}

// askFor answers a question for c in one piece, bounded by askTimeout,
// and counts it. The caller holds the asker's admission (Asker.Admit).
func (s *api) askFor(ctx context.Context, req ask.Request, c caller) (*collector, ask.Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	col := &collector{}
	usage, err := s.askInto(ctx, req, c, col)
	if err != nil {
		return nil, usage, err
	}
	return col, usage, nil
}
