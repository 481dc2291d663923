package httpapi

import (
	"fmt"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

// The console's forms on the dashboard itself: document uploads and the
// site settings.

// consoleUpload serves POST /dashboard/documents: multipart "file" parts,
// optional "title" (one file only) and "sourceId" (default uploads), as
// POST /api/documents takes them.
func (s *Server) consoleUpload(ctx *fasthttp.RequestCtx) {
	if !isMultipart(ctx) {
		s.showDashboard(ctx, failure(&mediaErr{"send the documents from the upload form (multipart/form-data)"}))
		return
	}
	stored, err := s.receiveDocuments(ctx)
	if err != nil {
		s.showDashboard(ctx, failure(err))
		return
	}
	f := flash{}
	for i := range stored {
		d := &stored[i]
		f.Items = append(f.Items, link{
			Text: fmt.Sprintf("%s (%s, %s characters)", d.Title, d.SourceID, thousands(utf8.RuneCountInString(d.Content))),
			URL:  DocumentURL("", d.Slug),
		})
	}
	f.Text = fmt.Sprintf("Stored %s:", count(len(stored), "document"))
	s.consoleDone(ctx, "/dashboard", f)
}

// consoleSettings serves POST /dashboard/settings (fields siteName,
// siteDescription; empty returns to the default).
func (s *Server) consoleSettings(ctx *fasthttp.RequestCtx) {
	err := s.updateSettings(map[string]string{
		settingSiteName:        formField(ctx, "siteName"),
		settingSiteDescription: formField(ctx, "siteDescription"),
	})
	if err != nil {
		s.showDashboard(ctx, failure(err))
		return
	}
	s.consoleDone(ctx, "/dashboard", flash{Text: fmt.Sprintf("Settings saved. The site is now called %q.", s.siteName())})
}
