package query

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/record"
)

// MaxQueryBytes bounds the query string.
const MaxQueryBytes = 2048

// ParsedQuery is a search query split into its parts, before analysis.
//
// Syntax: free words are ranked (any may match); "a quoted phrase" must
// occur as written; -word and -"a phrase" exclude; source:ID, channel:SLUG,
// from:NAME, after:DATE and before:DATE filter (a value may be quoted:
// from:"Ana K"). Anything else, such as error:foo, is plain text.
type ParsedQuery struct {
	Text           string // the free words, space-separated
	Phrases        []string
	Exclude        []string
	ExcludePhrases []string
	Source         string
	Channel        string
	From           string
	After          time.Time // inclusive
	Before         time.Time // exclusive
}

// Empty reports whether q neither searches nor filters anything.
func (q *ParsedQuery) Empty() bool {
	return strings.TrimSpace(q.Text) == "" && len(q.Phrases) == 0 && !q.HasFilter()
}

// HasFilter reports whether q filters by source, channel, author or date.
func (q *ParsedQuery) HasFilter() bool {
	return q.Source != "" || q.Channel != "" || q.From != "" || !q.After.IsZero() || !q.Before.IsZero()
}

// ParseQuery parses the query syntax. It fails only on a malformed date
// filter, invalid UTF-8 or a query over MaxQueryBytes.
func ParseQuery(s string) (ParsedQuery, error) {
	var q ParsedQuery
	if len(s) > MaxQueryBytes {
		return q, invalidf("q is too long: %d bytes, at most %d", len(s), MaxQueryBytes)
	}
	if !utf8.ValidString(s) {
		return q, invalidf("q is not valid UTF-8")
	}
	var text []string
	for _, p := range SplitQuery(s) {
		switch p.Kind {
		case PartPhrase:
			q.Phrases = append(q.Phrases, p.Value)
		case PartExclude:
			q.Exclude = append(q.Exclude, p.Value)
		case PartExcludePhrase:
			q.ExcludePhrases = append(q.ExcludePhrases, p.Value)
		case PartFilter:
			if err := q.filter(p.Key, p.Value); err != nil {
				return q, err
			}
		default:
			text = append(text, p.Value)
		}
	}
	q.Text = strings.Join(text, " ")
	return q, nil
}

// QueryPart is one element of a query as written: a word, a "phrase", an
// exclusion (-word, -"phrase") or a filter (key:value). Pages use the parts
// to offer a query without one of them.
type QueryPart struct {
	Raw   string // as written
	Kind  PartKind
	Key   string // a filter's key, lower case
	Value string // the word, the phrase's text or the filter's value
}

// PartKind tells what a QueryPart is.
type PartKind int

const (
	PartWord PartKind = iota
	PartPhrase
	PartExclude       // -word
	PartExcludePhrase // -"a phrase"
	PartFilter
)

// filterKeys are the filter keys of the query syntax.
var filterKeys = map[string]bool{"source": true, "channel": true, "in": true, "from": true, "author": true, "after": true, "before": true}

// SplitQuery cuts s into its parts, as ParseQuery reads them. A filter key
// with nothing after it (source:) and an unknown key (error:foo) are words;
// an excluded filter (-from:bo) is an excluded word.
func SplitQuery(s string) []QueryPart {
	var parts []QueryPart
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		start, neg := i, false
		if s[i] == '-' && i+1 < len(s) && !isSpaceByte(s[i+1]) {
			neg = true
			i++
		}
		if s[i] == '"' {
			phrase, next := quoted(s, i)
			i = next
			if strings.TrimSpace(phrase) == "" {
				continue
			}
			kind := PartPhrase
			if neg {
				kind = PartExcludePhrase
			}
			parts = append(parts, QueryPart{Raw: s[start:i], Kind: kind, Value: phrase})
			continue
		}
		word, next := bareWord(s, i)
		if word == "" { // "-" before a space of another script
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		i = next
		p := QueryPart{Raw: s[start:i], Kind: PartWord, Value: word}
		if neg {
			p.Kind = PartExclude
		} else if key, val, ok := strings.Cut(word, ":"); ok && filterKeys[strings.ToLower(key)] {
			if val == "" && i < len(s) && s[i] == '"' {
				val, i = quoted(s, i)
				p.Raw = s[start:i]
			}
			if val != "" {
				p.Kind, p.Key, p.Value = PartFilter, strings.ToLower(key), val
			}
		}
		parts = append(parts, p)
	}
	return parts
}

// filter applies the filter key:val.
func (q *ParsedQuery) filter(key, val string) error {
	var dst *string
	var date *time.Time
	switch key {
	case "source":
		dst = &q.Source
	case "channel", "in":
		dst = &q.Channel
	case "from", "author":
		dst = &q.From
	case "after":
		date = &q.After
	case "before":
		date = &q.Before
	}
	if dst != nil {
		*dst = val
		return nil
	}
	t, err := ParseDate(val)
	if err != nil {
		return invalidf("%s:%s: %v", key, val, err)
	}
	*date = t
	return nil
}

// ParseDate accepts an RFC 3339 time or a date (2024-01-31, midnight UTC).
func ParseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, invalidf("expects a date such as 2024-01-31 or 2024-01-31T15:04:05Z")
}

// quoted reads the phrase opening at s[i] == '"' and returns it and the index
// after its closing quote (or the end: an unclosed quote runs to the end).
func quoted(s string, i int) (string, int) {
	end := strings.IndexByte(s[i+1:], '"')
	if end < 0 {
		return s[i+1:], len(s)
	}
	return s[i+1 : i+1+end], i + 2 + end
}

// bareWord reads up to the next space or quote. A word that is a filter key
// followed by a quote ("from:"…") stops before the quote.
func bareWord(s string, i int) (string, int) {
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

// invalidf returns a record.ErrInvalid with a message for the caller.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", record.ErrInvalid, fmt.Sprintf(format, args...))
}
