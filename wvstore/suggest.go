package wvstore

import (
	"context"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
)

// Suggestions (engine.Suggestion) from the cluster: channel names from the
// catalog this process holds, document titles from a bounded read of the
// documents whose slug — the title's ASCII words — starts a word with the
// query's last words, checked against their titles as the memory store
// matches them. Word completions need the index's dictionary, which
// Weaviate does not expose: there are none.

// suggestDocReads bounds the documents one suggestion reads.
const suggestDocReads = 32

// Suggest completes req.Query with the titles of channels and documents
// the caller may see (no word completions; see above).
func (s *Store) Suggest(req engine.SuggestRequest) ([]engine.Suggestion, error) {
	limit, err := engine.CheckSuggest(&req)
	if err != nil {
		return nil, err
	}
	sq := engine.ParseSuggest(req.Query)
	if len(sq.Phrases) == 0 {
		return []engine.Suggestion{}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	cat, err := s.cat(ctx)
	if err != nil {
		return nil, err
	}
	var titles []engine.RankedTitle
	for k, ch := range cat.chans {
		if !req.Private && cat.hidden[k] {
			continue
		}
		if rank, ok := engine.MatchTitle(ch.Name, sq.Phrases); ok {
			titles = append(titles, engine.RankedTitle{Suggestion: engine.Suggestion{Text: ch.Name, Kind: engine.SuggestChannel,
				Slug: ch.Slug, Source: sourceName(cat, ch.SourceID)}, Rank: rank})
		}
	}
	docs, err := s.suggestDocuments(ctx, cat, &sq, req.Private)
	if err != nil {
		return nil, err
	}
	return engine.MergeSuggestions(nil, append(titles, docs...), limit), nil
}

// suggestDocuments reads the documents whose slug a phrase of sq starts or
// starts a word of, and keeps those whose title matches.
func (s *Store) suggestDocuments(ctx context.Context, cat *catalog, sq *engine.SuggestQuery, private bool) ([]engine.RankedTitle, error) {
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
	objs, err := s.get(ctx, query{class: s.class("Document"), fields: []string{"record"}, where: w.where(), limit: suggestDocReads})
	if err != nil {
		return nil, err
	}
	var out []engine.RankedTitle
	for _, o := range objs {
		d, err := decodeDocument(cat, o)
		if err != nil || d.Hidden && !private {
			continue
		}
		if rank, ok := engine.MatchTitle(d.Title, sq.Phrases); ok {
			out = append(out, engine.RankedTitle{Suggestion: engine.Suggestion{Text: d.Title, Kind: engine.SuggestDocument,
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
