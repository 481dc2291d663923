package httpapi

import (
	"bytes"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"

	"github.com/sift-search/sift/internal/mdtext"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// markdown renders documents: GitHub-flavoured Markdown, raw HTML left
// out (goldmark's default). Heading ids and links are set on the parsed
// tree by renderMarkdown.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// sanitizer is the second fence: whatever the Markdown renderer lets
// through is cut to user-content HTML (no scripts, handlers, javascript:).
// Links to other sites get rel=nofollow; links within Sift (/d/…) do not.
var sanitizer = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("id").OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+-]+$`)).OnElements("code")
	p.RequireNoFollowOnLinks(false) // UGCPolicy sets it for every link
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	return p
}()

// levelOne turns level-1 headings into level 2 (the page's title is its
// only h1).
var levelOne = strings.NewReplacer("<h1", "<h2", "</h1>", "</h2>")

// renderMarkdown turns a Markdown document into sanitised HTML. The page
// has its title as its only h1: a first "# " heading repeating the title
// is dropped, and other level-1 headings become level 2. Headings get
// GitHub's ids (see headingIDs). link, if not nil, maps each link's
// destination to the one shown (see docLinker).
func renderMarkdown(src, title string, link func(dest string) string) template.HTML {
	if mdtext.TooDeep(src) {
		return renderText(src) // not parsed: see mdtext.MaxDepth
	}
	ids := headingIDs{used: make(map[string]bool), next: make(map[string]int)}
	if first, rest, _ := strings.Cut(strings.TrimLeft(src, "\n"), "\n"); strings.TrimSpace(strings.TrimPrefix(first, "# ")) == title && strings.HasPrefix(first, "# ") {
		src = rest
		ids.id(title) // the dropped heading's id, so later ones number as on GitHub
	}
	source := []byte(src)
	doc := markdown.Parser().Parse(text.NewReader(source))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			n.SetAttributeString("id", []byte(ids.id(plainText(n, source))))
		case *ast.Link:
			if link != nil {
				n.Destination = []byte(link(string(n.Destination)))
			}
		}
		return ast.WalkContinue, nil
	})
	var b bytes.Buffer
	if err := markdown.Renderer().Render(&b, source, doc); err != nil {
		return renderText(src)
	}
	return template.HTML(levelOne.Replace(string(sanitizer.SanitizeBytes(b.Bytes()))))
}

// plainText is the text a heading shows: its text and code, without
// markup, link destinations or images.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Image, *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			b.Write(c.Value(source))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// pageIDs are the ids the document page's layout uses itself
// (templates/layout.html, document.html); a heading whose id would be one
// of them gets the prefix "h-".
var pageIDs = map[string]bool{"main": true, "doc-h": true}

// headingIDs gives headings GitHub's ids, so fragments written for a
// document's original home work here: lower case, spaces become '-',
// punctuation is dropped, and a repeated id gets -1, -2, … appended.
type headingIDs struct {
	used map[string]bool
	next map[string]int // per base id, the last suffix given
}

func (h *headingIDs) id(heading string) string {
	base := githubID(heading)
	if base == "" {
		base = "section"
	}
	if pageIDs[base] {
		base = "h-" + base
	}
	id, n := base, h.next[base]
	for h.used[id] {
		n++
		id = base + "-" + strconv.Itoa(n)
	}
	h.next[base], h.used[id] = n, true
	return id
}

// githubID is GitHub's anchor for a heading's text (github-slugger):
// letters, digits, marks, '_' and '-' are kept, lower-cased; spaces become
// '-'; everything else is dropped.
func githubID(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r) || unicode.Is(unicode.Nl, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// renderText shows a plain-text document (an upload or a crawled page's
// text) as paragraphs, escaped.
func renderText(src string) template.HTML {
	var b strings.Builder
	for _, para := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n\n") {
		if para = strings.Trim(para, "\n"); para == "" {
			continue
		}
		b.WriteString("<p>")
		breaks(&b, para)
		b.WriteString("</p>\n")
	}
	return template.HTML(b.String())
}
