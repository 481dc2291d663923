package httpapi

import (
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/record"
)

// The console's source pages: add, edit (with the source's actions and
// opt-outs), delete.

// addSourcePage is GET /dashboard/add-source?type=…: a list of the types
// without one.
type addSourcePage struct {
	consolePage
	Types []typeChoice
	Form  *sourceForm
}

type typeChoice struct{ Type, About string }

// consoleAddForm serves GET /dashboard/add-source[?type=…].
func (s *console) consoleAddForm(ctx *fasthttp.RequestCtx) {
	typ := string(ctx.QueryArgs().Peek("type"))
	if typ == "" {
		s.showAddForm(ctx, nil, nil)
		return
	}
	f := newSourceForm(typ, record.Source{}, true)
	if f.Unsupported {
		s.showAddForm(ctx, nil, &flash{Error: true, Text: fmt.Sprintf("There is no source type %q.", typ), status: fasthttp.StatusNotFound})
		return
	}
	s.showAddForm(ctx, &f, nil)
}

func (s *console) showAddForm(ctx *fasthttp.RequestCtx, form *sourceForm, f *flash) {
	title := "Add a source"
	if form != nil {
		title = "Add a " + form.Type + " source"
	}
	crumbs := []link{{Text: title}}
	if form != nil {
		crumbs = []link{{"Add a source", "/dashboard/add-source"}, {Text: form.Type}}
	}
	d := addSourcePage{consolePage: s.consolePage(ctx, title, f, crumbs...), Form: form}
	for _, t := range crawl.Types() {
		d.Types = append(d.Types, typeChoice{t, typeAbout[t]})
	}
	s.consoleShow(ctx, "console_add.html", f, d)
}

// consoleAdd serves POST /dashboard/sources: the add form of a type.
func (s *console) consoleAdd(ctx *fasthttp.RequestCtx) {
	typ := formField(ctx, "type")
	form := newSourceForm(typ, record.Source{}, true)
	if form.Unsupported {
		s.showAddForm(ctx, nil, failure(paramErr("type must be one of %s", strings.Join(crawl.Types(), ", "))))
		return
	}
	in, err := sourceInputFromForm(ctx, typ, true)
	if err == nil {
		var src record.Source
		if src, err = s.manage.addSource(in); err == nil {
			s.consoleDone(ctx, "/dashboard/sources/"+src.ID, flash{Text: fmt.Sprintf("Source %q added with id %s.", src.Name, src.ID)})
			return
		}
	}
	form.refill(ctx)
	f := failure(err)
	form.Error = f.Text
	s.showAddForm(ctx, &form, f)
}

// sourcePage is a source's page: its state, its edit form, its actions
// and its opt-outs.
type sourcePage struct {
	consolePage
	Source  dashboardSource
	Form    sourceForm
	OptOuts []string
	Authors bool // its type holds messages, so authors may opt out
}

// consoleSource serves GET /dashboard/sources/{id}.
func (s *console) consoleSource(ctx *fasthttp.RequestCtx) {
	s.showSource(ctx, pathParam(ctx, "id"), s.takeFlash(ctx), nil)
}

// showSource renders source id's page with f; form, when not nil, replaces
// the edit form filled from the record.
func (s *console) showSource(ctx *fasthttp.RequestCtx, id string, f *flash, form *sourceForm) {
	src, ok := s.eng.Source(id)
	if !ok {
		s.sourceGone(ctx, id)
		return
	}
	d := sourcePage{
		consolePage: s.consolePage(ctx, src.Name, f, link{Text: src.Name}), Source: s.dashboardSource(src),
		OptOuts: src.OptOuts, Authors: src.Type != "web" && src.Type != "upload",
	}
	if form != nil {
		d.Form = *form
	} else {
		d.Form = newSourceForm(src.Type, src, false)
	}
	s.consoleShow(ctx, "console_source.html", f, d)
}

// sourceGone answers 404 for a source that does not exist (any more).
func (s *console) sourceGone(ctx *fasthttp.RequestCtx, id string) {
	s.consoleMessage(ctx, "No such source", &flash{Error: true, Text: fmt.Sprintf("There is no source %q.", id), status: fasthttp.StatusNotFound})
}

// consoleEdit serves POST /dashboard/sources/{id}: the edit form.
func (s *console) consoleEdit(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	src, ok := s.eng.Source(id)
	if !ok {
		s.sourceGone(ctx, id)
		return
	}
	in, err := sourceInputFromForm(ctx, src.Type, false)
	if err == nil {
		if _, err = s.manage.changeSource(id, in); err == nil {
			s.consoleDone(ctx, "/dashboard/sources/"+id, flash{Text: "Changes saved."})
			return
		}
	}
	form := newSourceForm(src.Type, src, false)
	form.refill(ctx)
	f := failure(err)
	form.Error = f.Text
	s.showSource(ctx, id, f, &form)
}

// confirmPage asks before something is deleted.
type confirmPage struct {
	consolePage
	Question string
	Action   string // where the confirmation posts
	Field    string // a hidden field's name and value, if any
	Value    string
	Cancel   string // where "keep it" leads
}

// consoleConfirmDelete serves GET /dashboard/sources/{id}/delete.
func (s *console) consoleConfirmDelete(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	src, ok := s.eng.Source(id)
	if !ok {
		s.sourceGone(ctx, id)
		return
	}
	st := s.eng.SourceStats(id, true)
	q := fmt.Sprintf("Delete source %q and all its %s?", src.Name, count(st.Messages, "message"))
	if st.Documents > 0 {
		q = fmt.Sprintf("Delete source %q and all its %s and %s?", src.Name, count(st.Messages, "message"), count(st.Documents, "document"))
	}
	s.consoleShow(ctx, "console_confirm.html", nil, confirmPage{
		consolePage: s.consolePage(ctx, "Delete "+src.Name, nil, link{src.Name, "/dashboard/sources/" + id}, link{Text: "Delete"}),
		Question:    q,
		Action:      "/dashboard/sources/" + id + "/delete", Cancel: "/dashboard/sources/" + id,
	})
}

// consoleDelete serves POST /dashboard/sources/{id}/delete.
func (s *console) consoleDelete(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	src, _ := s.eng.Source(id)
	if err := s.crawler.Delete(id); err != nil {
		s.showSource(ctx, id, failure(sourceNotFound(err, id)), nil)
		return
	}
	s.consoleDone(ctx, "/dashboard", flash{Text: fmt.Sprintf("Source %q (%s) deleted with everything it held.", src.Name, id)})
}
