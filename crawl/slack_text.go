package crawl

import (
	"cmp"
	"strings"
	"time"

	"github.com/sift-search/sift/record"
)

// slackTime parses a Slack ts, "1700000000.000100": seconds and a fraction.
func slackTime(ts string) (time.Time, bool) {
	sec, frac, dot := strings.Cut(ts, ".")
	if sec == "" || len(sec) > 11 || len(frac) > 9 || dot && frac == "" || !isDigits(sec) || !isDigits(frac) {
		return time.Time{}, false
	}
	var s, ns int64
	for _, c := range sec {
		s = s*10 + int64(c-'0')
	}
	for i := range 9 {
		ns *= 10
		if i < len(frac) {
			ns += int64(frac[i] - '0')
		}
	}
	return time.Unix(s, ns).UTC(), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var slackUnescape = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// render turns Slack mrkdwn escapes into plain text: <@U1> → @name,
// <#C1|general> → #general, <!here> → @here, <https://x|label> →
// label (https://x), then &amp; &lt; &gt; → & < >.
func (p *slackParser) render(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		b.WriteString(slackUnescape.Replace(s[:i]))
		p.renderTag(&b, s[i+1:i+j])
		s = s[i+j+1:]
		if b.Len() > record.MaxMessageBytes {
			return b.String() // cut to size by the caller
		}
	}
	b.WriteString(slackUnescape.Replace(s))
	return b.String()
}

func (p *slackParser) renderTag(b *strings.Builder, tag string) {
	target, label, _ := strings.Cut(tag, "|")
	label = slackUnescape.Replace(label)
	switch {
	case strings.HasPrefix(target, "@"):
		name := strings.TrimPrefix(label, "@")
		if u := p.users[target[1:]]; u != nil && u.Name != "" {
			name = u.Name
		}
		b.WriteString("@" + cmp.Or(name, target[1:]))
	case strings.HasPrefix(target, "#"):
		if p.unnamed[target[1:]] {
			b.WriteString("#private-channel") // as Slack shows it to those outside
			break
		}
		b.WriteString("#" + cmp.Or(label, p.chanNames[target[1:]], target[1:]))
	case strings.HasPrefix(target, "!"):
		cmd, arg, _ := strings.Cut(target[1:], "^")
		switch {
		case cmd == "here" || cmd == "channel" || cmd == "everyone":
			b.WriteString("@" + cmd)
		case label != "":
			b.WriteString(label) // <!subteam^S1|@team>, <!date^…|fallback>
		default:
			b.WriteString("@" + cmp.Or(arg, cmd))
		}
	default:
		url := slackUnescape.Replace(target)
		switch {
		case label == "" || label == url:
			b.WriteString(url)
		case url == "mailto:"+label:
			b.WriteString(label)
		default:
			b.WriteString(label + " (" + url + ")")
		}
	}
}
