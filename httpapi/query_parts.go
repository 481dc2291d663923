package httpapi

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// queryPart is one element of a search query as written, so the search
// page can offer the query without it: a word, a "phrase", an exclusion
// (-word, -"phrase") or a filter (source:, channel:, in:, from:, author:,
// after:, before:). It follows engine.ParseQuery's syntax.
type queryPart struct {
	Raw   string // as written
	Kind  partKind
	Key   string // a filter's key, lower case
	Value string // a filter's value; a phrase's words
}

type partKind int

const (
	partWord partKind = iota
	partPhrase
	partExclude
	partFilter
)

// queryFilters are the filter keys of the query syntax.
var queryFilters = map[string]bool{"source": true, "channel": true, "in": true, "from": true, "author": true, "after": true, "before": true}

// splitQuery cuts q into its parts, as engine.ParseQuery reads them.
func splitQuery(q string) []queryPart {
	var parts []queryPart
	for i := 0; i < len(q); {
		r, w := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		start, neg := i, false
		if q[i] == '-' && i+1 < len(q) && !isSpaceByte(q[i+1]) {
			neg = true
			i++
		}
		if q[i] == '"' {
			phrase, next := quotedPart(q, i)
			i = next
			if strings.TrimSpace(phrase) == "" {
				continue
			}
			kind := partPhrase
			if neg {
				kind = partExclude
			}
			parts = append(parts, queryPart{Raw: q[start:i], Kind: kind, Value: phrase})
			continue
		}
		word, next := bareWordPart(q, i)
		if word == "" {
			_, w := utf8.DecodeRuneInString(q[i:])
			i += w
			continue
		}
		i = next
		p := queryPart{Raw: q[start:i], Kind: partWord}
		if neg {
			p.Kind = partExclude
		} else if key, val, ok := strings.Cut(word, ":"); ok && queryFilters[strings.ToLower(key)] {
			if val == "" && i < len(q) && q[i] == '"' {
				val, i = quotedPart(q, i)
				p.Raw = q[start:i]
			}
			if val != "" {
				p.Kind, p.Key, p.Value = partFilter, strings.ToLower(key), val
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// joinQuery writes parts back as a query, part skip left out and, when
// with is not nil, put in its place.
func joinQuery(parts []queryPart, skip int, with *string) string {
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

func quotedPart(s string, i int) (string, int) {
	end := strings.IndexByte(s[i+1:], '"')
	if end < 0 {
		return s[i+1:], len(s)
	}
	return s[i+1 : i+1+end], i + 2 + end
}

func bareWordPart(s string, i int) (string, int) {
	j := i
	for j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) || (r == '"' && j > i) {
			break
		}
		j += w
	}
	return s[i:j], j
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
