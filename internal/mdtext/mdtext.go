// Package mdtext turns Markdown (Plain) and chat messages' light markup
// (PlainChat) into the plain text a reader sees: what snippets,
// descriptions and previews show. Its output carries no markup: no heading
// markers, emphasis, code fences, table pipes, link destinations, images
// or raw HTML. Valid UTF-8 stays valid; no input makes it panic (FuzzPlain,
// FuzzPlainChat).
package mdtext

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/sift-search/sift/internal/textcut"
)

// CellSep separates a table row's cells in plain text.
const CellSep = " · "

// md parses GitHub-flavoured Markdown as the document pages render it
// (tables, strikethrough, task lists), without linkify: a bare address is
// text either way.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))

// Plain returns the text of Markdown src: one line per paragraph, heading,
// list item, table row and code line; words within a paragraph joined by
// spaces. Link texts and code are kept; link destinations, images, raw
// HTML and thematic breaks are dropped. O(len(md)).
func Plain(src string) string {
	if TooDeep(src) {
		return strings.TrimSpace(strings.ToValidUTF8(src, "\uFFFD")) // not parsed: see MaxDepth
	}
	source := []byte(src)
	doc := md.Parser().Parse(text.NewReader(source))
	w := writer{source: source, b: make([]byte, 0, len(src))}
	_ = ast.Walk(doc, w.node)
	return string(bytes.TrimRight(w.b, "\n "))
}

// PlainLine is Plain on one line: whitespace collapsed to single spaces,
// cut to at most max bytes at a space with "…" where it was cut. Only the
// beginning of a long src is read, so its cost depends on max, not src.
func PlainLine(src string, max int) string {
	if max <= 0 {
		return ""
	}
	s := strings.Join(strings.Fields(Plain(head(src, 8*max+256))), " ")
	return Cut(s, max)
}

// head is about the first n bytes of Markdown md: cut after a paragraph,
// else after a line, where one ends in the second half.
func head(md string, n int) string {
	if len(md) <= n {
		return md
	}
	md = textcut.Prefix(md, n)
	if i := strings.LastIndex(md, "\n\n"); i > n/2 {
		return md[:i]
	}
	if i := strings.LastIndexByte(md, '\n'); i > n/2 {
		return md[:i]
	}
	return md
}

// Cut shortens one line of text to at most max bytes, at a space where one
// is near, ending with "…" when anything was cut.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	if max < len(ellipsis) {
		return textcut.Prefix(s, max)
	}
	p := textcut.Prefix(s, max-len(ellipsis))
	if i := strings.LastIndexByte(p, ' '); s[len(p)] != ' ' && i > len(p)/2 {
		p = p[:i] // not within a word
	}
	return strings.TrimRight(p, " ,;:") + ellipsis
}

// writer collects a tree's text.
type writer struct {
	source []byte
	b      []byte
	sep    bool // a table cell began: CellSep goes before its text, if any
}

func (w *writer) node(n ast.Node, entering bool) (ast.WalkStatus, error) {
	switch n := n.(type) {
	case *ast.Image, *ast.RawHTML, *ast.HTMLBlock, *east.TaskCheckBox:
		return ast.WalkSkipChildren, nil
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		if entering {
			w.lines(n)
		}
		return ast.WalkSkipChildren, nil
	case *ast.Text:
		if entering {
			w.text(n.Segment.Value(w.source), !n.IsRaw())
			switch {
			case n.HardLineBreak():
				w.newline()
			case n.SoftLineBreak():
				w.b = append(w.b, ' ')
			}
		}
	case *ast.String:
		if entering {
			w.text(n.Value, !n.IsRaw() && !n.IsCode())
		}
	case *ast.AutoLink:
		if entering {
			w.write(n.Label(w.source))
		}
	case *east.TableCell:
		w.sep = entering && n.PreviousSibling() != nil

	default:
		if !entering && n.Type() == ast.TypeBlock {
			w.newline()
		}
	}
	return ast.WalkContinue, nil
}

// text writes a piece of inline text, with backslash escapes and
// character references resolved unless it is raw (code).
func (w *writer) text(v []byte, cooked bool) {
	if cooked && bytes.ContainsAny(v, `\&`) {
		v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
	}
	if !cooked && bytes.IndexByte(v, '\n') >= 0 {
		v = bytes.ReplaceAll(v, []byte{'\n'}, []byte{' '}) // a code span's line break is a space
	}
	if n := len(w.b); n == 0 || w.b[n-1] == ' ' || w.b[n-1] == '\n' {
		v = bytes.TrimLeft(v, " ") // after a dropped image or at a line's start
	}
	w.write(v)
}

// write adds text, after the separator of the table cell it begins. An
// empty cell has no separator: a row of three cells, one empty, is "a · b".
func (w *writer) write(v []byte) {
	if len(v) == 0 {
		return
	}
	if w.sep {
		if n := len(w.b); n > 0 && w.b[n-1] != '\n' {
			w.b = append(w.b, CellSep...)
		}
		w.sep = false
	}
	w.b = append(w.b, v...)
}

// lines writes a code block's lines as they are.
func (w *writer) lines(n ast.Node) {
	l := n.Lines()
	for i := range l.Len() {
		seg := l.At(i)
		w.write(bytes.TrimRight(seg.Value(w.source), " \t\r\n"))
		w.newline()
	}
}

// newline ends the current line, if anything is on it, without the
// line's trailing spaces.
func (w *writer) newline() {
	w.sep = false
	w.b = bytes.TrimRight(w.b, " ")
	if len(w.b) > 0 && w.b[len(w.b)-1] != '\n' {
		w.b = append(w.b, '\n')
	}
}
