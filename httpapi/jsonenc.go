package httpapi

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

// The search answers are written by hand rather than by encoding/json: a
// page of hits is mostly whole documents, and escaping them for every
// answer was most of a search's cost. A document's text never changes
// under its id and update time, so its escaped form is kept (contentCache)
// and copied as is. appendJSONString writes what encoding/json writes.

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML-safe: <, > and & as \u003c…; U+2028 and U+2029; invalid
// UTF-8 as U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// contentCache keeps documents' contents escaped as JSON strings, by id
// and update time, up to maxBytes in all; past it, it starts over.
type contentCache struct {
	mu       sync.Mutex
	bytes    int
	maxBytes int
	m        map[contentKey][]byte
}

type contentKey struct {
	id      string
	updated int64
}

// maxCachedContent bounds the escaped document text kept for answers.
const maxCachedContent = 64 << 20

// appendContent appends the JSON string of a document's content.
func (c *contentCache) appendContent(dst []byte, id string, updated time.Time, content string) []byte {
	k := contentKey{id, updated.UnixNano()}
	c.mu.Lock()
	b, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return append(dst, b...)
	}
	at := len(dst)
	dst = appendJSONString(dst, content)
	if n := len(dst) - at; n <= c.maxBytes/16 {
		b := append([]byte(nil), dst[at:]...)
		c.mu.Lock()
		if c.m == nil || c.bytes+n > c.maxBytes {
			c.m, c.bytes = map[contentKey][]byte{}, 0
		}
		if _, dup := c.m[k]; !dup {
			c.m[k] = b
			c.bytes += n
		}
		c.mu.Unlock()
	}
	return dst
}

// jsonField appends ,"name": (or "name": first).
func jsonField(dst []byte, first bool, name string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendJSONNumber appends f as encoding/json writes a float64.
func appendJSONNumber(dst []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b := strconv.AppendFloat(dst, f, 'e', -1, 64)
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' { // e-07 → e-7, as encoding/json writes it
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// answerBufs are the buffers answers are written in before fasthttp copies
// them into the response.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// writeSearch answers a search with out written by hand (see above).
func (s *api) writeSearch(ctx *fasthttp.RequestCtx, out *searchJSON) {
	pb := answerBufs.Get().(*[]byte)
	defer func() {
		if cap(*pb) <= 4<<20 { // a huge answer's buffer is not kept
			answerBufs.Put(pb)
		}
	}()
	buf := append((*pb)[:0], `{"messages":[`...)
	for i := range out.Messages {
		m := &out.Messages[i]
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = jsonField(append(buf, '{'), true, "id")
		buf = appendJSONString(buf, m.ID)
		buf = appendJSONString(jsonField(buf, false, "content"), m.Content)
		buf = appendJSONString(jsonField(buf, false, "timestamp"), m.Timestamp)
		buf = appendJSONString(jsonField(buf, false, "username"), m.Username)
		buf = appendJSONString(jsonField(buf, false, "channelName"), m.ChannelName)
		buf = appendJSONString(jsonField(buf, false, "channelSlug"), m.ChannelSlug)
		buf = appendJSONString(jsonField(buf, false, "platformName"), m.PlatformName)
		buf = appendJSONString(jsonField(buf, false, "platformType"), m.PlatformType)
		buf = appendJSONNumber(jsonField(buf, false, "score"), m.Score)
		buf = appendJSONString(jsonField(buf, false, "highlight"), m.Highlight)
		buf = append(buf, '}')
	}
	buf = append(buf, `],"documents":[`...)
	for i := range out.Documents {
		d := &out.Documents[i]
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = jsonField(append(buf, '{'), true, "id")
		buf = appendJSONString(buf, d.ID)
		buf = appendJSONString(jsonField(buf, false, "title"), d.Title)
		buf = appendJSONString(jsonField(buf, false, "slug"), d.Slug)
		if d.snippet {
			buf = appendJSONString(jsonField(buf, false, "content"), d.Content)
		} else {
			buf = s.contents.appendContent(jsonField(buf, false, "content"), d.ID, d.updated, d.Content)
		}
		buf = appendJSONNumber(jsonField(buf, false, "score"), d.Score)
		buf = appendJSONString(jsonField(buf, false, "highlight"), d.Highlight)
		buf = append(buf, '}')
	}
	buf = strconv.AppendInt(append(buf, `],"totalMessages":`...), int64(out.TotalMessages), 10)
	buf = strconv.AppendInt(append(buf, `,"totalDocuments":`...), int64(out.TotalDocuments), 10)
	buf = strconv.AppendBool(append(buf, `,"totalExact":`...), out.TotalExact)
	if len(out.Corrections) > 0 {
		buf = append(buf, `,"corrections":[`...)
		for i, c := range out.Corrections {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSONString(jsonField(append(buf, '{'), true, "word"), c.Word)
			buf = append(jsonField(buf, false, "matches"), '[')
			for j, m := range c.Matches {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = appendJSONString(buf, m)
			}
			buf = append(buf, "]}"...)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, "}\n"...)
	*pb = buf
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBody(buf)
}
