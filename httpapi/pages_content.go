package httpapi

import (
	"cmp"
	"html/template"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// messagesPerPage is the size of a channel page. Page n of a channel holds
// its messages n*100-99 to n*100 in time order, so a page's address keeps
// its content as new messages arrive (they go to the last page).
const messagesPerPage = 100

// origin is BASE_URL's scheme and host, as browsers send it in Origin.
func (s *Server) origin() string {
	if u, err := url.Parse(s.opts.BaseURL); err == nil {
		return u.Scheme + "://" + u.Host
	}
	return s.opts.BaseURL
}

// Setting names of the instance's presentation, kept by the engine.
const (
	settingSiteName        = "site_name"
	settingSiteDescription = "site_description"
)

// siteName names the instance: the console's setting, else SITE_NAME, else
// BASE_URL's host.
func (s *Server) siteName() string {
	if n := s.eng.Settings()[settingSiteName]; n != "" {
		return n
	}
	if s.opts.SiteName != "" {
		return s.opts.SiteName
	}
	if u, err := url.Parse(s.opts.BaseURL); err == nil && u.Host != "" {
		return u.Host
	}
	return "this Sift"
}

// siteDescription is the console's setting, else SITE_DESCRIPTION.
func (s *Server) siteDescription() string {
	return cmp.Or(s.eng.Settings()[settingSiteDescription], s.opts.SiteDescription)
}

// partOfSite names the site a page's schema.org object belongs to.
func (s *pages) partOfSite(ld map[string]any) map[string]any {
	if ld != nil {
		ld["isPartOf"] = map[string]any{"@type": "WebSite", "name": s.siteName(), "url": s.opts.BaseURL + "/"}
	}
	return ld
}

// title ends a page's title with the site's name.
func (s *Server) title(parts ...string) string {
	return strings.Join(append(parts, s.siteName()), " · ")
}

type pager struct {
	URL         string
	Page, Pages int
	Label       string // the navigation landmark's name
}

// slugParam reads the {slug} of a page's path; a malformed one has
// answered 404 when ok is false.
func (s *pages) slugParam(ctx *fasthttp.RequestCtx) (slug string, ok bool) {
	slug = pathParam(ctx, "slug")
	if !record.ValidSlug(slug) {
		s.notFound(ctx)
		return "", false
	}
	return slug, true
}

// textCut cuts s to n characters, marking the cut.
func textCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// documentData is a document's page.
type documentData struct {
	Head   head
	Doc    record.Document
	Source record.Source
	Body   template.HTML
}

// documentPage serves GET /d/{slug}: Markdown rendered and sanitised,
// other documents as text.
func (s *pages) documentPage(ctx *fasthttp.RequestCtx) {
	slug, ok := s.slugParam(ctx)
	if !ok {
		return
	}
	doc, ok := s.eng.DocumentBySlug(slug)
	if !ok || doc.Hidden {
		s.notFound(ctx)
		return
	}
	src, _ := s.eng.Source(doc.SourceID)
	body := renderText(doc.Content)
	if doc.Format == record.FormatMarkdown {
		body = renderMarkdown(doc.Content, doc.Title, s.docLinker(&doc))
	}
	canonical := DocumentURL(s.opts.BaseURL, slug)
	ld := map[string]any{
		"@context": "https://schema.org", "@type": "Article", "headline": textCut(doc.Title, 110), "url": canonical,
		"datePublished": doc.CreatedAt.UTC().Format(time.RFC3339), "dateModified": doc.UpdatedAt.UTC().Format(time.RFC3339),
		"publisher": map[string]any{"@type": "Organization", "name": src.Name},
	}
	if doc.URL != "" {
		ld["isBasedOn"] = doc.URL
	}
	s.partOfSite(ld)
	s.render(ctx, "document.html", pageOpts{modified: doc.UpdatedAt}, documentData{
		Head: head{Title: s.title(doc.Title), Description: description(&doc), Canonical: canonical, Type: "article", JSONLD: ld},
		Doc:  doc, Source: src, Body: body,
	})
}

// docLinker maps a link in doc to the page of the document it names, if
// Sift holds one in the same source, keeping the #fragment; other links
// stay as they are. A relative link resolves against doc's URL when it has
// one (a crawled page: the target is the document with that URL), else
// against its key (a file name: the target's key, with or without .md).
// A fragment naming one of the page's own ids is given the prefix that
// heading ids clashing with them get.
func (s *pages) docLinker(doc *record.Document) func(string) string {
	base, err := url.Parse(doc.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		base = nil
	}
	return func(dest string) string {
		u, err := url.Parse(dest)
		if err != nil {
			return dest
		}
		if pageIDs[u.Fragment] {
			u.Fragment, u.RawFragment = "h-"+u.Fragment, "" // see headingIDs
		}
		if strings.HasPrefix(dest, "#") {
			return "#" + u.EscapedFragment()
		}
		var keys []string
		switch {
		case base != nil:
			abs := base.ResolveReference(u)
			abs.Fragment, abs.RawFragment = "", ""
			keys = []string{abs.String()}
		case u.Scheme == "" && u.Host == "" && u.Path != "":
			keys = fileKeys(doc.Key, u.Path)
		}
		for _, k := range keys {
			if k == doc.Key && u.Fragment != "" && base == nil {
				return "#" + u.EscapedFragment()
			}
			if d, ok := s.eng.Document(record.DocumentID(doc.SourceID, k)); ok && !d.Hidden {
				if u.Fragment != "" {
					return DocumentURL("", d.Slug) + "#" + u.EscapedFragment()
				}
				return DocumentURL("", d.Slug)
			}
		}
		return dest
	}
}

// fileKeys are the keys a relative link p in the file named key may name,
// best first: the path resolved against key's folder, then, since uploads
// keep only file names, its last element; each as written, with ".md"
// added when it has no extension, or with ".md" cut.
func fileKeys(key, p string) []string {
	resolved := strings.TrimPrefix(path.Join("/", path.Dir(key), p), "/")
	var keys []string
	for _, k := range []string{resolved, path.Base(resolved)} {
		keys = append(keys, k)
		switch ext := path.Ext(k); ext {
		case "":
			keys = append(keys, k+".md", k+".markdown")
		case ".md", ".markdown":
			keys = append(keys, strings.TrimSuffix(k, ext))
		}
	}
	return keys
}

// sourcesData is the /sources page.
type sourcesData struct {
	Head    head
	Sources []sourceView
}

type sourceView struct {
	record.Source
	Stats     record.SourceStats
	Channels  []channelItem
	Threads   []record.Channel // orphan threads whose channel is not listed
	Documents []record.Document
	MoreDocs  int
	Updated   time.Time
}

// maxListed bounds the documents listed per source on /sources; the rest
// are in the sitemap and llms.txt.
const maxListed = 200

// sourcesPage serves GET /sources: every source that shows callers
// without credentials anything, with its channels, orphan threads and
// documents; its counts are of what it lists (threads aside).
func (s *pages) sourcesPage(ctx *fasthttp.RequestCtx) {
	data := sourcesData{Head: head{Title: s.title("Sources"), Canonical: s.opts.BaseURL + "/sources",
		Description: "The sources " + s.siteName() + " indexes: chat channels, documents and web pages."}}
	var modified time.Time
	for _, src := range s.eng.Sources() {
		v := sourceView{Source: src, Stats: s.eng.SourceStats(src.ID, false), Updated: src.UpdatedAt}
		if v.Stats.Channels+v.Stats.Threads+v.Stats.Documents == 0 {
			continue // nothing it may show: Counts does not count it either
		}
		s.sourceChannels(&v)
		docs := publicDocuments(s.eng.SourceDocuments(src.ID))
		for _, d := range docs {
			if d.UpdatedAt.After(v.Updated) {
				v.Updated = d.UpdatedAt
			}
		}
		if src.LastCrawl != nil && src.LastCrawl.FinishedAt.After(v.Updated) {
			v.Updated = src.LastCrawl.FinishedAt
		}
		if len(docs) > maxListed {
			v.MoreDocs = len(docs) - maxListed
			docs = docs[:maxListed]
		}
		v.Documents = docs
		if v.Updated.After(modified) {
			modified = v.Updated
		}
		data.Sources = append(data.Sources, v)
	}
	s.render(ctx, "sources.html", pageOpts{modified: s.lastChange()}, data)
}
