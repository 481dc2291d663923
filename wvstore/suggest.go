package wvstore

import (
	"context"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// Suggestions (query.Suggestion) from the cluster: channel names from the
// catalog this process holds, document titles from a bounded read of the
// documents whose slug — the title's ASCII words — starts a word with the
// query's last words, checked against their titles as the memory store
// matches them. Word completions need the index's dictionary, which
// Weaviate does not expose: there are none.

// suggestDocReads bounds the documents one suggestion reads.
const suggestDocReads = 32

// Suggest completes req.Query with the titles of channels and documents
// the caller may see (no word completions; see above).
func (s *searcher) Suggest(req query.SuggestRequest) ([]query.Suggestion, error) {
	limit, err := query.CheckSuggest(&req)
	if err != nil {
		return nil, err
	}
	sq := query.ParseSuggest(req.Query)
	if len(sq.Phrases) == 0 {
		return []query.Suggestion{}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, err
	}
	var titles []query.RankedTitle
	for k, ch := range cat.chans {
		if !req.Private && cat.hidden[k] {
			continue
		}
		if rank, ok := query.MatchTitle(ch.Name, sq.Phrases); ok {
			titles = append(titles, query.RankedTitle{Suggestion: query.Suggestion{Text: ch.Name, Kind: query.SuggestChannel,
				Slug: ch.Slug, Source: sourceName(cat, ch.SourceID)}, Rank: rank})
		}
	}
	docs, err := s.suggestDocuments(ctx, cat, &sq, req.Private)
	if err != nil {
		return nil, err
	}
	return query.MergeSuggestions(nil, append(titles, docs...), limit), nil
}

// suggestDocuments reads the documents whose slug a phrase of sq starts or
// starts a word of, and keeps those whose title matches.
func (s *searcher) suggestDocuments(ctx context.Context, cat *catalog, sq *query.SuggestQuery, private bool) ([]query.RankedTitle, error) {
	var likes []*filters.WhereBuilder
	for _, p := range sq.Phrases {
		if slug := record.Slugify(p); slug != "" {
			likes = append(likes, like("slug", slug+"*"), like("slug", "*-"+slug+"*"))
		}
	}
	if len(likes) == 0 {
		return nil, nil
	}
	w := cond{}.and(or(likes...)).except(hiddenDocuments(cat, private))
	objs, err := s.get(ctx, getQuery{class: s.class("Document"), fields: []string{"record"}, where: w.where(), limit: suggestDocReads})
	if err != nil {
		return nil, err
	}
	var out []query.RankedTitle
	for _, o := range objs {
		d, err := decodeDocument(cat, o)
		if err != nil || d.Hidden && !private {
			continue
		}
		if rank, ok := query.MatchTitle(d.Title, sq.Phrases); ok {
			out = append(out, query.RankedTitle{Suggestion: query.Suggestion{Text: d.Title, Kind: query.SuggestDocument,
				Slug: d.Slug, Source: sourceName(cat, d.SourceID)}, Rank: rank})
		}
	}
	return out, nil
}

// like is the filter prop matching pattern (* and ? as wildcards).
func like(prop, pattern string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{prop}).WithOperator(filters.Like).WithValueText(pattern)
}

func sourceName(cat *catalog, id string) string {
	if src := cat.sources[id]; src != nil {
		return src.Name
	}
	return ""
}
