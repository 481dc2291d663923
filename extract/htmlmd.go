package extract

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	htmlmd "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxLinkBytes bounds a link destination kept in the Markdown of
// HTMLMarkdown; a longer link keeps only its text, so long URLs do not
// flood the index with tokens.
const MaxLinkBytes = 100

// converter is safe for concurrent use (it locks internally).
var converter = htmlmd.NewConverter(htmlmd.WithPlugins(
	base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(
		commonmark.WithBulletListMarker("-"),
		commonmark.WithListEndComment(false),
		commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
	),
	table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal)),
))

// HTMLMarkdown is HTMLNode with the text as GitHub-flavoured Markdown:
// headings, nested lists, tables, links, emphasis, fenced code blocks (with
// the language of a class="language-x") and inline code are kept. Content
// is chosen as by HTMLNode: scripts, styles, page furniture and hidden
// elements are dropped. A first <h1> repeating the title is dropped too
// (the page shows the title). Images become their alt text. Links are
// resolved against page (and a <base href>): links within page's host
// become root-relative ("/docs/x"), others stay absolute; a link that is
// neither http(s) nor a "#fragment", or longer than MaxLinkBytes, keeps
// only its text. doc is not modified. The result is valid UTF-8. O(n) in
// the size of doc.
func HTMLMarkdown(doc *html.Node, page *url.URL) (title, markdown string, err error) {
	title, _ = HTMLNode(doc)
	if page != nil {
		page = baseHref(doc, page)
	}
	body := findBody(doc)
	if body == nil {
		return title, "", nil
	}
	root := &html.Node{Type: html.DocumentNode}
	root.AppendChild(prune(body, page))
	dropTitleHeading(root, title)
	md, err := convert(root)
	if err != nil {
		return "", "", err
	}
	return title, strings.TrimSpace(strings.ToValidUTF8(md, "\uFFFD")), nil
}

// convert runs the converter; a panic in it is an error, so one odd page
// cannot stop a crawl.
func convert(root *html.Node) (md string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("convert HTML to Markdown: panic: %v", r)
		}
	}()
	b, err := converter.ConvertNode(root)
	if err != nil {
		return "", fmt.Errorf("convert HTML to Markdown: %w", err)
	}
	return string(b), nil
}

func findBody(n *html.Node) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == atom.Body {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if b := findBody(c); b != nil {
			return b
		}
	}
	return nil
}

// baseHref is page resolved with the document's <base href>, if any.
func baseHref(doc *html.Node, page *url.URL) *url.URL {
	var found string
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.DataAtom == atom.Base {
			if found = attrOf(n, "href"); found != "" {
				return true
			}
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Body {
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	if walk(doc) {
		if b, err := page.Parse(found); err == nil {
			return b
		}
	}
	return page
}

// prune copies n without the content HTMLNode drops, with links rewritten
// (see HTMLMarkdown) and images turned into their alt text.
func prune(n *html.Node, page *url.URL) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace, Attr: slices.Clone(n.Attr)}
	if n.Type == html.ElementNode {
		switch n.DataAtom {
		case atom.A:
			if dest, ok := linkDest(attrOf(n, "href"), page); ok {
				c.Attr = []html.Attribute{{Key: "href", Val: dest}}
			} else {
				c.DataAtom, c.Data, c.Attr = atom.Span, "span", nil
			}
		case atom.Img:
			return &html.Node{Type: html.TextNode, Data: attrOf(n, "alt")}
		}
	}
	// Comments go, and runs of text nodes become one here, in linear time:
	// the converter would merge them by repeated concatenation.
	var text strings.Builder
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		switch {
		case ch.Type == html.CommentNode:
			continue
		case ch.Type == html.TextNode:
			text.WriteString(ch.Data)
			continue
		case ch.Type == html.ElementNode && (skipped[ch.DataAtom] || hidden(ch)):
			continue
		}
		flushText(c, &text)
		c.AppendChild(prune(ch, page))
	}
	flushText(c, &text)
	return c
}

func flushText(parent *html.Node, text *strings.Builder) {
	if text.Len() > 0 {
		parent.AppendChild(&html.Node{Type: html.TextNode, Data: text.String()})
		text.Reset()
	}
}

// linkDest is the destination kept for a link's href, if any.
func linkDest(href string, page *url.URL) (string, bool) {
	href = strings.TrimSpace(href)
	u, err := url.Parse(href)
	if href == "" || err != nil {
		return "", false
	}
	if strings.HasPrefix(href, "#") {
		return href, len(href) <= MaxLinkBytes
	}
	if page != nil {
		u = page.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false
	}
	dest := u.String()
	if page != nil && strings.EqualFold(u.Host, page.Host) && u.Scheme == page.Scheme {
		dest = u.RequestURI()
		if u.Fragment != "" {
			dest += "#" + u.EscapedFragment()
		}
	}
	return dest, len(dest) <= MaxLinkBytes
}

// dropTitleHeading removes the first heading when it comes before any
// text, is an <h1> and says title.
func dropTitleHeading(root *html.Node, title string) {
	var first *html.Node
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode && strings.TrimSpace(n.Data) != "":
			return true
		case n.Type == html.ElementNode && headingLevel(n.DataAtom) > 0:
			first = n
			return true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(root)
	if first != nil && first.DataAtom == atom.H1 && title != "" && collapse(textOf(first)) == title {
		first.Parent.RemoveChild(first)
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
