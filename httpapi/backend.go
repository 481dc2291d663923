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
// semantic.go, ask.go, reading.go), the MCP tools with the request built
// from their arguments (mcp.go). Their errors map to HTTP status in
// respond.go. The rate limit is decided before they run.

// caller is who a backend function answers: whether it may see private
// content, and the names its use is counted under.
type caller struct {
	private  bool
	endpoint string            // the dashboard's (stats): "GET /api/search", "MCP search"
	via      insights.Endpoint // the insights'
}

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
		s.usage.noteSearch(c.via, req.Query, c.private, total)
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
	s.usage.noteSearch(c.via, req.Query, c.private, len(res.Hits))
	return res, nil
}

// askFor answers a question for c in one piece, bounded by askTimeout,
// and counts it. The caller holds the asker's admission (Asker.Admit).
func (s *api) askFor(ctx context.Context, req ask.Request, c caller) (*collector, ask.Usage, error) {
	req.Private = c.private
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	col := &collector{}
	start := time.Now()
	usage, err := s.asker.Ask(ctx, req, col)
	if err != nil {
		return nil, usage, err
	}
	s.stats.record(c.endpoint, req.Question, len(col.sources), time.Since(start))
	s.usage.noteAsk(c.via, req.Question, c.private, len(col.sources), col.answer.String() == ask.NoAnswer)
	return col, usage, nil
}
