package crawl

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/sift-search/sift/extract"
	"github.com/sift-search/sift/record"
)

// page is what the crawler reads from a fetched page.
type page struct {
	title, text       string
	format            string // record.FormatText or record.FormatMarkdown
	lang              string // the language the page declares (html lang), normalised; "" for none
	links             []*url.URL
	canonical         *url.URL
	noindex, nofollow bool
}

// parsePage reads an HTML, plain-text or Markdown answer.
func parsePage(res *response, base *url.URL) (*page, error) {
	mt, _, err := mime.ParseMediaType(res.contentType)
	if err != nil && res.contentType != "" {
		return nil, fmt.Errorf("content type %q", res.contentType)
	}
	p := &page{format: record.FormatText}
	robotsDirectives(res.robotsTag, p)
	switch mt {
	case "text/plain", "text/markdown", "text/x-markdown", "text/html", "application/xhtml+xml", "":
	default:
		return nil, fmt.Errorf("not a page (%s)", mt)
	}
	// Pages in Latin-1, Shift JIS… become UTF-8 (by the Content-Type's
	// charset, a BOM or <meta charset>).
	body, err := charset.NewReader(bytes.NewReader(res.body), res.contentType)
	if err != nil {
		return nil, fmt.Errorf("charset: %w", err)
	}
	if mt == "text/plain" || mt == "text/markdown" || mt == "text/x-markdown" {
		b, err := io.ReadAll(io.LimitReader(body, 4*maxPageBytes))
		if err != nil {
			return nil, fmt.Errorf("charset: %w", err)
		}
		p.text = cleanText(string(b))
		if mt != "text/plain" {
			p.title = cleanLine(extract.MarkdownTitle(p.text))
			p.format = record.FormatMarkdown
		}
		return p, nil
	}
	doc, err := html.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("HTML: %w", err)
	}
	// Markdown keeps the page's structure for its /d/ page; plain text
	// only if the converter fails.
	p.format = record.FormatMarkdown
	p.title, p.text, err = extract.HTMLMarkdown(doc, base)
	if err != nil {
		p.format = record.FormatText
		p.title, p.text = extract.HTMLNode(doc)
	}
	p.title, p.text = cleanLine(p.title), cleanText(p.text)
	if lang, ok := record.NormLanguage(extract.Lang(doc)); ok {
		p.lang = lang // a junk lang attribute is ignored
	}
	links := map[string]bool{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Base:
				if h := attr(n, "href"); h != "" {
					if b, err := base.Parse(h); err == nil {
						base = b
					}
				}
			case atom.Link:
				if strings.EqualFold(attr(n, "rel"), "canonical") && p.canonical == nil {
					if u, err := base.Parse(attr(n, "href")); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
						p.canonical = normalizeURL(u)
					}
				}
			case atom.Meta:
				if name := strings.ToLower(attr(n, "name")); name == "robots" || name == robotsToken {
					robotsDirectives(attr(n, "content"), p)
				}
			case atom.A, atom.Area:
				h := strings.TrimSpace(attr(n, "href"))
				if h == "" || strings.HasPrefix(h, "#") || strings.Contains(strings.ToLower(attr(n, "rel")), "nofollow") {
					break
				}
				if u, err := base.Parse(h); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
					u = normalizeURL(u)
					if s := u.String(); !links[s] && len(links) < 5000 {
						links[s] = true
						p.links = append(p.links, u)
					}
				}
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	return p, nil
}

// robotsDirectives reads "noindex, nofollow" (a meta robots content or an
// X-Robots-Tag header).
func robotsDirectives(v string, p *page) {
	for _, d := range strings.Split(strings.ToLower(v), ",") {
		switch strings.TrimSpace(d) {
		case "noindex", "none":
			p.noindex = true
			if strings.TrimSpace(d) == "none" {
				p.nofollow = true
			}
		case "nofollow":
			p.nofollow = true
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// cleanText makes page text safe to store: valid UTF-8, no control
// characters but line breaks and tabs.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		if r == '\r' {
			return -1
		}
		return ' '
	}, s))
}

// cleanLine is cleanText on one line (a title).
func cleanLine(s string) string {
	return strings.Join(strings.Fields(cleanText(s)), " ")
}
