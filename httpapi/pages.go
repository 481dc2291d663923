package httpapi

import (
	"bytes"
	"embed"
	"html/template"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/engine"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages renders the HTML pages. User content goes through html/template's
// contextual escaping; search highlights are escaped by the engine, which
// only adds <mark>.
type pages struct{ t *template.Template }

func newPages() *pages {
	funcs := template.FuncMap{
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"date": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
		"html": func(s string) template.HTML { return template.HTML(s) }, // engine-escaped highlights only
	}
	return &pages{t: template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))}
}

func (p *pages) render(ctx *fasthttp.RequestCtx, status int, name string, data any) {
	var b bytes.Buffer
	if err := p.t.ExecuteTemplate(&b, name, data); err != nil {
		panic("BUG: render " + name + ": " + err.Error())
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
	ctx.SetBody(b.Bytes())
}

// homePage serves GET /: a search form and, with q, its results.
func (s *Server) homePage(ctx *fasthttp.RequestCtx) {
	data := struct {
		Title    string
		Query    string
		Searched bool
		Error    string
		Result   *engine.SearchResult
	}{Title: "Sift"}
	if req, err := searchRequest(ctx); err == nil {
		data.Query, data.Searched = req.Query, true
		data.Title = req.Query + " · Sift"
		if data.Result, err = s.eng.Search(req); err != nil {
			data.Searched, data.Error = false, strings.TrimPrefix(err.Error(), engine.ErrInvalid.Error()+": ")
		}
	} else if len(ctx.QueryArgs().Peek("q")) > 0 {
		data.Error = err.Error()
	}
	s.pages.render(ctx, fasthttp.StatusOK, "home.html", data)
}

// documentPage serves GET /d/{slug}.
func (s *Server) documentPage(ctx *fasthttp.RequestCtx) {
	slug, _ := ctx.UserValue("slug").(string)
	if !engine.ValidSlug(slug) {
		s.notFound(ctx)
		return
	}
	doc, ok := s.eng.DocumentBySlug(slug)
	if !ok {
		s.notFound(ctx)
		return
	}
	s.pages.render(ctx, fasthttp.StatusOK, "document.html", struct {
		Title string
		Doc   engine.Document
	}{doc.Title + " · Sift", doc})
}

// notFound answers 404: an HTML page for browsers, JSON for the API and
// for every client that does not ask for HTML.
func (s *Server) notFound(ctx *fasthttp.RequestCtx) {
	if !bytes.HasPrefix(ctx.Path(), []byte("/api/")) && bytes.Contains(ctx.Request.Header.Peek("Accept"), []byte("text/html")) {
		s.pages.render(ctx, fasthttp.StatusNotFound, "notfound.html", struct{ Title string }{"Not found · Sift"})
		return
	}
	writeError(ctx, fasthttp.StatusNotFound, "no such resource: %s", ctx.Path())
}
