package httpapi

import (
	"regexp"
	"strings"
)

// Text bound for a log — fasthttp's dump of a malformed request, the error
// chain of a failed one — is redacted by allow-list before it is logged:
//
//   - a header line (any line but the first) shows its value only for the
//     headers in safeHeaders ("Name: [redacted]" for any other,
//     X-Auth-Token or Private-Token as much as Authorization);
//   - a parameter (in a query, or name=value in a message) shows its
//     value only for the parameters in safeParams ("token=[redacted]",
//     "sig=[redacted]");
//   - anywhere in a line, a credential-like name followed by ':'
//     ("…(Authorization: Bearer …)") loses the rest of the line.
//
// A value ends at the end of its line, real or escaped as in a quoted dump
// ("\r\n"), or for a parameter at '&' or white space: never at a quote, so
// a credential holding one (`Bearer x"SECRET`) is blanked whole.

// safeHeaders are the request headers whose values a log may show.
var safeHeaders = setOf("host", "content-type", "content-length", "content-encoding", "transfer-encoding", "connection",
	"accept", "accept-encoding", "accept-language", "user-agent", "expect", "origin", "sec-fetch-site", "sec-fetch-mode",
	"sec-fetch-dest", "sec-fetch-user", "cache-control", "pragma", "upgrade", "te", "x-request-id", "if-none-match",
	"if-modified-since", "range", "mcp-protocol-version")

// safeParams are the query parameters whose values a log may show: Sift's
// own, none of which carries a credential.
var safeParams = setOf("q", "limit", "offset", "source", "channel", "from", "after", "before", "max_chars", "boost", "hyde",
	"links", "full", "around", "length", "m", "content", "page", "days", "flash", "format", "typos")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var (
	// lineBreak is a line's end, real or escaped in a quoted dump.
	lineBreak = regexp.MustCompile(`\r\n|\n|\\r\\n|\\n`)
	// headerLine is a header line: a token name, a colon.
	headerLine = regexp.MustCompile(`^(\s*)([A-Za-z0-9!#$%&'*+.^_|~-]+)(\s*:)`)
	// param is a parameter of a query, or name=value in a message (a
	// value not quoted: fasthttp's buf="…" is a dump, redacted line by
	// line): its name, and its value up to '&', '?', ';' or white space.
	param = regexp.MustCompile(`([?&;])([^=&?;\s"\\()]+)=([^&?;\s]*)|(^|[\s(])([^=&?;\s"\\()]+)=([^&?;\s"][^&?;\s]*)`)
	// credential is a credential-like name anywhere in a line, then ':' and
	// the rest of the line.
	credential = regexp.MustCompile(`(?i)([a-z0-9_-]*(?:authorization|cookie|token|secret|passw|api[-_]?key|apikey|session|signature|credential)[a-z0-9_-]*\s*:)[^\r\n]*`)
)

// redact blanks credentials out of text bound for a log (see above).
func redact(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range lineBreak.FindAllStringIndex(s, -1) {
		b.WriteString(redactLine(s[last:m[0]], last > 0))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(redactLine(s[last:], last > 0))
	return b.String()
}

// redactLine redacts one line; a line after the first may be a header
// line (the first is a message, or a request line).
func redactLine(line string, header bool) string {
	if m := headerLine.FindStringSubmatch(line); header && m != nil && !safeHeaders[strings.ToLower(m[2])] {
		return m[0] + " [redacted]"
	}
	line = param.ReplaceAllStringFunc(line, func(p string) string {
		sm := param.FindStringSubmatch(p)
		lead, name := sm[1]+sm[4], sm[2]+sm[5]
		if safeParams[strings.ToLower(name)] {
			return p
		}
		return lead + name + "=[redacted]"
	})
	return credential.ReplaceAllString(line, "${1} [redacted]")
}
