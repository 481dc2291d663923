package httpapi

import (
	"bytes"
	"embed"
	"encoding/hex"
	"hash/fnv"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/internal/mdtext"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// templates render the HTML pages. User content goes through html/template's
// contextual escaping; search highlights are escaped by highlightHTML, which
// only adds <mark>; message and document bodies go through renderMessage
// and renderMarkdown, which escape or sanitise.
type templates struct{ t *template.Template }

// identity is the site's identity, as the console sets it: its name, the
// URL of its logo and its accent colour ("" when it has none).
type identity struct {
	name, logo, accent func() string
}

func newTemplates(id identity) *templates {
	funcs := template.FuncMap{
		"site":       id.name,
		"logo":       id.logo,
		"accent":     func() template.CSS { return template.CSS(id.accent()) }, // "#rrggbb" or "", checked when set
		"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"date":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
		"day":        func(t time.Time) string { return t.UTC().Format("2006-01-02") },
		"highlight":  func(s query.Snippet) template.HTML { return template.HTML(highlightHTML(s)) }, // escaped by highlightHTML
		"message":    renderMessage,
		"thousand":   thousands,
		"add":        func(a, b int) int { return a + b },
		"count":      count,
		"thousand64": func(n int64) string { return thousands(int(n)) },
		"ms": func(d time.Duration) string {
			return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) + " ms"
		},
	}
	for name, f := range linkFuncs() {
		funcs[name] = f
	}
	for name, f := range insightFuncs() {
		funcs[name] = f
	}
	return &templates{t: template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))}
}

// head is what every page's <head> carries for people, crawlers and link
// previews.
type head struct {
	Title       string // <title> and og:title
	Description string // meta description and og:description
	Canonical   string // absolute URL of the page's stable address
	Type        string // og:type: website, article
	JSONLD      any    // schema.org object, or nil
	NoIndex     bool   // pages that are not content (dashboard, errors)
	Script      bool   // the page uses /static/app.js
	Wide        bool   // a grid wider than the reading measure
}

// descriptionBytes bounds a meta description.
const descriptionBytes = 300

// description is a meta description of a document: its plain text, cut.
func description(d *record.Document) string {
	if d.Format == record.FormatMarkdown {
		return mdtext.PlainLine(d.Content, descriptionBytes)
	}
	return oneLine(d.Content)
}

// chatDescription is a meta description of chat text (see
// mdtext.PlainChat).
func chatDescription(s string) string {
	return oneLine(mdtext.PlainChat(s))
}

// oneLine is plain text on one line, cut to a meta description.
func oneLine(s string) string {
	return mdtext.Cut(strings.Join(strings.Fields(s), " "), descriptionBytes)
}

// changeClock dates the engine's content for Last-Modified: the moment
// this server first saw the current write sequence number. After a restart
// it is the first request's time: later than the truth, which costs a full
// answer, never a stale 304.
type changeClock struct {
	mu  sync.Mutex
	seq uint64
	at  time.Time
}

// lastChange is when what the pages show last changed, as far as this
// server knows.
func (s *Server) lastChange() time.Time {
	c := &s.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	if seq := s.contentSeq(); c.at.IsZero() || seq != c.seq {
		c.seq, c.at = seq, time.Now()
	}
	return c.at
}

// contentSeq is the store's sequence number of its last write of content
// (the engine's ContentSeq: counts of searches written by the insights
// recorder change no page), else its Seq.
func (s *Server) contentSeq() uint64 {
	if c, ok := s.eng.(interface{ ContentSeq() uint64 }); ok {
		return c.ContentSeq()
	}
	return s.eng.Seq()
}

// pageOpts are how one rendering is sent.
type pageOpts struct {
	status   int
	modified time.Time // Last-Modified; zero = none
	private  bool      // not to be cached by shared caches (dashboard)
}

// render executes a template and sends it with an ETag (a hash of the
// page), Last-Modified when known, gzip when the client takes it, and a
// 304 when the client's copy is current.
func (s *Server) render(ctx *fasthttp.RequestCtx, name string, o pageOpts, data any) {
	var b bytes.Buffer
	if err := s.tmpl.t.ExecuteTemplate(&b, name, data); err != nil {
		panic("BUG: render " + name + ": " + err.Error())
	}
	s.sendPage(ctx, "text/html; charset=utf-8", b.Bytes(), o)
}

// sendPage sends a page's bytes with the validators and compression of
// render.
func (s *Server) sendPage(ctx *fasthttp.RequestCtx, contentType string, body []byte, o pageOpts) {
	if o.status == 0 {
		o.status = fasthttp.StatusOK
	}
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; connect-src 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("Vary", "Accept-Encoding")
	if o.private {
		h.Set("Cache-Control", "private, no-store")
	} else {
		h.Set("Cache-Control", "public, max-age=0, must-revalidate")
	}
	ctx.SetContentType(contentType)
	gz := len(body) > 1024 && ctx.Request.Header.HasAcceptEncoding("gzip")
	if o.status == fasthttp.StatusOK && !o.private {
		sum := fnv.New64a()
		sum.Write(body)
		tag := hex.EncodeToString(sum.Sum(nil))
		etag := `"` + tag + `"`
		if gz {
			etag = `"` + tag + `-gz"` // each encoding has its own (RFC 9110 §8.8.3)
		}
		h.Set("ETag", etag)
		// Last-Modified counts whole seconds: a time less than a second old
		// (or ahead of our clock) is not sent, so a change within the same
		// second can never hide behind an equal date.
		modified := o.modified
		if !modified.IsZero() && time.Since(modified) < time.Second {
			modified = time.Time{}
		}
		if !modified.IsZero() {
			h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
		}
		if notModified(ctx, tag, modified) {
			ctx.SetStatusCode(fasthttp.StatusNotModified)
			ctx.ResetBody()
			return
		}
	}
	ctx.SetStatusCode(o.status)
	if gz {
		ctx.SetBody(fasthttp.AppendGzipBytesLevel(nil, body, fasthttp.CompressDefaultCompression))
		h.Set("Content-Encoding", "gzip")
		return
	}
	ctx.SetBody(body)
}

// notModified applies If-None-Match (weak comparison: either encoding's
// tag of the same bytes matches), else If-Modified-Since (RFC 9110).
func notModified(ctx *fasthttp.RequestCtx, tag string, modified time.Time) bool {
	if inm := string(ctx.Request.Header.Peek("If-None-Match")); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || strings.TrimSuffix(strings.Trim(t, `"`), "-gz") == tag {
				return true
			}
		}
		return false
	}
	if ims := string(ctx.Request.Header.Peek("If-Modified-Since")); ims != "" && !modified.IsZero() {
		if t, err := http.ParseTime(ims); err == nil && !modified.Truncate(time.Second).After(t) {
			return true
		}
	}
	return false
}

// staticFile serves the embedded script and style sheet.
func (s *pages) staticFile(ctx *fasthttp.RequestCtx) {
	name := pathParam(ctx, "name")
	b, err := fs.ReadFile(staticFS, "static/"+name)
	if err != nil || strings.Contains(name, "/") {
		s.notFound(ctx)
		return
	}
	ct := "application/octet-stream"
	switch {
	case strings.HasSuffix(name, ".js"):
		ct = "text/javascript; charset=utf-8"
	case strings.HasSuffix(name, ".css"):
		ct = "text/css; charset=utf-8"
	case strings.HasSuffix(name, ".svg"):
		ct = "image/svg+xml"
	}
	s.sendPage(ctx, ct, b, pageOpts{})
}

// notFound answers an unknown path: an HTML page to browsers, JSON to
// everything else.
func (s *Server) notFound(ctx *fasthttp.RequestCtx) {
	if !bytes.HasPrefix(ctx.Path(), []byte("/api/")) && bytes.Contains(ctx.Request.Header.Peek("Accept"), []byte("text/html")) {
		s.render(ctx, "notfound.html", pageOpts{status: fasthttp.StatusNotFound}, struct{ Head head }{
			head{Title: s.title("Not found"), NoIndex: true},
		})
		return
	}
	writeError(ctx, fasthttp.StatusNotFound, "no such resource: %s", ctx.Path())
}

// count writes "1 channel", "48,213 messages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return thousands(n) + " " + noun[:len(noun)-1] + "ies" // reply → replies
	}
	return thousands(n) + " " + noun + "s"
}

// thousands writes n with separators: 48,213.
func thousands(n int) string {
	str := strconv.Itoa(n)
	neg := strings.HasPrefix(str, "-")
	str = strings.TrimPrefix(str, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range str {
		if i > 0 && (len(str)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
