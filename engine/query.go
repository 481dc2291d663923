package engine

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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
	return strings.TrimSpace(q.Text) == "" && len(q.Phrases) == 0 && !q.hasFilter()
}

func (q *ParsedQuery) hasFilter() bool {
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
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		neg := false
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
			if neg {
				q.ExcludePhrases = append(q.ExcludePhrases, phrase)
			} else {
				q.Phrases = append(q.Phrases, phrase)
			}
			continue
		}
		word, next := bareWord(s, i)
		if word == "" { // "-" before a space of another script
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		i = next
		if key, val, ok := strings.Cut(word, ":"); ok && !neg {
			if handled, err := q.filter(strings.ToLower(key), val, s, &i); err != nil {
				return q, err
			} else if handled {
				continue
			}
		}
		if neg {
			q.Exclude = append(q.Exclude, word)
		} else {
			text = append(text, word)
		}
	}
	q.Text = strings.Join(text, " ")
	return q, nil
}

// filter applies key:val if key is a filter; a quoted value ("from:"Ana K"")
// is read from s at *i, just past the colon.
func (q *ParsedQuery) filter(key, val, s string, i *int) (bool, error) {
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
	default:
		return false, nil
	}
	if val == "" && *i < len(s) && s[*i] == '"' {
		val, *i = quoted(s, *i)
	}
	if val == "" {
		return false, nil
	}
	if dst != nil {
		*dst = val
		return true, nil
	}
	t, err := ParseDate(val)
	if err != nil {
		return false, invalidf("%s:%s: %v", key, val, err)
	}
	*date = t
	return true, nil
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
