package httpapi

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
)

// The console's forms on the dashboard itself: document uploads, the site
// settings and the logo.

// consoleUpload serves POST /dashboard/documents: multipart "file" parts,
// optional "title" (one file only) and "sourceId" (default uploads), as
// POST /api/documents takes them.
func (s *console) consoleUpload(ctx *fasthttp.RequestCtx) {
	if !isMultipart(ctx) {
		s.showDashboard(ctx, failure(&mediaErr{"send the documents from the upload form (multipart/form-data)"}))
		return
	}
	stored, err := s.manage.receiveDocuments(ctx)
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
// siteDescription; empty returns to the default). The accent colour
// (siteAccent) changes only when it differs from the one the form showed
// (siteAccentShown), since a colour input cannot be left empty; the
// checkbox siteAccentDefault returns it to the default.
func (s *console) consoleSettings(ctx *fasthttp.RequestCtx) {
	changes := map[string]string{
		settingSiteName:        formField(ctx, "siteName"),
		settingSiteDescription: formField(ctx, "siteDescription"),
	}
	if accent := formField(ctx, "siteAccent"); formField(ctx, "siteAccentDefault") != "" {
		changes[settingSiteAccent] = ""
	} else if !strings.EqualFold(accent, formField(ctx, "siteAccentShown")) {
		changes[settingSiteAccent] = accent
	}
	if err := s.manage.updateSettings(changes); err != nil {
		s.showDashboard(ctx, failure(err))
		return
	}
	s.consoleDone(ctx, "/dashboard", flash{Text: fmt.Sprintf("Settings saved. The site is now called %q.", s.siteName())})
}

// consoleLogo serves POST /dashboard/settings/logo: the multipart part
// "file", as PUT /api/settings/logo takes it.
func (s *console) consoleLogo(ctx *fasthttp.RequestCtx) {
	if !isMultipart(ctx) {
		s.showDashboard(ctx, failure(&mediaErr{"send the logo from the settings form (multipart/form-data)"}))
		return
	}
	data, err := logoUpload(ctx)
	if err == nil {
		err = s.manage.setLogo(data)
	}
	if err != nil {
		s.showDashboard(ctx, failure(err))
		return
	}
	s.consoleDone(ctx, "/dashboard", flash{Text: "Logo saved. The pages show it from now on."})
}

// consoleDeleteLogo serves POST /dashboard/settings/logo/delete.
func (s *console) consoleDeleteLogo(ctx *fasthttp.RequestCtx) {
	if err := s.manage.removeLogo(); err != nil {
		s.showDashboard(ctx, failure(err))
		return
	}
	s.consoleDone(ctx, "/dashboard", flash{Text: "Logo removed."})
}
