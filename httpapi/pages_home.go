package httpapi

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// homeData is the home page: search results and, without JavaScript, an
// answer rendered on the server.
type homeData struct {
	Head        head
	Site        string
	Description string
	Query       string
	Searched    bool
	Error       string
	Result      *query.SearchResult
	Counts      record.Counts
	Question    string
	Answer      *pageAnswer
	AskError    string
	Sources     []record.Source // for the search's source filter
	Source      string          // the filter chosen
	Keep        url.Values      // the other filter parameters, kept by the form
	Hits        []hitView       // messages and documents, alternately
	Show        string          // "", showMessages or showDocuments
	Tabs        []tabView       // all hits, messages, documents
	Filters     []filterView    // in force, each with a link that drops it
	Empty       bool            // nothing matched
	Suggestions []suggestion    // then, wider searches
	Prev        string          // links to the previous and next results, if any
	Next        string
	From, To    int                // the results shown, 1-based
	Corrections []query.Correction // query words found only with typos
	ExactHref   string             // the same search without typo tolerance

	// Without a search, what there is to read.
	Recent       []conversation
	Channels     []channelCount
	MoreChannels int // not listed: the busiest are
	Collections  []collection
	Asked        []insights.Entry // the questions asked most often, answered
}

// channelCount is a channel on the home page.
type channelCount struct {
	Name, Slug, Topic string
	Messages          int
}

// collection is a source's documents on the home page.
type collection struct {
	ID, Name  string
	Documents int
}

// pageAnswer is an answer cut into text and citation links.
type pageAnswer struct {
	Parts   []answerPart
	Sources []answerSource
	Stale   bool // retrieved before the index had taken in the latest writes
}

type answerPart struct {
	Text string
	N    int
	Href string
}

type answerSource struct {
	Title, Meta, Href string
}

var citation = regexp.MustCompile(`\[(\d+)\]`)

func newPageAnswer(text string, sources []ask.Source) *pageAnswer {
	a := &pageAnswer{}
	last := 0
	for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		if n < 1 || n > len(sources) {
			continue
		}
		a.Parts = append(a.Parts, answerPart{Text: text[last:m[0]]}, answerPart{N: n, Href: sources[n-1].PageURL})
		last = m[1]
	}
	a.Parts = append(a.Parts, answerPart{Text: text[last:]})
	for i := range sources {
		src := &sources[i]
		a.Sources = append(a.Sources, answerSource{Title: src.Metadata(false), Meta: src.Preview(), Href: src.PageURL})
	}
	return a
}

// homePage serves GET /: a search form with server-rendered results, and an
// ask box (streamed by /static/app.js, or answered here with ?ask=).
func (s *pages) homePage(ctx *fasthttp.RequestCtx) {
	data := homeData{
		Head: head{Title: s.siteName(), Canonical: s.opts.BaseURL + "/", Script: true,
			Description: cmp.Or(s.siteDescription(), "Search and ask the messages and documents of "+s.siteName()+".")},
		Description: s.siteDescription(),
		Site:        s.siteName(),
		Counts:      s.eng.Counts(false),
	}
	for _, src := range s.eng.Sources() {
		if st := s.eng.SourceStats(src.ID, false); st.Messages+st.Documents > 0 {
			data.Sources = append(data.Sources, src)
			if st.Documents > 0 {
				data.Collections = append(data.Collections, collection{ID: src.ID, Name: src.Name, Documents: st.Documents})
			}
		}
	}
	o := pageOpts{}
	privileged := s.privileged(ctx)
	bearerOnly := s.opts.SearchAccess == "bearer" && !privileged
	if len(ctx.QueryArgs().Peek("q")) > 0 && bearerOnly {
		data.Error = "Search on this server needs the API key (SEARCH_ACCESS=bearer)."
		o.status = fasthttp.StatusUnauthorized
	} else if req, err := searchRequest(ctx); err == nil {
		data.Query, data.Searched = req.Query, true
		data.Head.Title = s.title(req.Query)
		data.Head.NoIndex = true
		// The page shows public content to everyone (it may be cached).
		if data.Result, err = s.api.searchFor(req, caller{signedIn: privileged, endpoint: "page search", via: insights.Page}); err != nil {
			data.Searched, data.Error = false, strings.TrimPrefix(err.Error(), record.ErrInvalid.Error()+": ")
		} else {
			params := filterParams(ctx)
			data.Source, data.Keep = req.Source, maps.Clone(params)
			data.Keep.Del("source")
			paging := params
			if show := string(ctx.QueryArgs().Peek("show")); show == showMessages || show == showDocuments {
				data.Show = show
				paging = maps.Clone(params)
				paging.Set("show", show)
				data.Keep.Set("show", show)
			}
			s.searchView(&data, req.Query, params)
			if req.NoTypos {
				paging = maps.Clone(paging)
				paging.Set("typos", "false")
				data.Keep.Set("typos", "false")
			}
			resultPages(&data, req, paging)
			if data.Corrections = data.Result.Corrections; len(data.Corrections) > 0 {
				exact := maps.Clone(params)
				exact.Set("typos", "false")
				data.ExactHref = searchLink(req.Query, exact, 0)
			}
		}
	} else if len(ctx.QueryArgs().Peek("q")) > 0 {
		data.Error = err.Error()
	}
	if !data.Searched {
		s.frontPage(&data)
	}
	if ctx.IsPost() {
		// The ask box without JavaScript: a form POST, answered here.
		q := strings.TrimSpace(string(ctx.PostArgs().Peek("ask")))
		data.Question, data.Head.NoIndex = q, true
		o.private = true
		if status, msg := s.pageAnswer(ctx, q, &data); msg != "" {
			o.status, data.AskError = status, msg
		}
	}
	s.render(ctx, "home.html", o, data)
}

// homeChannels is how many channels the home page lists, the busiest.
const homeChannels = 12

// askedMin is how often a question must have been asked, by callers
// without credentials, before the home page shows it: a question asked
// once is one person's words, and stays in the operator's insights.
const askedMin = 3

// frontPage fills what the home page shows without a search: recent
// conversations, channels and the questions asked most.
func (s *pages) frontPage(data *homeData) {
	data.Head.Wide = true
	f := s.frontContent()
	data.Recent = f.recent
	data.MoreChannels = max(len(f.channels)-homeChannels, 0)
	data.Channels = f.channels[:min(len(f.channels), homeChannels)]
	if s.insights == nil {
		return
	}
	r := s.insights.Report(insights.Query{Days: 30, Callers: insights.Public, Limit: 20})
	unanswered := map[string]bool{}
	for _, e := range r.UnansweredQuestions {
		unanswered[e.Text] = true
	}
	for _, e := range r.TopQuestions {
		if e.Count >= askedMin && !unanswered[e.Text] && len(data.Asked) < 5 {
			data.Asked = append(data.Asked, e)
		}
	}
}

// resultPages sets the links to the previous and next results of a search
// with the filter parameters params.
func resultPages(data *homeData, req query.SearchRequest, params url.Values) {
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	r := data.Result
	shown, total := max(len(r.Messages), len(r.Documents)), max(r.TotalMessages, r.TotalDocuments)
	switch data.Show {
	case showMessages:
		shown, total = len(r.Messages), r.TotalMessages
	case showDocuments:
		shown, total = len(r.Documents), r.TotalDocuments
	}
	data.From, data.To = req.Offset+1, req.Offset+shown
	link := func(offset int) string { return searchLink(req.Query, params, offset) }
	if req.Offset > 0 {
		data.Prev = link(max(req.Offset-limit, 0))
	}
	if next := req.Offset + limit; next < total && next <= query.MaxSearchOffset {
		data.Next = link(next)
	}
}

// pageAnswer answers the home page's question without JavaScript, within
// the public tier's limit.
func (s *pages) pageAnswer(ctx *fasthttp.RequestCtx, q string, data *homeData) (int, string) {
	// A form posted from another site would spend this visitor's questions.
	if s.crossSite(ctx) {
		return fasthttp.StatusForbidden, "Questions are asked from this site's own page."
	}
	switch {
	case q == "":
		return fasthttp.StatusBadRequest, "Type a question first."
	case !utf8.ValidString(q):
		return fasthttp.StatusBadRequest, "The question is not valid UTF-8."
	case utf8.RuneCountInString(q) > 4000:
		return fasthttp.StatusBadRequest, "The question is too long: at most 4,000 characters."
	}
	if s.limiter != nil && !s.auth.bearerOK(ctx) && !s.auth.basicOK(ctx) {
		if retry, ok := s.spend(ctx); !ok {
			return fasthttp.StatusTooManyRequests, fmt.Sprintf("Too many questions from your address; try again in %d s.", retry)
		}
	}
	release, err := s.asker.Admit()
	if err != nil {
		ctx.Response.Header.Set("Retry-After", "5")
		return fasthttp.StatusServiceUnavailable, "Too many questions are being answered; try again in a few seconds."
	}
	defer release()
	col, _, err := s.api.askFor(s.base, ask.Request{Question: q}, caller{signedIn: s.privileged(ctx), endpoint: "page ask", via: insights.Ask})
	if err != nil {
		s.log.Warn("page question failed", "err", err)
		return fasthttp.StatusBadGateway, "No answer: " + publicAskError(err) + "."
	}
	data.Answer = newPageAnswer(col.answer.String(), col.sources)
	data.Answer.Stale = col.stale
	return 0, ""
}
