package ask

import (
	"cmp"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sift-search/sift/internal/mdtext"
)

// A passage is what the extractive answer quotes whole: a sentence (with
// the one before it when it opens with a pronoun), the answer under an FAQ
// question, or a sentence leading into a list, code block or table, with
// the block.
type passage struct {
	text     string   // prose, without inline Markdown
	lines    []string // the list, code or table text leads into, if any
	block    string   // what the answer shows of lines
	code     bool     // lines are code
	question string   // the question it answers (an FAQ's, a chat message's)
	heading  string   // the heading it is under
	source   int      // index in the sources
	pos      int      // order within the source
	section  int      // passages under one heading, question or message share it
	para     int      // passages of one paragraph or list item share it
	item     bool     // in a list item
	row      bool     // a table row
	fits     bool     // of the kind of answer the question expects

	words                int             // of text
	matched              int             // the question's words it holds in text, question or block
	strong               int             // … of those in at most half the candidates
	terms, asked, headed map[string]bool // the question's words in text, question and heading
	listed               map[string]bool // … and in block
	score                float64
}

// Limits of what a passage quotes.
const (
	maxBlockLines = 8  // lines of a list, code block or table
	maxBlockWords = 80 // words of a list or table
	maxItemWords  = 30 // words of one list item
	maxLineBytes  = 120
)

// mdKind is the kind of a Markdown block.
type mdKind int

const (
	mdPara mdKind = iota
	mdHeading
	mdQuestion // an FAQ question line: "**How do I …?**", "Q: …"
	mdList
	mdCode
	mdTable
)

// mdBlock is a paragraph, heading, question line, list, code block or
// table of a source; a chat message starts a new one.
type mdBlock struct {
	kind   mdKind
	text   string   // paragraph, heading or question, lines joined
	lines  []string // list items, code lines, table rows
	msg    int      // the message it is in (chat), counted from 1
	author string
}

// blocks cuts a source's text into blocks.
func blocks(s Source) []mdBlock {
	var out []mdBlock
	var cur *mdBlock
	msg, author := 0, ""
	start := func(k mdKind) *mdBlock {
		out = append(out, mdBlock{kind: k, msg: msg, author: author})
		return &out[len(out)-1]
	}
	fence := false
	for _, line := range strings.Split(s.Text, "\n") {
		t := strings.TrimSpace(line)
		if fence {
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				fence, cur = false, nil
			} else {
				cur.lines = append(cur.lines, strings.TrimRightFunc(line, unicode.IsSpace))
			}
			continue
		}
		if s.Type == "message" {
			if rest, name, ok := cutAuthor(t, s.Authors); ok {
				msg, author, cur = msg+1, name, nil
				t = rest
			}
		}
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			cur, fence = start(mdCode), true
			// A fence may open on a chat message's first line, after text.
		case t == "":
			cur = nil
		case headingLine(t):
			start(mdHeading).text = strings.TrimSpace(strings.Trim(t, "#"))
			cur = nil
		case strings.HasPrefix(t, "|"):
			if cur == nil || cur.kind != mdTable {
				cur = start(mdTable)
			}
			if strings.Trim(t, "|-: ") != "" {
				cur.lines = append(cur.lines, t)
			}
		case listItem(t) != "":
			if cur == nil || cur.kind != mdList {
				cur = start(mdList)
			}
			cur.lines = append(cur.lines, listItem(t))
		case questionLine(t) != "":
			start(mdQuestion).text = questionLine(t)
			cur = nil
		case cur != nil && cur.kind == mdList:
			cur.lines[len(cur.lines)-1] += " " + t // the item goes on
		case cur != nil && cur.kind == mdPara:
			cur.text += " " + t
		default:
			cur = start(mdPara)
			cur.text = strings.TrimSpace(strings.TrimPrefix(t, "A:"))
		}
	}
	return out
}

// headingLine reports whether line is a Markdown heading: "#" to "######"
// and a space.
func headingLine(line string) bool {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	return n >= 1 && n <= 6 && n < len(line) && line[n] == ' '
}

// questionLine returns the question of an FAQ question line — a line all
// in bold that ends with "?", or one starting "Q:" — or "".
func questionLine(line string) string {
	if q, ok := strings.CutPrefix(line, "Q:"); ok {
		return strings.TrimSpace(q)
	}
	for _, mark := range []string{"**", "__"} {
		if len(line) > 4 && strings.HasPrefix(line, mark) && strings.HasSuffix(line, mark) {
			q := strings.TrimSpace(line[2 : len(line)-2])
			if strings.HasSuffix(q, "?") && !strings.Contains(q, mark) {
				return q
			}
		}
	}
	return ""
}

// passages cuts source i into passages, in order.
func passages(i int, s Source) []passage {
	p := passageMaker{source: i, doc: s.Type == "document"}
	if p.doc {
		if _, h, ok := strings.Cut(s.Title, " — "); ok {
			p.heading = h
		} else {
			p.heading = s.Title
		}
	}
	bs := blocks(s)
	for j := 0; j < len(bs); j++ {
		b := &bs[j]
		if j > 0 && b.msg != bs[j-1].msg {
			p.section++
			p.question = chatQuestion(bs, j)
		}
		switch b.kind {
		case mdHeading:
			p.section++
			if strings.HasSuffix(b.text, "?") {
				p.question = b.text
			} else {
				p.heading, p.question = b.text, ""
			}
		case mdQuestion:
			p.section++
			p.question = b.text
		case mdPara:
			var next *mdBlock
			if j+1 < len(bs) && bs[j+1].msg == b.msg && bs[j+1].kind >= mdList {
				next = &bs[j+1]
			}
			p.paragraph(b.text, next)
		default: // a list, code or table
			if j > 0 && bs[j-1].kind == mdHeading && bs[j-1].msg == b.msg {
				// A heading leads into the block right under it.
				if c := p.add(bs[j-1].text, ""); c != nil {
					c.quote(b)
				}
			}
			p.items(b)
		}
	}
	return p.out
}

// items adds the passages of a list's items or a table's rows.
func (p *passageMaker) items(b *mdBlock) {
	switch b.kind {
	case mdList:
		for _, item := range b.lines {
			from := len(p.out)
			p.paragraph(item, nil)
			for k := from; k < len(p.out); k++ {
				p.out[k].item = true
			}
		}
	case mdTable:
		// A row reads with its table's header: "Key · Default · Description".
		heading := p.heading
		for k, row := range quoteLines(b) {
			if k == 0 {
				p.heading = heading + " " + row
			} else if !codeLike(row) {
				if c := p.add(row, ""); c != nil {
					c.row = true
				}
			}
		}
		p.heading = heading
	}
}

// chatQuestion returns what the message starting at block j answers: the
// messages just before it by another author.
func chatQuestion(bs []mdBlock, j int) string {
	var q []string
	asker := bs[j-1].author
	for k := j - 1; k >= 0 && bs[k].author == asker && asker != bs[j].author; k-- {
		if bs[k].kind == mdPara || bs[k].kind == mdQuestion {
			q = append([]string{bs[k].text}, q...)
		}
	}
	return strings.Join(q, " ")
}

// passageMaker collects the passages of a source.
type passageMaker struct {
	out      []passage
	source   int
	doc      bool
	section  int
	para     int
	heading  string // the heading passages are under
	question string // what the next paragraph answers
}

// add adds a passage of text, if it has any once plain, and returns it.
func (p *passageMaker) add(text, question string) *passage {
	if text = clean(text); text == "" {
		return nil
	}
	p.out = append(p.out, passage{text: text, question: question, heading: p.heading, source: p.source, pos: len(p.out), section: p.section, para: p.para})
	return &p.out[len(p.out)-1]
}

// paragraph adds the passages of a paragraph (or list item); its last
// sentence quotes next when it leads into it.
func (p *passageMaker) paragraph(text string, next *mdBlock) {
	question := p.question
	p.question = "" // a question leads to one paragraph
	p.para++
	if q, rest, ok := boldQuestion(text); ok {
		question, text = q, rest
	}
	sents := splitSentences(text)
	if len(sents) == 0 {
		return
	}
	var prev *passage // the passage of the sentence before, if kept
	k := 0
	if question != "" {
		prev, k = p.answer(question, sents)
	}
	for ; k < len(sents); k++ {
		sn := clean(sents[k])
		intro := k == len(sents)-1 && next != nil && leadsIn(sn)
		switch {
		case !intro && !p.prose(sents[k], sn):
			prev = nil
		case pronounStart(sn) && (prev == nil || wordCount(prev.text)+wordCount(sn) > maxWords):
			prev = nil // out of its context
		case pronounStart(sn):
			prev.text += " " + sn
		default:
			prev = p.add(sents[k], "")
		}
	}
	switch {
	case next == nil || prev == nil || prev != &p.out[len(p.out)-1]:
	case leadsIn(clean(sents[len(sents)-1])):
		prev.quote(next)
	case next.kind == mdCode:
		// A paragraph right above code may show it without saying so
		// ("All methods install the same binary."): its last sentence is
		// a passage with the code and one without.
		c := *prev
		c.pos = len(p.out)
		c.quote(next)
		p.out = append(p.out, c)
	}
}

// answer adds the answer to a question: the first sentences, as many as
// fit and up to one that asks in turn; with the question's last sentence
// before them when they open with a pronoun. It returns the passage and
// the sentences it took.
func (p *passageMaker) answer(question string, sents []string) (*passage, int) {
	k, words := 0, 0
	for k < len(sents) && !strings.HasSuffix(sents[k], "?") && (k == 0 || words+wordCount(sents[k]) <= maxWords) {
		words += wordCount(sents[k])
		k++
	}
	if k == 0 {
		return nil, 0 // a question in turn
	}
	answer := strings.Join(sents[:k], " ")
	if pronounStart(clean(answer)) {
		q := splitSentences(question)
		answer = cmp.Or(lastQuestion(question), q[len(q)-1]) + " " + answer
	}
	return p.add(answer, question), k
}

// quote makes the block the passage leads into.
func (c *passage) quote(b *mdBlock) {
	c.lines, c.code = quoteLines(b), b.kind == mdCode
}

// prose reports whether a sentence (raw and cleaned) can answer: not a
// question, not code, and in a document a whole sentence — one starting
// with a capital, a digit or markup and ending with a stop; other pieces
// were cut by code blocks or chunk bounds.
func (p *passageMaker) prose(raw, sentence string) bool {
	if sentence == "" || strings.HasSuffix(sentence, "?") || strings.HasSuffix(sentence, ":") || codeLike(clean(codeSpan.ReplaceAllString(raw, "x"))) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(raw)
	last, _ := utf8.DecodeLastRuneInString(sentence)
	return !p.doc || !unicode.IsLower(first) && strings.ContainsRune(".!)\"'”", last)
}

// boldQuestion splits a paragraph that opens with a question in bold
// ("**Is the queue paused?** Runs from …") into the question and the rest.
func boldQuestion(text string) (q, rest string, ok bool) {
	if !strings.HasPrefix(text, "**") {
		return "", text, false
	}
	end := strings.Index(text[2:], "**")
	if end < 0 {
		return "", text, false
	}
	q = strings.TrimSpace(text[2 : 2+end])
	rest = strings.TrimSpace(text[4+end:])
	if !strings.HasSuffix(q, "?") || rest == "" {
		return "", text, false
	}
	return q, rest, true
}

// lastQuestion returns the last sentence of text that asks something, or
// "".
func lastQuestion(text string) string {
	sents := splitSentences(text)
	for k := len(sents) - 1; k >= 0; k-- {
		if strings.HasSuffix(sents[k], "?") {
			return sents[k]
		}
	}
	return ""
}

// leadsIn reports whether a sentence leads into what follows it: it ends
// with a colon, or without a stop ("The delay is" above a formula).
func leadsIn(sentence string) bool {
	r, _ := utf8.DecodeLastRuneInString(sentence)
	return r == ':' || !strings.ContainsRune(".!?)\"'”", r)
}

// codeSpan is inline code, which prose may hold.
var codeSpan = regexp.MustCompile("`[^`]*`")

// pronouns open a sentence that means nothing without the one before.
var pronouns = map[string]bool{"it": true, "its": true, "this": true, "that": true, "these": true, "those": true,
	"they": true, "them": true, "he": true, "she": true}

// pronounStart reports whether sentence opens with a pronoun ("It is
// required…", "That's the default", "They …").
func pronounStart(sentence string) bool {
	w, _, _ := strings.Cut(sentence, " ")
	w = strings.ToLower(strings.TrimRightFunc(w, unicode.IsPunct))
	if i := strings.IndexAny(w, "'’"); i > 0 {
		w = w[:i]
	}
	return pronouns[w]
}

// quoteLines renders a list, code block or table for the answer: list
// items as "- item" (cut to maxItemWords), code lines as they are, table
// rows as "cell · cell"; no blank lines.
func quoteLines(b *mdBlock) []string {
	var lines []string
	for _, l := range b.lines {
		switch b.kind {
		case mdList:
			l = "- " + cutWords(clean(l), maxItemWords)
		case mdTable:
			l = strings.Join(strings.Fields(strings.Join(strings.FieldsFunc(clean(l), func(r rune) bool { return r == '|' }), " · ")), " ")
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(l) > maxLineBytes {
			l = cutWords(l, maxLineBytes/6)
		}
		lines = append(lines, l)
	}
	return lines
}

// shown returns the lines of the passage's block that the answer shows: at
// most maxBlockLines lines (maxBlockWords words of a list or table), from
// the first on unless later ones hold more of the question's words
// (has reports whether a line holds one); "…" marks what is left out.
func (c *passage) shown(has func(string) bool) string {
	n := 0 // lines that fit
	words := 0
	for n < len(c.lines) && n < maxBlockLines && (c.code || n == 0 || words+wordCount(c.lines[n]) <= maxBlockWords) {
		words += wordCount(c.lines[n])
		n++
	}
	if n == len(c.lines) {
		return strings.Join(c.lines, "\n")
	}
	from, best := 0, -1
	for start := 0; start+n <= len(c.lines); start++ {
		hits := 0
		for _, l := range c.lines[start : start+n] {
			if has(l) {
				hits++
			}
		}
		if hits > best {
			from, best = start, hits
		}
	}
	var out []string
	if from > 0 {
		out = append(out, "…")
	}
	out = append(out, c.lines[from:from+n]...)
	if from+n < len(c.lines) {
		out = append(out, "…")
	}
	return strings.Join(out, "\n")
}

// cutWords keeps the first n words of s, with "…" when it cut.
func cutWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return strings.Join(f, " ")
	}
	return strings.Join(f[:n], " ") + " …"
}

func wordCount(s string) int { return len(strings.Fields(s)) }

// clean turns a Markdown sentence into plain text on one line.
func clean(text string) string {
	return strings.Join(strings.Fields(mdtext.Plain(text)), " ")
}
