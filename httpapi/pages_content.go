package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"html/template"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/ask"
	"github.com/sift-search/sift/engine"
)

// messagesPerPage is the size of a channel page. Page n of a channel holds
// its messages n*100-99 to n*100 in time order, so a page's address keeps
// its content as new messages arrive (they go to the last page).
const messagesPerPage = 100

// homeData is the home page: search results and, without JavaScript, an
// answer rendered on the server.
type homeData struct {
	Head        head
	Site        string
	Description string
	Query       string
	Searched    bool
	Error       string
	Result      *engine.SearchResult
	Counts      engine.Counts
	Question    string
	Answer      *pageAnswer
	AskError    string
	Sources     []engine.Source // for the search's source filter
	Source      string          // the filter chosen
	Prev        string          // links to the previous and next results, if any
	Next        string
	From, To    int // the results shown, 1-based
}

// pageAnswer is an answer cut into text and citation links.
type pageAnswer struct {
	Parts   []answerPart
	Sources []answerSource
}

type answerPart struct {
	Text string
	N    int
	Href string
}

type answerSource struct {
	Title, Meta, Href string
}

var citation = regexp.MustCompile(`\[(\d+)\]`)

func newPageAnswer(text string, sources []ask.Source) *pageAnswer {
	a := &pageAnswer{}
	last := 0
	for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		if n < 1 || n > len(sources) {
			continue
		}
		a.Parts = append(a.Parts, answerPart{Text: text[last:m[0]]}, answerPart{N: n, Href: sources[n-1].PageURL})
		last = m[1]
	}
	a.Parts = append(a.Parts, answerPart{Text: text[last:]})
	for i := range sources {
		src := &sources[i]
		a.Sources = append(a.Sources, answerSource{Title: src.Metadata(false), Meta: src.Preview(), Href: src.PageURL})
	}
	return a
}

// homePage serves GET /: a search form with server-rendered results, and an
// ask box (streamed by /static/app.js, or answered here with ?ask=).
func (s *Server) homePage(ctx *fasthttp.RequestCtx) {
	data := homeData{
		Head: head{Title: s.siteName(), Canonical: s.opts.BaseURL + "/", Script: true,
			Description: cmp.Or(s.siteDescription(), "Search and ask the messages and documents of "+s.siteName()+".")},
		Description: s.siteDescription(),
		Site:        s.siteName(),
		Counts:      s.eng.Counts(false),
	}
	for _, src := range s.eng.Sources() {
		if st := s.eng.SourceStats(src.ID, false); st.Messages+st.Documents > 0 {
			data.Sources = append(data.Sources, src)
		}
	}
	o := pageOpts{}
	bearerOnly := s.opts.SearchAccess == "bearer" && !s.auth.bearerOK(ctx) && !s.auth.basicOK(ctx)
	if len(ctx.QueryArgs().Peek("q")) > 0 && bearerOnly {
		data.Error = "Search on this server needs the API key (SEARCH_ACCESS=bearer)."
		o.status = fasthttp.StatusUnauthorized
	} else if req, err := searchRequest(ctx); err == nil {
		data.Query, data.Searched = req.Query, true
		data.Head.Title = s.title(req.Query)
		data.Head.NoIndex = true
		start := time.Now()
		if data.Result, err = s.eng.Search(req); err != nil {
			data.Searched, data.Error = false, strings.TrimPrefix(err.Error(), engine.ErrInvalid.Error()+": ")
		} else {
			s.stats.record("page search", req.Query, data.Result.TotalMessages+data.Result.TotalDocuments, time.Since(start))
			data.Source = req.Source
			s.resultPages(&data, req)
		}
	} else if len(ctx.QueryArgs().Peek("q")) > 0 {
		data.Error = err.Error()
	}
	if ctx.IsPost() {
		// The ask box without JavaScript: a form POST, answered here.
		q := strings.TrimSpace(string(ctx.PostArgs().Peek("ask")))
		data.Question, data.Head.NoIndex = q, true
		o.private = true
		if status, msg := s.pageAnswer(ctx, q, &data); msg != "" {
			o.status, data.AskError = status, msg
		}
	}
	s.render(ctx, "home.html", o, data)
}

// resultPages sets the links to the previous and next results of a search.
func (s *Server) resultPages(data *homeData, req engine.SearchRequest) {
	limit := req.Limit
	if limit <= 0 {
		limit = 20
	}
	r := data.Result
	shown := max(len(r.Messages), len(r.Documents))
	data.From, data.To = req.Offset+1, req.Offset+shown
	link := func(offset int) string {
		q := url.Values{"q": {req.Query}}
		if req.Source != "" {
			q.Set("source", req.Source)
		}
		if offset > 0 {
			q.Set("offset", strconv.Itoa(offset))
		}
		return "/?" + q.Encode()
	}
	if req.Offset > 0 {
		data.Prev = link(max(req.Offset-limit, 0))
	}
	if next := req.Offset + limit; next < max(r.TotalMessages, r.TotalDocuments) && next <= engine.MaxSearchOffset {
		data.Next = link(next)
	}
}

// pageAnswer answers the home page's question without JavaScript, within
// the public tier's limit.
func (s *Server) pageAnswer(ctx *fasthttp.RequestCtx, q string, data *homeData) (int, string) {
	// A form posted from another site would spend this visitor's questions.
	if s.crossSite(ctx) {
		return fasthttp.StatusForbidden, "Questions are asked from this site's own page."
	}
	switch {
	case q == "":
		return fasthttp.StatusBadRequest, "Type a question first."
	case !utf8.ValidString(q):
		return fasthttp.StatusBadRequest, "The question is not valid UTF-8."
	case utf8.RuneCountInString(q) > 4000:
		return fasthttp.StatusBadRequest, "The question is too long: at most 4,000 characters."
	}
	if s.limiter != nil && !s.auth.bearerOK(ctx) && !s.auth.basicOK(ctx) {
		if retry, ok := s.spend(ctx); !ok {
			return fasthttp.StatusTooManyRequests, fmt.Sprintf("Too many questions from your address; try again in %d s.", retry)
		}
	}
	release, err := s.asker.Admit()
	if err != nil {
		ctx.Response.Header.Set("Retry-After", "5")
		return fasthttp.StatusServiceUnavailable, "Too many questions are being answered; try again in a few seconds."
	}
	defer release()
	actx, cancel := context.WithTimeout(s.base, askTimeout)
	defer cancel()
	start := time.Now()
	var col collector
	if _, err := s.asker.Ask(actx, ask.Request{Question: q}, &col); err != nil {
		s.log.Warn("page question failed", "err", err)
		return fasthttp.StatusBadGateway, "No answer: " + publicAskError(err) + "."
	}
	s.stats.record("page ask", q, len(col.sources), time.Since(start))
	data.Answer = newPageAnswer(col.answer.String(), col.sources)
	return 0, ""
}

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
func (s *Server) partOfSite(ld map[string]any) map[string]any {
	if ld != nil {
		ld["isPartOf"] = map[string]any{"@type": "WebSite", "name": s.siteName(), "url": s.opts.BaseURL + "/"}
	}
	return ld
}

// title ends a page's title with the site's name.
func (s *Server) title(parts ...string) string {
	return strings.Join(append(parts, s.siteName()), " · ")
}

// channelData is a page of a channel.
type channelData struct {
	Head    head
	Channel engine.Channel
	Parent  *engine.Channel
	Threads []engine.Channel
	Source  engine.Source
	Msgs    []messageView
	Total   int
	Pager   pager
	Pager2  pager
}

// messageView is a message as the channel template shows it, prepared in
// Go: flat fields and formatted times (the template's reflection on
// embedded structs and function calls per message was most of a page's
// cost).
type messageView struct {
	ID, Who, Handle string
	ISO, When       string
	Edited          bool
	ReplyHref       string // the message it answers: on this page, or found by ?m=
	Body            template.HTML
	Thread          string // slug of the thread this message started, if any

	m *engine.Message
}

type pager struct {
	URL         string
	Page, Pages int
	Label       string // the navigation landmark's name
}

// channelPage serves GET /c/{slug}[?page=N | ?m=ID]: a page of a
// channel's messages, oldest first. ?m= finds the page of a message.
func (s *Server) channelPage(ctx *fasthttp.RequestCtx) {
	slug, ok := s.slugParam(ctx)
	if !ok {
		return
	}
	ch, ok := s.eng.ChannelBySlug(slug)
	if !ok || ch.Hidden {
		s.notFound(ctx)
		return
	}
	page := 1
	if m := string(ctx.QueryArgs().Peek("m")); m != "" {
		if pos, err := s.eng.MessagePosition(slug, m); err == nil {
			page = pos/messagesPerPage + 1
		}
	} else if p := ctx.QueryArgs().Peek("page"); p != nil {
		n, err := strconv.Atoi(string(p))
		if err != nil || n < 1 {
			s.notFound(ctx)
			return
		}
		page = n
	}
	msgs, total, err := s.eng.ChannelMessages(slug, (page-1)*messagesPerPage, messagesPerPage)
	if err != nil {
		s.notFound(ctx)
		return
	}
	pages := max(1, (total+messagesPerPage-1)/messagesPerPage)
	if page > pages {
		s.notFound(ctx)
		return
	}
	src, _ := s.eng.Source(ch.SourceID)
	data := channelData{Channel: ch, Source: src, Total: total,
		Pager:  pager{URL: "/c/" + slug, Page: page, Pages: pages, Label: "Pages"},
		Pager2: pager{URL: "/c/" + slug, Page: page, Pages: pages, Label: "Pages (end of list)"}}
	threads := map[string]string{} // thread id → slug
	for _, c := range s.eng.Channels(ch.SourceID, false) {
		switch {
		case c.ParentID == ch.ID && c.ID != ch.ID:
			data.Threads = append(data.Threads, c)
			threads[c.ID] = c.Slug
		case ch.ParentID != "" && c.ID == ch.ParentID:
			p := c
			data.Parent = &p
		}
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		ids[m.ID] = true
	}
	for i := range msgs {
		m := &msgs[i]
		v := messageView{
			ID: m.ID, Who: cmp.Or(m.AuthorName, m.Author), ISO: m.Timestamp.UTC().Format(time.RFC3339),
			When: m.Timestamp.UTC().Format("2006-01-02 15:04"), Edited: !m.EditedAt.IsZero(),
			Body: renderMessage(m.Content), Thread: threads[m.ID], m: m,
		}
		switch {
		case m.ReplyTo != "" && ids[m.ReplyTo]:
			v.ReplyHref = "#m-" + m.ReplyTo
		case m.ReplyTo != "":
			v.ReplyHref = "?m=" + url.QueryEscape(m.ReplyTo) + "#m-" + m.ReplyTo
		}
		if m.AuthorName != "" && m.AuthorName != m.Author {
			v.Handle = m.Author
		}
		data.Msgs = append(data.Msgs, v)
	}
	canonical := s.opts.BaseURL + "/c/" + slug
	if page > 1 {
		canonical += "?page=" + strconv.Itoa(page)
	}
	name := "#" + ch.Name
	title := name
	if page > 1 {
		title += fmt.Sprintf(" (page %d)", page)
	}
	desc := fmt.Sprintf("%s messages in %s on %s.", thousands(total), name, src.Name)
	if ch.Topic != "" {
		desc = ch.Topic + " — " + desc
	} else if len(msgs) > 0 {
		desc = msgs[0].Content + " — " + desc
	}
	data.Head = head{
		Title: s.title(title, src.Name), Description: description(desc), Canonical: canonical,
		Type: "article", JSONLD: s.partOfSite(channelJSONLD(canonical, name, data.Msgs)), Script: true,
	}
	// The page also shows counts and links that other writes change: it is
	// dated by the engine's last change, not by its own messages.
	s.render(ctx, "channel.html", pageOpts{modified: s.lastChange()}, data)
}

// slugParam reads the {slug} of a page's path; a malformed one has
// answered 404 when ok is false.
func (s *Server) slugParam(ctx *fasthttp.RequestCtx) (slug string, ok bool) {
	slug = pathParam(ctx, "slug")
	if !engine.ValidSlug(slug) {
		s.notFound(ctx)
		return "", false
	}
	return slug, true
}

// channelJSONLD describes a channel page as a schema.org discussion: the
// first message is the posting, the others its comments.
func channelJSONLD(pageURL, name string, msgs []messageView) map[string]any {
	if len(msgs) == 0 {
		return nil
	}
	person := func(m *engine.Message) map[string]any {
		return map[string]any{"@type": "Person", "name": cmp.Or(m.AuthorName, m.Author)}
	}
	first := msgs[0].m
	post := map[string]any{
		"@context": "https://schema.org", "@type": "DiscussionForumPosting",
		"headline": name, "url": pageURL, "author": person(first),
		"datePublished": first.Timestamp.UTC().Format(time.RFC3339),
		"text":          textCut(first.Content, 2000),
	}
	var comments []any
	for i := range msgs[1:min(len(msgs), 21)] {
		m := msgs[i+1].m
		comments = append(comments, map[string]any{
			"@type": "Comment", "author": person(m), "datePublished": m.Timestamp.UTC().Format(time.RFC3339),
			"text": textCut(m.Content, 500), "url": pageURL + "#m-" + m.ID,
		})
	}
	if len(comments) > 0 {
		post["comment"] = comments
		post["commentCount"] = len(msgs) - 1
	}
	return post
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
	Doc    engine.Document
	Source engine.Source
	Body   template.HTML
}

// documentPage serves GET /d/{slug}: Markdown rendered and sanitised,
// other documents as text.
func (s *Server) documentPage(ctx *fasthttp.RequestCtx) {
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
	if doc.Format == engine.FormatMarkdown {
		body = renderMarkdown(doc.Content, doc.Title, s.docLinker(&doc))
	}
	canonical := s.opts.BaseURL + "/d/" + slug
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
		Head: head{Title: s.title(doc.Title), Description: description(doc.Content), Canonical: canonical, Type: "article", JSONLD: ld},
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
func (s *Server) docLinker(doc *engine.Document) func(string) string {
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
			if d, ok := s.eng.Document(engine.DocumentID(doc.SourceID, k)); ok && !d.Hidden {
				if u.Fragment != "" {
					return "/d/" + d.Slug + "#" + u.EscapedFragment()
				}
				return "/d/" + d.Slug
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
	engine.Source
	Stats     engine.SourceStats
	Channels  []engine.Channel
	Documents []engine.Document
	MoreDocs  int
	Updated   time.Time
}

// maxListed bounds the documents listed per source on /sources; the rest
// are in the sitemap and llms.txt.
const maxListed = 200

// sourcesPage serves GET /sources: every source with its channels and
// documents.
func (s *Server) sourcesPage(ctx *fasthttp.RequestCtx) {
	data := sourcesData{Head: head{Title: s.title("Sources"), Canonical: s.opts.BaseURL + "/sources",
		Description: "The sources " + s.siteName() + " indexes: chat channels, documents and web pages."}}
	var modified time.Time
	for _, src := range s.eng.Sources() {
		v := sourceView{Source: src, Stats: s.eng.SourceStats(src.ID, false), Updated: src.UpdatedAt}
		if v.Stats.Channels+v.Stats.Documents == 0 && (src.ID == engine.UploadsSourceID || src.Hidden()) {
			continue // nothing to show, or nothing it may show
		}
		for _, c := range s.eng.Channels(src.ID, false) {
			if c.ParentID == "" {
				v.Channels = append(v.Channels, c)
			}
		}
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
