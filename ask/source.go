package ask

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/semantic"
)

// Source is a passage an answer is grounded in, numbered by its place in
// the list (the first is [1]).
type Source struct {
	Type       string  // "message" (a conversation window) or "document" (a passage)
	Score      float64 // the semantic-search score, in [0, 1]
	Title      string  // document passage: title and heading; conversation: channel and date
	SourceName string  // the source (platform instance) it comes from
	SourceType string  // discord, slack, upload, web, …
	Authors    []string
	Channel    string
	Time       time.Time // first message, or the document's last update
	URL        string    // deep link: platform message or page with a text fragment
	PageURL    string    // Sift's own page of it: /t/:slug.:id (its conversation) or /d/:slug#:~:text=…
	Text       string    // the whole passage, as the model sees it
}

func newSource(h *semantic.Hit, link func(*semantic.Hit) (string, string)) Source {
	s := Source{
		Type: h.Type, Score: h.Score, Title: h.Title, SourceName: h.Source, SourceType: h.SourceType,
		Authors: h.Authors, Channel: h.Channel, Time: h.Time, Text: h.Content,
	}
	if link != nil {
		s.URL, s.PageURL = link(h)
	}
	return s
}

// Metadata is the human-readable origin of the source: its authors and
// channel for a conversation, its title and source for a document; with
// detail, also the platform and the date.
func (s *Source) Metadata(detail bool) string {
	var b strings.Builder
	if s.Type == "message" {
		b.WriteString(authorList(s.Authors))
		if s.Channel != "" {
			if b.Len() > 0 {
				b.WriteString(" in ")
			}
			b.WriteString("#" + s.Channel)
		}
		if detail {
			if s.SourceName != "" {
				fmt.Fprintf(&b, " on %s", s.SourceName)
				if s.SourceType != "" {
					fmt.Fprintf(&b, " (%s)", s.SourceType)
				}
			}
			if !s.Time.IsZero() {
				fmt.Fprintf(&b, ", %s", s.Time.UTC().Format("2006-01-02 15:04 MST"))
			}
		}
		return b.String()
	}
	b.WriteString(s.Title)
	if s.SourceName != "" {
		fmt.Fprintf(&b, " (%s)", s.SourceName)
	}
	if detail && !s.Time.IsZero() {
		fmt.Fprintf(&b, ", updated %s", s.Time.UTC().Format("2006-01-02"))
	}
	return b.String()
}

// authorList names up to three authors, then how many more.
func authorList(names []string) string {
	switch {
	case len(names) <= 3:
		return strings.Join(names, ", ")
	default:
		return fmt.Sprintf("%s and %d others", strings.Join(names[:3], ", "), len(names)-3)
	}
}

// previewChars bounds a source's preview.
const previewChars = 200

// Preview is the beginning of the passage on one line, cut at a word
// boundary with "…" when longer than previewChars characters.
func (s *Source) Preview() string {
	text := strings.Join(strings.Fields(mdtext.Plain(s.Text)), " ")
	if utf8.RuneCountInString(text) <= previewChars {
		return text
	}
	end := 0
	for i := 0; i < previewChars; i++ {
		_, w := utf8.DecodeRuneInString(text[end:])
		end += w
	}
	if cut := strings.LastIndexFunc(text[:end], unicode.IsSpace); cut > end*3/4 {
		end = cut
	}
	return strings.TrimRightFunc(text[:end], func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}
