package httpapi

import (
	"html"
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chat messages are stored as their authors typed them: Discord's
// Markdown, Slack's mrkdwn (crawl/slack_text.go resolves its <…> escapes
// to text), Telegram's text with its entities flattened. The renderer
// below shows their formatting — emphasis, strike, spoilers, code, quotes,
// links — and nothing else: every character of a message is escaped, and
// the only tags are the renderer's own, always balanced. One pass over the
// blocks, one over each block's tokens and one to pair markers: O(n).

// chatDialect is how a platform reads the markers that differ between
// them.
type chatDialect struct {
	star      string // the element of *x*: em on Discord, strong on Slack
	tilde     bool   // ~x~ strikes (Slack); elsewhere only ~~x~~ does
	bareQuote bool   // ">x" quotes without a space after '>' (Slack)
}

var (
	markdownChat = chatDialect{star: "em"}
	slackChat    = chatDialect{star: "strong", tilde: true, bareQuote: true}
)

// dialectOf is the dialect of a source's messages: Slack's mrkdwn for
// Slack, Discord's Markdown for the others.
func dialectOf(sourceType string) chatDialect {
	if sourceType == "slack" {
		return slackChat
	}
	return markdownChat
}

// renderMessage renders a message of no particular platform.
func renderMessage(content string) template.HTML {
	return renderChat(content, markdownChat)
}

// renderChat turns a chat message into safe HTML: ``` code blocks, quotes
// ("> " lines; ">>> " quotes the rest), and inline formatting (see
// chatInline).
func renderChat(content string, d chatDialect) template.HTML {
	var b strings.Builder
	quoted := false
	for _, bl := range chatBlocks(content, d) {
		switch {
		case bl.quoted && !quoted:
			b.WriteString("<blockquote>")
		case !bl.quoted && quoted:
			b.WriteString("</blockquote>")
		}
		quoted = bl.quoted
		if !bl.code {
			chatInline(&b, bl.text, d)
			continue
		}
		b.WriteString("<pre><code>")
		b.WriteString(html.EscapeString(bl.text))
		b.WriteString("</code></pre>")
	}
	if quoted {
		b.WriteString("</blockquote>")
	}
	return template.HTML(b.String())
}

// chatBlock is a code block or a run of lines, quoted or not.
type chatBlock struct {
	text   string
	code   bool
	quoted bool
}

// chatBlocks splits a message at its ``` fences, then the text between
// them into runs of quoted and unquoted lines.
func chatBlocks(s string, d chatDialect) []chatBlock {
	var out []chatBlock
	q := quoter{d: d, lineStart: true}
	for s != "" {
		start := strings.Index(s, "```")
		end := -1
		if start >= 0 {
			end = strings.Index(s[start+3:], "```")
		}
		if end < 0 {
			return q.lines(out, s)
		}
		out = q.lines(out, strings.TrimSuffix(s[:start], "\n"))
		code := s[start+3 : start+3+end]
		// A language tag on the fence's first line is not code.
		if nl := strings.IndexByte(code, '\n'); nl >= 0 && !strings.ContainsAny(code[:nl], " \t") {
			code = code[nl+1:]
		}
		out = append(out, chatBlock{text: strings.TrimRight(code, "\n"), code: true, quoted: q.rest})
		s, q.lineStart = strings.CutPrefix(s[start+3+end+3:], "\n")
	}
	return out
}

// quoter sorts lines into quoted and unquoted runs.
type quoter struct {
	d         chatDialect
	rest      bool // a ">>> " line quoted the rest of the message
	lineStart bool // the next text starts a line (not after a fence on its line)
}

// lines appends text's lines to out, joining neighbours of one kind.
func (q *quoter) lines(out []chatBlock, text string) []chatBlock {
	if text == "" {
		return out
	}
	for i, line := range strings.Split(text, "\n") {
		line, quoted := q.quote(line, i > 0 || q.lineStart)
		if n := len(out); n > 0 && !out[n-1].code && out[n-1].quoted == quoted && i > 0 {
			out[n-1].text += "\n" + line
			continue
		}
		out = append(out, chatBlock{text: line, quoted: quoted})
	}
	return out
}

// quote strips a line's quote marker and says whether it is quoted.
func (q *quoter) quote(line string, atStart bool) (string, bool) {
	switch {
	case q.rest:
		return line, true
	case !atStart:
		return line, false
	}
	if rest, ok := cutMarker(line, ">>>"); ok {
		q.rest = true
		return rest, true
	}
	if rest, ok := cutMarker(line, ">"); ok {
		return rest, true
	}
	if q.d.bareQuote && strings.HasPrefix(line, ">") {
		return line[1:], true
	}
	return line, false
}

// cutMarker cuts a quote marker followed by a space, or alone on its line.
func cutMarker(line, marker string) (string, bool) {
	if line == marker {
		return "", true
	}
	return strings.CutPrefix(line, marker+" ")
}

// chatInline writes a run of lines with code spans, links, emphasis and
// line breaks.
func chatInline(b *strings.Builder, s string, d chatDialect) {
	toks := chatTokens(s, d)
	pairMarks(toks)
	for _, t := range toks {
		switch t.kind {
		case tokText:
			b.WriteString(html.EscapeString(t.s))
		case tokBreak:
			b.WriteString("<br>\n")
		case tokCode:
			b.WriteString("<code>")
			b.WriteString(html.EscapeString(t.s))
			b.WriteString("</code>")
		case tokLink:
			u := html.EscapeString(t.s)
			b.WriteString(`<a href="` + u + `" rel="nofollow ugc noopener">` + u + "</a>")
		case tokMark:
			switch {
			case t.role == opens && t.tag == "span":
				b.WriteString(`<span class="spoiler" tabindex="0">`)
			case t.role == opens:
				b.WriteString("<" + t.tag + ">")
			case t.role == closes:
				b.WriteString("</" + t.tag + ">")
			default:
				b.WriteString(html.EscapeString(t.s))
			}
		}
	}
}

type tokKind uint8

const (
	tokText tokKind = iota
	tokBreak
	tokCode
	tokLink
	tokMark
)

type markRole uint8

const (
	literal markRole = iota
	opens
	closes
)

// chatToken is a piece of a line: text, a line break, a code span, a link,
// or a run of emphasis markers that may open or close an element.
type chatToken struct {
	kind     tokKind
	s        string // the text, code, address or marker
	tag      string // of a marker: the element it makes
	canOpen  bool
	canClose bool
	role     markRole
}

// chatTokens cuts s into tokens, left to right; code spans and links are
// taken whole, so markers inside them are not read.
func chatTokens(s string, d chatDialect) []chatToken {
	var toks []chatToken
	ticks := newTickRuns(s)
	text := 0 // where the pending text began
	flush := func(end int) {
		if end > text {
			toks = append(toks, chatToken{kind: tokText, s: s[text:end]})
		}
	}
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '`':
			n := runLen(s, i)
			if end, ok := ticks.closer(i, n); ok {
				flush(i)
				toks = append(toks, chatToken{kind: tokCode, s: s[i+n : end]})
				i = end + n
				text = i
				continue
			}
			i += n
		case '\n':
			flush(i)
			toks = append(toks, chatToken{kind: tokBreak})
			i++
			text = i
		case '*', '_', '~', '|':
			n := runLen(s, i)
			flush(i)
			toks = appendMarks(toks, s, i, n, d)
			i += n
			text = i
		case 'h':
			n := linkLen(s, i)
			if n == 0 {
				i++
				continue
			}
			flush(i)
			toks = append(toks, chatToken{kind: tokLink, s: s[i : i+n]})
			i += n
			text = i
		default:
			i++
		}
	}
	flush(len(s))
	return toks
}

// runLen is the length of the run of s[i] starting at i.
func runLen(s string, i int) int {
	n := 1
	for i+n < len(s) && s[i+n] == s[i] {
		n++
	}
	return n
}

// tickRuns finds the backticks that close code spans: the runs of one and
// of two backticks in order, each list with a cursor that only moves
// forward, so finding every closer is O(n) in all.
type tickRuns struct {
	at  [3][]int
	cur [3]int
}

func newTickRuns(s string) *tickRuns {
	t := &tickRuns{}
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '`')
		if j < 0 {
			break
		}
		i += j
		n := runLen(s, i)
		if n < len(t.at) {
			t.at[n] = append(t.at[n], i)
		}
		i += n
	}
	return t
}

// closer returns where the first run of n backticks after the one at i
// starts. Calls come in increasing i.
func (t *tickRuns) closer(i, n int) (int, bool) {
	if n >= len(t.at) {
		return 0, false
	}
	runs := t.at[n]
	for t.cur[n] < len(runs) && runs[t.cur[n]] <= i {
		t.cur[n]++
	}
	if t.cur[n] == len(runs) {
		return 0, false
	}
	return runs[t.cur[n]], true
}

// appendMarks adds a run of n marker characters at s[i]: an element's
// opener or closer where the platform reads one, else literal text. A run
// of three is two markers, ***x*** being <strong><em>x</em></strong>.
func appendMarks(toks []chatToken, s string, i, n int, d chatDialect) []chatToken {
	marker := s[i : i+n]
	tag := markTag(marker, d)
	if tag == "" && n == 3 && (s[i] == '*' || s[i] == '_') {
		long, short := chatToken{kind: tokMark, s: marker[:2]}, chatToken{kind: tokMark, s: marker[:1]}
		long.tag, short.tag = markTag(long.s, d), markTag(short.s, d)
		open, closer := flanks(s, i, n)
		long.canOpen, long.canClose, short.canOpen, short.canClose = open, closer, open, closer
		if closer && !open {
			return append(toks, short, long)
		}
		return append(toks, long, short)
	}
	if tag == "" {
		return append(toks, chatToken{kind: tokText, s: marker})
	}
	t := chatToken{kind: tokMark, s: marker, tag: tag}
	t.canOpen, t.canClose = flanks(s, i, n)
	return append(toks, t)
}

// markTag is the element a marker makes in a dialect, or "".
func markTag(marker string, d chatDialect) string {
	switch marker {
	case "**":
		return "strong"
	case "*":
		return d.star
	case "__":
		return "u"
	case "_":
		return "em"
	case "~~":
		return "del"
	case "~":
		if d.tilde {
			return "del"
		}
	case "||":
		return "span"
	}
	return ""
}

// flanks says whether the marker run s[i:i+n] may open and may close an
// element, after CommonMark's rules for '_': an opener is followed by
// text, a closer follows text, and neither stands inside a word, so
// snake_case_names and 2*3*4 stay as they are.
func flanks(s string, i, n int) (open, close bool) {
	prev, next := ' ', ' '
	if i > 0 {
		prev, _ = utf8.DecodeLastRuneInString(s[:i])
	}
	if i+n < len(s) {
		next, _ = utf8.DecodeRuneInString(s[i+n:])
	}
	ps, ns := unicode.IsSpace(prev), unicode.IsSpace(next)
	pp, np := isPunct(prev), isPunct(next)
	left := !ns && (!np || ps || pp)
	right := !ps && (!pp || ns || np)
	return left && (!right || pp), right && (!left || np)
}

func isPunct(r rune) bool {
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// pairMarks pairs each closer with the nearest open marker of its kind;
// markers opened after that one, still unclosed, stay text, so elements
// nest. Each marker is pushed and popped at most once: O(n).
func pairMarks(toks []chatToken) {
	var stack []int
	open := map[string]int{} // open markers on the stack, by marker
	for i := range toks {
		t := &toks[i]
		if t.kind != tokMark {
			continue
		}
		if t.canClose && open[t.s] > 0 {
			for {
				j := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				open[toks[j].s]--
				if toks[j].s == t.s {
					toks[j].role, t.role = opens, closes
					break
				}
			}
			continue
		}
		if t.canOpen {
			stack = append(stack, i)
			open[t.s]++
		}
	}
}

// linkLen is the length of the http(s) address starting at s[i], 0 if
// none does. An address starts a word and ends before a space or a quote;
// punctuation that ends a sentence, and a ')' it does not open, are not
// part of it.
func linkLen(s string, i int) int {
	if i > 0 && isWordByte(s[i-1]) {
		return 0
	}
	rest := s[i:]
	scheme := len("https://")
	if !strings.HasPrefix(rest, "https://") {
		if scheme = len("http://"); !strings.HasPrefix(rest, "http://") {
			return 0
		}
	}
	n := scheme
	parens := 0 // '(' minus ')'
	for n < len(rest) && !strings.ContainsRune(" \t\n\r\f<>\"'`", rune(rest[n])) {
		switch rest[n] {
		case '(':
			parens++
		case ')':
			parens--
		}
		n++
	}
	for n > scheme {
		c := rest[n-1]
		if c == ')' && parens >= 0 || c != ')' && !strings.ContainsRune(".,;:!?]}*_~|", rune(c)) {
			break
		}
		if c == ')' {
			parens++
		}
		n--
	}
	if n == scheme {
		return 0
	}
	return n
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// breaks writes text escaped, its line breaks as <br>.
func breaks(b *strings.Builder, s string) {
	b.WriteString(strings.ReplaceAll(html.EscapeString(s), "\n", "<br>\n"))
}
