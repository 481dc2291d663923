package mdtext

import (
	"cmp"
	"strings"
)

// PlainChat returns the text of a chat message written in the platforms'
// light markup (Discord, Slack, Telegram exports): code fences and their
// language tags, backticks, the **, ~~ and || markers, quote and heading
// markers at line starts and table pipes are dropped; [text](url) and
// Slack's <url|text> become their text. Single * and _ stay: in chat they
// are as often part of a name (max_attempts) as emphasis. It is a single
// pass with no parser, cheap enough for every message hit. O(len(s)).
func PlainChat(s string) string {
	if strings.IndexAny(s, "`*~|[<>#") < 0 && !strings.Contains(s, "-# ") {
		return strings.TrimSpace(s) // nothing to drop: most messages
	}
	var b strings.Builder
	b.Grow(len(s))
	for code := false; ; code = !code {
		p, rest, fenced := strings.Cut(s, "```")
		if code && !fenced {
			p = "```" + p // an unclosed fence is text
			code = false
		}
		if code {
			chatCode(&b, p)
		} else {
			for line := range strings.Lines(p) {
				chatLine(&b, line)
			}
		}
		if !fenced {
			break
		}
		s = rest
	}
	return strings.TrimSpace(b.String())
}

// chatCode writes the text of a code block, without a language tag.
func chatCode(b *strings.Builder, p string) {
	if tag, rest, ok := strings.Cut(p, "\n"); ok && !strings.ContainsAny(tag, " \t") {
		p = rest
	}
	if n := b.Len(); n > 0 && !isBlank(b.String()[n-1]) {
		b.WriteByte('\n')
	}
	b.WriteString(strings.ReplaceAll(strings.Trim(p, "\n"), "`", ""))
	b.WriteByte('\n')
}

func isBlank(c byte) bool { return c == ' ' || c == '\n' || c == '\t' }

// chatLine writes one line of text outside code blocks.
func chatLine(b *strings.Builder, line string) {
	body := strings.TrimRight(line, "\r\n")
	nl := line[len(body):]
	t := strings.TrimLeft(body, " \t")
	for _, m := range []string{">>> ", "> ", "-# ", "### ", "## ", "# "} {
		if strings.HasPrefix(t, m) {
			t = t[len(m):]
			break
		}
	}
	if t == ">" || t == ">>>" {
		t = ""
	}
	if cells, ok := tableRow(t); ok {
		if strings.Trim(t, "|-: \t") == "" {
			return // a table's rule line
		}
		for i, c := range cells {
			if i > 0 {
				b.WriteString(CellSep)
			}
			chatInline(b, strings.TrimSpace(c))
		}
	} else {
		chatInline(b, t)
	}
	if nl != "" {
		b.WriteByte('\n')
	}
}

// tableRow splits a line of a Markdown table, |a|b|, into its cells.
func tableRow(t string) ([]string, bool) {
	t = strings.TrimRight(t, " \t")
	if len(t) < 2 || t[0] != '|' || t[len(t)-1] != '|' || strings.HasPrefix(t, "||") {
		return nil, false
	}
	return strings.Split(t[1:len(t)-1], "|"), true
}

// chatInline writes inline text without its markers.
func chatInline(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			i++
			continue
		case (c == '*' || c == '~' || c == '|') && i+1 < len(s) && s[i+1] == c:
			i += 2
			continue
		case c == '[':
			if text, n := maskedLink(s[i:]); n > 0 {
				chatInline(b, text)
				i += n
				continue
			}
		case c == '<':
			if text, n := slackLink(s[i:]); n > 0 {
				b.WriteString(text)
				i += n
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
}

// maskedLink reads [text](url) at the start of s: its text and length, or
// n == 0.
func maskedLink(s string) (text string, n int) {
	end := strings.Index(s, "](")
	if end < 0 || strings.ContainsAny(s[1:end], "[]\n") {
		return "", 0
	}
	close := strings.IndexByte(s[end+2:], ')')
	if close < 0 || strings.ContainsAny(s[end+2:end+2+close], " \n") {
		return "", 0
	}
	return s[1:end], end + 3 + close
}

// slackLink reads <url> or <url|text> at the start of s: what it shows and
// its length, or n == 0.
func slackLink(s string) (text string, n int) {
	end := strings.IndexByte(s, '>')
	if end < 0 || !(strings.HasPrefix(s, "<http://") || strings.HasPrefix(s, "<https://") || strings.HasPrefix(s, "<mailto:")) {
		return "", 0
	}
	url, label, _ := strings.Cut(s[1:end], "|")
	if strings.ContainsAny(url, " \n") || strings.Contains(label, "\n") {
		return "", 0
	}
	return cmp.Or(label, url), end + 1
}
