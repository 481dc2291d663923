package crawl

import (
	"bytes"
	"strings"
)

// robotsToken is the product token robots.txt groups are matched against.
const robotsToken = "siftbot"

// maxRobotsBytes is how much of a robots.txt is read (RFC 9309 asks for at
// least 500 KiB).
const maxRobotsBytes = 512 << 10

// robots holds the rules of one robots.txt that apply to Sift (RFC 9309).
type robots struct {
	rules       []robotsRule
	disallowAll bool // the file could not be fetched (5xx, network): nothing is allowed
	sitemaps    []string
}

type robotsRule struct {
	allow   bool
	pattern string // normalised; may hold * and a final $
}

// allowAllRobots is the verdict of a missing robots.txt (4xx).
var allowAllRobots = &robots{}

// parseRobots reads a robots.txt for the given product token: the groups
// naming it (merged), else the * groups (merged), else no rules. Sitemap
// lines are collected wherever they are.
func parseRobots(body []byte, token string) *robots {
	if len(body) > maxRobotsBytes {
		body = body[:maxRobotsBytes]
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	type group struct {
		agents []string
		rules  []robotsRule
	}
	var groups []*group
	var cur *group
	lastWasAgent := false
	out := &robots{}
	for line := range strings.Lines(string(body)) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if !lastWasAgent || cur == nil {
				cur = &group{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, agentToken(value))
			lastWasAgent = true
		case "allow", "disallow":
			lastWasAgent = false
			if cur == nil {
				continue // a rule before any user-agent line belongs to no group
			}
			cur.rules = append(cur.rules, robotsRule{allow: key == "allow", pattern: normalizeRobotsPath(value, true)})
		case "sitemap":
			if value != "" && len(out.sitemaps) < 100 {
				out.sitemaps = append(out.sitemaps, value)
			}
		default:
			// Unknown lines (crawl-delay, host…) end neither a group nor a run
			// of user-agent lines.
		}
	}
	pick := func(want string) bool {
		found := false
		for _, g := range groups {
			for _, a := range g.agents {
				if a == want {
					out.rules = append(out.rules, g.rules...)
					found = true
					break
				}
			}
		}
		return found
	}
	if !pick(token) {
		pick("*")
	}
	return out
}

// agentToken is the product token of a user-agent line's value, lowercased:
// "SiftBot/1.0" → "siftbot"; "*" stays.
func agentToken(v string) string {
	if v == "*" || strings.HasPrefix(v, "* ") {
		return "*"
	}
	end := 0
	for end < len(v) {
		c := v[end]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			break
		}
		end++
	}
	return strings.ToLower(v[:end])
}

// allowed reports whether the path (with its query) may be fetched: the
// longest matching rule decides, allow winning a tie; no match allows.
func (r *robots) allowed(pathQuery string) bool {
	if r.disallowAll {
		return false
	}
	if pathQuery == "/robots.txt" {
		return true
	}
	p := normalizeRobotsPath(pathQuery, false)
	best, allow := -1, true
	for _, rule := range r.rules {
		if rule.pattern == "" {
			continue // "disallow:" with no path disallows nothing
		}
		if n := len(rule.pattern); n >= best && robotsMatch(rule.pattern, p) {
			if n > best || rule.allow {
				allow = rule.allow
			}
			best = n
		}
	}
	return allow
}

// robotsMatch matches a pattern from the start of the path: * is any run of
// characters, a final $ anchors the end.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// Iterative wildcard matching with one backtrack point (the last *).
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(path) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(pattern) && pattern[pi] == path[si]:
			pi++
			si++
		case pi == len(pattern) && !anchored:
			return true // the pattern is a prefix
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}

// normalizeRobotsPath puts a path or pattern in one form so they compare
// octet by octet: percent-escapes of unreserved characters decoded, other
// escapes upper-cased, non-ASCII and unsafe bytes escaped. In a path, * and
// $ are escaped too, so only a pattern's are special.
func normalizeRobotsPath(s string, pattern bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[v>>4])
				b.WriteByte(hex[v&15])
			}
			i += 2
		case !pattern && (c == '*' || c == '$'):
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		case c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' || c == '%':
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
