package httpapi

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/insights"
)

// Insights: each search and question is handed to the recorder as an
// event — the normalized text is all it keeps of the request, never the
// client's address, its user agent, its credentials or the answer. A
// search counts once, at its first page (a request with an offset is the
// same search paged); a question counts once it is answered.

// noteSearch records a search of endpoint that found total hits among
// what the caller may see.
func (s *tally) noteSearch(ep insights.Endpoint, query string, authenticated bool, total int) {
	if s.insights != nil {
		s.insights.Record(insights.Event{Endpoint: ep, Authenticated: authenticated, Text: query, NoResults: total == 0})
	}
}

// noteAsk records a question of endpoint whose answer drew on sources
// and, with noAnswer, said only ask.NoAnswer.
func (s *tally) noteAsk(ep insights.Endpoint, question string, authenticated bool, sources int, noAnswer bool) {
	if s.insights != nil {
		s.insights.Record(insights.Event{Endpoint: ep, Ask: true, Authenticated: authenticated, Text: question,
			Unanswered: s.unanswered(sources, noAnswer)})
	}
}

// unanswered reports whether an answer found nothing to say: it drew on
// no source, or the extractive answerer's whole answer is ask.NoAnswer. A
// model's words are its own, so with a model only the first counts.
func (s *tally) unanswered(sources int, noAnswer bool) bool {
	return sources == 0 || noAnswer && !s.asker.UsesModel()
}

// noAnswerWatch tells, from the pieces of a streamed answer, whether the
// whole answer is ask.NoAnswer, without keeping the answer.
type noAnswerWatch struct {
	matched int  // bytes of ask.NoAnswer the pieces so far spell
	differs bool // the answer is not ask.NoAnswer
}

func (w *noAnswerWatch) piece(t string) {
	if w.differs {
		return
	}
	if rest := ask.NoAnswer[w.matched:]; len(t) <= len(rest) && rest[:len(t)] == t {
		w.matched += len(t)
	} else {
		w.differs = true
	}
}

func (w *noAnswerWatch) noAnswer() bool { return !w.differs && w.matched == len(ask.NoAnswer) }

// insightsJSON is the answer of GET /api/admin/insights.
type insightsJSON struct {
	Days                int                 `json:"days"`
	Callers             string              `json:"callers"`
	From                string              `json:"from"`
	To                  string              `json:"to"`
	Searches            int                 `json:"searches"`
	Asks                int                 `json:"asks"`
	TopQueries          []queryEntryJSON    `json:"topQueries"`
	ZeroResultQueries   []queryEntryJSON    `json:"zeroResultQueries"`
	UnansweredQuestions []questionEntryJSON `json:"unansweredQuestions"`
	TopQuestions        []questionEntryJSON `json:"topQuestions"`
	Daily               []dayJSON           `json:"daily"`
	Recording           bool                `json:"recording"`
	RetentionDays       int                 `json:"retentionDays"`
	DroppedEvents       int64               `json:"droppedEvents"`
}

type entryJSON struct {
	Count         int            `json:"count"`
	LastSeen      string         `json:"lastSeen"`
	FirstSeen     string         `json:"firstSeen"`
	Authenticated int            `json:"authenticated"`
	Endpoints     map[string]int `json:"endpoints"`
}

type queryEntryJSON struct {
	Query string `json:"query"`
	entryJSON
}

type questionEntryJSON struct {
	Question string `json:"question"`
	entryJSON
}

type dayJSON struct {
	Date       string `json:"date"`
	Searches   int    `json:"searches"`
	Asks       int    `json:"asks"`
	NoResults  int    `json:"noResults"`
	Unanswered int    `json:"unanswered"`
}

const dateFormat = "2006-01-02"

func entryOf(e *insights.Entry) entryJSON {
	return entryJSON{Count: e.Count, LastSeen: e.LastSeen.Format(dateFormat), FirstSeen: e.FirstSeen.Format(dateFormat),
		Authenticated: e.Authenticated, Endpoints: e.Endpoints}
}

// insightsQuery reads days (default 30, 1 to the retention) and callers
// (all, public, authenticated).
func (s *tally) insightsQuery(ctx *fasthttp.RequestCtx) (insights.Query, error) {
	var q insights.Query
	var err error
	if q.Days, err = intParam(ctx, "days", min(30, s.retentionDays()), 1, s.retentionDays()); err != nil {
		return q, err
	}
	if q.Callers, err = insights.ParseCallers(string(ctx.QueryArgs().Peek("callers"))); err != nil {
		return q, paramErr("%s", err)
	}
	return q, nil
}

func (s *tally) retentionDays() int {
	if s.insights == nil {
		return insights.RetentionDays(insights.DefaultRetention)
	}
	return s.insights.RetentionDays()
}

// report is the insights report of q: empty when nothing is recorded.
func (s *tally) report(q insights.Query) insights.Report {
	if s.insights == nil {
		return insights.EmptyReport(q, time.Now())
	}
	return s.insights.Report(q)
}

// adminInsights serves GET /api/admin/insights.
func (s *tally) adminInsights(ctx *fasthttp.RequestCtx) {
	q, err := s.insightsQuery(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	r := s.report(q)
	out := insightsJSON{
		Days: r.Days, Callers: r.Callers.String(), From: r.From.Format(dateFormat), To: r.To.Format(dateFormat),
		Searches: r.Searches, Asks: r.Asks, Recording: s.insights != nil, RetentionDays: s.retentionDays(), DroppedEvents: r.Dropped,
		TopQueries: []queryEntryJSON{}, ZeroResultQueries: []queryEntryJSON{},
		UnansweredQuestions: []questionEntryJSON{}, TopQuestions: []questionEntryJSON{}, Daily: []dayJSON{},
	}
	for i := range r.TopQueries {
		out.TopQueries = append(out.TopQueries, queryEntryJSON{r.TopQueries[i].Text, entryOf(&r.TopQueries[i])})
	}
	for i := range r.ZeroResultQueries {
		out.ZeroResultQueries = append(out.ZeroResultQueries, queryEntryJSON{r.ZeroResultQueries[i].Text, entryOf(&r.ZeroResultQueries[i])})
	}
	for i := range r.UnansweredQuestions {
		out.UnansweredQuestions = append(out.UnansweredQuestions, questionEntryJSON{r.UnansweredQuestions[i].Text, entryOf(&r.UnansweredQuestions[i])})
	}
	for i := range r.TopQuestions {
		out.TopQuestions = append(out.TopQuestions, questionEntryJSON{r.TopQuestions[i].Text, entryOf(&r.TopQuestions[i])})
	}
	for _, d := range r.Daily {
		out.Daily = append(out.Daily, dayJSON{Date: d.Date.Format(dateFormat), Searches: d.Searches, Asks: d.Asks,
			NoResults: d.NoResults, Unanswered: d.Unanswered})
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	writeJSON(ctx, fasthttp.StatusOK, out)
}
