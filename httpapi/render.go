package httpapi

import (
	"bytes"
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// renderMessage turns a chat message into safe HTML: fenced code blocks
// (```) and inline code, http(s) links, line breaks; everything else is
// escaped text. Nothing a message holds becomes markup of its own.
func renderMessage(content string) template.HTML {
	var b strings.Builder
	for content != "" {
		start := strings.Index(content, "```")
		if start < 0 {
			inline(&b, content)
			break
		}
		end := strings.Index(content[start+3:], "```")
		if end < 0 {
			inline(&b, content)
			break
		}
		inline(&b, content[:start])
		code := content[start+3 : start+3+end]
		// A language tag on the fence's first line is not code.
		if nl := strings.IndexByte(code, '\n'); nl >= 0 && !strings.ContainsAny(code[:nl], " \t") {
			code = code[nl+1:]
		}
		b.WriteString("<pre><code>")
		b.WriteString(html.EscapeString(strings.TrimRight(code, "\n")))
		b.WriteString("</code></pre>")
		content = strings.TrimPrefix(content[start+3+end+3:], "\n")
	}
	return template.HTML(b.String())
}

// linkPattern finds web addresses in message text; only http and https
// become links.
var linkPattern = regexp.MustCompile(`https?://[^\s<>"'` + "`" + `]+`)

// inline writes text with `code` spans, links and line breaks.
func inline(b *strings.Builder, s string) {
	parts := strings.Split(s, "`")
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1: // between two backticks
			b.WriteString("<code>")
			b.WriteString(html.EscapeString(p))
			b.WriteString("</code>")
		default:
			if i%2 == 1 {
				b.WriteString("`") // an unmatched backtick stays text
			}
			links(b, p)
		}
	}
}

func links(b *strings.Builder, s string) {
	for {
		loc := linkPattern.FindStringIndex(s)
		if loc == nil {
			breaks(b, s)
			return
		}
		u := strings.TrimRight(s[loc[0]:loc[1]], ".,;:!?)]}")
		breaks(b, s[:loc[0]])
		b.WriteString(`<a href="`)
		b.WriteString(html.EscapeString(u))
		b.WriteString(`" rel="nofollow ugc noopener">`)
		b.WriteString(html.EscapeString(u))
		b.WriteString("</a>")
		s = s[loc[0]+len(u):]
	}
}

func breaks(b *strings.Builder, s string) {
	b.WriteString(strings.ReplaceAll(html.EscapeString(s), "\n", "<br>\n"))
}

// markdown renders documents: GitHub-flavoured Markdown, raw HTML left
// out (goldmark's default), heading ids for anchors.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
)

// sanitizer is the second fence: whatever the Markdown renderer lets
// through is cut to user-content HTML (no scripts, handlers, javascript:).
var sanitizer = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("id").OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+-]+$`)).OnElements("code")
	p.RequireNoFollowOnLinks(true)
	return p
}()

// headingIDs is applied in argument order: the longer forms come first.
var headingIDs = strings.NewReplacer(
	`<h1 id="`, `<h2 id="h-`, "<h1", "<h2", "</h1>", "</h2>",
	`<h2 id="`, `<h2 id="h-`, `<h3 id="`, `<h3 id="h-`, `<h4 id="`, `<h4 id="h-`, `<h5 id="`, `<h5 id="h-`, `<h6 id="`, `<h6 id="h-`,
)

// renderMarkdown turns a Markdown document into sanitised HTML. The page
// has its title as its only h1: a first "# " heading repeating the title
// is dropped, and other level-1 headings become level 2.
func renderMarkdown(src, title string) template.HTML {
	if first, rest, _ := strings.Cut(strings.TrimLeft(src, "\n"), "\n"); strings.TrimSpace(strings.TrimPrefix(first, "# ")) == title && strings.HasPrefix(first, "# ") {
		src = rest
	}
	var b bytes.Buffer
	if err := markdown.Convert([]byte(src), &b); err != nil {
		return renderText(src)
	}
	out := string(sanitizer.SanitizeBytes(b.Bytes()))
	// Level-1 headings become level 2; heading ids get a prefix so they
	// cannot collide with the page's own ids.
	out = headingIDs.Replace(out)
	return template.HTML(out)
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
