// Package extract turns uploaded and crawled files into a title and plain
// text for indexing: HTML through golang.org/x/net/html (or, for crawled
// pages, into Markdown through html-to-markdown), Markdown by its first
// heading. Of Sift, it uses only internal/textcut.
package extract

import (
	"io"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/sift-search/sift/internal/textcut"
)

// HTML reads an HTML document and returns its title and readable text.
// Block elements become paragraphs, headings keep a "#" per level, list
// items a "- ", preformatted blocks their whitespace. Scripts, styles and
// page furniture (nav, footer, aside, forms, hidden elements) are dropped.
// The title is the <title>, else the first <h1>.
func HTML(r io.Reader) (title, text string, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", err
	}
	title, text = HTMLNode(doc)
	return title, text, nil
}

// Lang returns the language a parsed HTML document declares: the lang
// attribute of its <html> element, as written ("" when there is none).
func Lang(doc *html.Node) string {
	for n := doc.FirstChild; n != nil; n = n.NextSibling {
		if n.Type == html.ElementNode && n.DataAtom == atom.Html {
			for _, a := range n.Attr {
				if a.Namespace == "" && strings.EqualFold(a.Key, "lang") {
					return strings.TrimSpace(a.Val)
				}
			}
			return ""
		}
	}
	return ""
}

// HTMLLang is HTML, also returning the language the document declares
// (Lang).
func HTMLLang(r io.Reader) (title, text, lang string, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", "", err
	}
	title, text = HTMLNode(doc)
	return title, text, Lang(doc), nil
}

// HTMLNode is HTML for a document parsed already.
func HTMLNode(doc *html.Node) (title, text string) {
	w := &walker{}
	w.walk(doc)
	title = collapse(w.title)
	if title == "" {
		title = collapse(w.h1.String())
	}
	return title, strings.TrimSpace(w.b.String())
}

// maxTitleBytes bounds the title collected from <title> or <h1>.
const maxTitleBytes = 1024

type walker struct {
	b      strings.Builder
	pre    int    // depth inside <pre>
	brk    int    // pending line breaks before the next text: 1 line, 2 paragraph
	prefix string // written before the next text (list marker, heading hashes)
	title  string
	h1     strings.Builder
	inH1   bool
}

var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Nav: true, atom.Footer: true, atom.Aside: true, atom.Form: true,
	atom.Iframe: true, atom.Button: true, atom.Select: true, atom.Textarea: true,
	atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Dialog: true,
}

var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Dt: true, atom.Dd: true,
	atom.Blockquote: true, atom.Table: true, atom.Figure: true,
	atom.Figcaption: true, atom.Details: true, atom.Summary: true, atom.Address: true,
	atom.Hr: true, atom.Pre: true, atom.Body: true, atom.Caption: true,
}

func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if a.Val == "true" {
				return true
			}
		case "role":
			if v := strings.ToLower(a.Val); v == "navigation" || v == "banner" || v == "contentinfo" {
				return true
			}
		}
	}
	return false
}

func (w *walker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	default:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.walk(c)
		}
		return
	}
	if n.DataAtom == atom.Title {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode && w.title == "" {
				w.title = textcut.Prefix(c.Data, maxTitleBytes)
			}
		}
		return
	}
	if n.DataAtom == atom.Head {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom == atom.Title {
				w.walk(c)
			}
		}
		return
	}
	if skipped[n.DataAtom] || hidden(n) {
		return
	}
	level := headingLevel(n.DataAtom)
	switch {
	case level > 0:
		w.brk = 2
		w.prefix = strings.Repeat("#", level) + " "
		if level == 1 && w.h1.Len() == 0 {
			w.inH1 = true
		}
	case n.DataAtom == atom.Li:
		w.brk = max(w.brk, 1)
		w.prefix = "- "
	case n.DataAtom == atom.Br || n.DataAtom == atom.Tr:
		w.brk = max(w.brk, 1)
	case n.DataAtom == atom.Td || n.DataAtom == atom.Th:
		if w.brk == 0 && w.b.Len() > 0 {
			w.prefix = " | "
		}
	case blocks[n.DataAtom]:
		w.brk = 2
	}
	if n.DataAtom == atom.Pre {
		w.pre++
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
	if n.DataAtom == atom.Pre {
		w.pre--
	}
	if level > 0 || blocks[n.DataAtom] {
		w.brk = 2
	} else if n.DataAtom == atom.Li || n.DataAtom == atom.Tr {
		w.brk = max(w.brk, 1)
	}
	if level == 1 {
		w.inH1 = false
	}
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// text writes a text node: verbatim inside <pre>, else with whitespace runs
// collapsed to one space.
func (w *walker) text(s string) {
	if w.inH1 && w.h1.Len() < maxTitleBytes {
		w.h1.WriteString(textcut.Prefix(s, maxTitleBytes-w.h1.Len()))
	}
	if w.pre == 0 {
		s = collapseKeepEdges(s)
		if strings.TrimSpace(s) == "" {
			if s != "" && w.brk == 0 && w.b.Len() > 0 && !endsWithSpace(&w.b) {
				w.b.WriteByte(' ')
			}
			return
		}
	}
	if w.b.Len() > 0 && w.brk > 0 {
		if w.brk == 2 {
			w.b.WriteString("\n\n")
		} else {
			w.b.WriteString("\n")
		}
		if w.pre == 0 {
			s = strings.TrimLeftFunc(s, unicode.IsSpace)
		}
	} else if w.b.Len() == 0 && w.pre == 0 {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	w.brk = 0
	w.b.WriteString(w.prefix)
	w.prefix = ""
	w.b.WriteString(s)
}

func endsWithSpace(b *strings.Builder) bool {
	s := b.String()
	return s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\n')
}

// collapseKeepEdges collapses whitespace runs to single spaces, keeping one
// at either end if there was any, so words of adjacent nodes stay apart.
func collapseKeepEdges(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
