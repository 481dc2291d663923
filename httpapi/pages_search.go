package httpapi

import (
	"maps"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/valyala/fasthttp"
)

// searchParams are the search page's filters given as parameters, besides
// q; they are kept in its links and its form.
var searchParams = []string{"source", "channel", "from", "after", "before"}

// hitView is one search hit as the page shows it: a message or a
// document. Hits alternate between the two rankings, so both are on the
// first screen, unless the page shows one kind (tabs).
type hitView struct {
	Msg  *query.MessageHit
	Href string // a message's conversation
	Doc  *query.DocumentHit
	// Of a document: its source's name, where it came from (a crawled
	// page's host) and its date with what the date is.
	Source, Host, Dated string
	When                time.Time
}

// filterView is a filter in force and the link that drops it.
type filterView struct {
	Label, Value, Remove string
}

// suggestion is a link to a wider search.
type suggestion struct {
	Text, Href string
}

// searchView fills data's hits, filters and, when nothing matched,
// suggestions for the search q with the filter parameters params.
func (s *pages) searchView(data *homeData, q string, params url.Values) {
	names := s.publicSourceNames()
	data.Hits = interleave(data.Result, names, data.Show)
	r := data.Result
	for _, t := range []struct{ show, label string }{{"", "All"}, {showMessages, "Messages"}, {showDocuments, "Documents"}} {
		v := maps.Clone(params)
		if t.show != "" {
			v.Set("show", t.show)
		}
		n, more := r.TotalMessages+r.TotalDocuments, !r.TotalExact()
		switch t.show {
		case showMessages:
			n, more = r.TotalMessages, r.MessagesAtLeast
		case showDocuments:
			n, more = r.TotalDocuments, r.DocumentsAtLeast
		}
		data.Tabs = append(data.Tabs, tabView{Label: t.label, Count: n, More: more, Href: searchLink(q, v, 0), Current: t.show == data.Show})
	}
	parts := query.SplitQuery(q)
	for _, key := range searchParams {
		if v := params.Get(key); v != "" {
			without := maps.Clone(params)
			without.Del(key)
			data.Filters = append(data.Filters, filterView{filterLabel(key), filterValue(key, v, names), searchLink(q, without, 0)})
		}
	}
	for i, p := range parts {
		if p.Kind == query.PartFilter {
			data.Filters = append(data.Filters, filterView{filterLabel(p.Key), filterValue(p.Key, p.Value, names), searchLink(joinQuery(parts, i, nil), params, 0)})
		}
	}
	if data.Empty = r.TotalMessages+r.TotalDocuments == 0; data.Empty {
		data.Suggestions = suggestions(q, parts, params, data.Filters)
	}
}

// publicSourceNames maps the sources a caller without credentials may see
// (a visible source, or one with visible content) to their names; a
// filter naming another shows its id as given, as for a source that does
// not exist.
func (s *pages) publicSourceNames() map[string]string {
	names := map[string]string{}
	for _, src := range s.eng.Sources() {
		if !src.Hidden() {
			names[src.ID] = src.Name
		} else if st := s.eng.SourceStats(src.ID, false); st.Channels+st.Threads+st.Documents > 0 {
			names[src.ID] = src.Name
		}
	}
	return names
}

// The kinds of hit a search page may show alone (?show=).
const (
	showMessages  = "messages"
	showDocuments = "documents"
)

// tabView is a link to the same search showing all hits or one kind.
type tabView struct {
	Label   string
	Count   int
	More    bool // more than Count match (a store's lower bound)
	Href    string
	Current bool
}

// interleave lists a search's messages and documents alternately, or only
// those of one kind.
func interleave(r *query.SearchResult, names map[string]string, show string) []hitView {
	hits := make([]hitView, 0, len(r.Messages)+len(r.Documents))
	for i := range max(len(r.Messages), len(r.Documents)) {
		if i < len(r.Messages) && show != showDocuments {
			m := &r.Messages[i]
			hits = append(hits, hitView{Msg: m, Href: conversationURL("", m.ChannelSlug, m.ID) + messageAnchor(m.ID)})
		}
		if i < len(r.Documents) && show != showMessages {
			d := &r.Documents[i]
			h := hitView{Doc: d, Source: names[d.SourceID], Dated: "updated", When: d.UpdatedAt}
			if u, err := url.Parse(d.URL); err == nil && u.Host != "" {
				h.Host, h.Dated = u.Host, "crawled"
			}
			hits = append(hits, h)
		}
	}
	return hits
}

// suggestions are the ways to widen a search that found nothing: without
// each filter, a phrase as words, without each exclusion.
func suggestions(q string, parts []query.QueryPart, params url.Values, filters []filterView) []suggestion {
	var out []suggestion
	for _, f := range filters {
		out = append(out, suggestion{"Remove the filter " + f.Label + ": " + f.Value, f.Remove})
	}
	for i, p := range parts {
		switch p.Kind {
		case query.PartPhrase:
			words := strings.Join(strings.Fields(p.Value), " ")
			if strings.Contains(words, " ") {
				out = append(out, suggestion{"Search " + p.Raw + " as separate words, not a phrase", searchLink(joinQuery(parts, i, &words), params, 0)})
			}
		case query.PartExclude, query.PartExcludePhrase:
			out = append(out, suggestion{"Stop excluding " + p.Raw, searchLink(joinQuery(parts, i, nil), params, 0)})
		}
	}
	return out
}

var filterLabels = map[string]string{
	"source": "source", "channel": "channel", "in": "channel", "from": "author", "author": "author", "after": "after", "before": "before",
}

func filterLabel(key string) string { return filterLabels[key] }

// filterValue shows a filter's value: a source by its name, a channel by
// its #slug.
func filterValue(key, v string, sources map[string]string) string {
	switch key {
	case "source":
		if name := sources[v]; name != "" {
			return name
		}
	case "channel", "in":
		return "#" + strings.TrimPrefix(v, "#")
	}
	return v
}

// searchLink is the search page's address for q with params, from result
// offset on.
func searchLink(q string, params url.Values, offset int) string {
	v := maps.Clone(params)
	v.Set("q", q)
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return "/?" + v.Encode()
}

// filterParams are the search page's filter parameters in ctx, as given.
func filterParams(ctx *fasthttp.RequestCtx) url.Values {
	v := url.Values{}
	for _, key := range searchParams {
		if p := ctx.QueryArgs().Peek(key); len(p) > 0 {
			v.Set(key, string(p))
		}
	}
	return v
}

// joinQuery writes parts back as a query, part skip left out and, when
// with is not nil, put in its place.
func joinQuery(parts []query.QueryPart, skip int, with *string) string {
	var b strings.Builder
	for i, p := range parts {
		s := p.Raw
		if i == skip {
			if with == nil {
				continue
			}
			s = *with
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}
