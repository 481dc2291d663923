package httpapi

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// sitemapMaxURLs is the sitemaps.org limit of URLs per file.
const sitemapMaxURLs = 50_000

// sitemapURL is one page of the sitemap.
type sitemapURL struct {
	Loc     string
	LastMod time.Time
}

// robotsTxt serves GET /robots.txt: pages open, the API and the dashboard
// closed, and where the sitemap is.
func (s *pages) robotsTxt(ctx *fasthttp.RequestCtx) {
	body := "User-agent: *\nAllow: /\nDisallow: /api/\nDisallow: /dashboard\nDisallow: /*?q=\nDisallow: /*&q=\nDisallow: /*?m=\n\nSitemap: " +
		s.opts.BaseURL + "/sitemap.xml\n"
	s.sendPage(ctx, "text/plain; charset=utf-8", []byte(body), pageOpts{})
}

// seqCache keeps what is computed from the content until the next
// write of content: every write, so one that hides a channel or removes an
// author's messages shows at once.
type seqCache[T any] struct {
	mu  sync.Mutex
	seq uint64
	ok  bool
	val T
}

// get returns the value for the content as of seq, computing it when the
// content changed since.
func (c *seqCache[T]) get(seq uint64, compute func() T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.seq != seq {
		c.val, c.seq, c.ok = compute(), seq, true
	}
	return c.val
}

// sitemapURLs lists every public page: home, /sources, each page of each
// channel, each conversation with a reply, each document. The list is
// computed again only after a write.
func (s *pages) sitemapURLs() []sitemapURL {
	return s.sitemap.get(s.contentSeq(), s.listPages)
}

func (s *pages) listPages() []sitemapURL {
	base := s.opts.BaseURL
	var newest time.Time
	var urls []sitemapURL
	for _, ch := range s.eng.Channels("", false) {
		times, err := s.eng.ChannelPageTimes(ch.Slug, messagesPerPage)
		if err != nil {
			continue
		}
		for i, t := range times {
			loc := channelURL(base, ch.Slug)
			if i > 0 {
				loc += "?page=" + strconv.Itoa(i+1)
			}
			urls = append(urls, sitemapURL{loc, t})
			if t.After(newest) {
				newest = t
			}
		}
		s.eachConversation(ch, func(slug string, last time.Time) {
			urls = append(urls, sitemapURL{conversationURL(base, slug, ""), last})
		})
	}
	docs, _ := s.eng.Documents(0, math.MaxInt, false)
	for i := range docs {
		urls = append(urls, sitemapURL{DocumentURL(base, docs[i].Slug), docs[i].UpdatedAt})
		if docs[i].UpdatedAt.After(newest) {
			newest = docs[i].UpdatedAt
		}
	}
	return append([]sitemapURL{{base + "/", newest}, {base + "/sources", newest}}, urls...)
}

// splitSitemap cuts the URLs into files of at most max.
func splitSitemap(urls []sitemapURL, max int) [][]sitemapURL {
	var out [][]sitemapURL
	for len(urls) > max {
		out = append(out, urls[:max])
		urls = urls[max:]
	}
	return append(out, urls)
}

func lastMod(urls []sitemapURL) time.Time {
	var t time.Time
	for _, u := range urls {
		if u.LastMod.After(t) {
			t = u.LastMod
		}
	}
	return t
}

// w3c writes a lastmod in W3C Datetime.
func w3c(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// writeSitemapIndex writes a sitemap index of n child sitemaps.
func writeSitemapIndex(w *bytes.Buffer, base string, parts [][]sitemapURL) {
	w.WriteString(xml.Header)
	w.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i, p := range parts {
		fmt.Fprintf(w, "<sitemap><loc>%s</loc>", xmlText(fmt.Sprintf("%s/sitemap-%d.xml", base, i+1)))
		if t := lastMod(p); !t.IsZero() {
			fmt.Fprintf(w, "<lastmod>%s</lastmod>", w3c(t))
		}
		w.WriteString("</sitemap>\n")
	}
	w.WriteString("</sitemapindex>\n")
}

// writeURLSet writes one sitemap file.
func writeURLSet(w *bytes.Buffer, urls []sitemapURL) {
	w.WriteString(xml.Header)
	w.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, u := range urls {
		fmt.Fprintf(w, "<url><loc>%s</loc>", xmlText(u.Loc))
		if !u.LastMod.IsZero() {
			fmt.Fprintf(w, "<lastmod>%s</lastmod>", w3c(u.LastMod))
		}
		w.WriteString("</url>\n")
	}
	w.WriteString("</urlset>\n")
}

// sitemapIndex serves GET /sitemap.xml. The child sitemaps sit beside it
// at the root, so they may list every page (sitemaps.org: a sitemap lists
// URLs at or below its own directory).
func (s *pages) sitemapIndex(ctx *fasthttp.RequestCtx) {
	parts := splitSitemap(s.sitemapURLs(), s.sitemapMax())
	var b bytes.Buffer
	writeSitemapIndex(&b, s.opts.BaseURL, parts)
	s.sendPage(ctx, "application/xml; charset=utf-8", b.Bytes(), pageOpts{modified: s.lastChange()})
}

// sitemapFile serves GET /sitemap-{n}.xml.
func (s *pages) sitemapFile(ctx *fasthttp.RequestCtx) {
	name := pathParam(ctx, "n")
	n, err := strconv.Atoi(name)
	if err != nil || n < 1 || strconv.Itoa(n) != name {
		s.notFound(ctx)
		return
	}
	parts := splitSitemap(s.sitemapURLs(), s.sitemapMax())
	if n > len(parts) {
		s.notFound(ctx)
		return
	}
	var b bytes.Buffer
	writeURLSet(&b, parts[n-1])
	s.sendPage(ctx, "application/xml; charset=utf-8", b.Bytes(), pageOpts{modified: s.lastChange()})
}

func (s *pages) sitemapMax() int {
	if s.opts.sitemapMaxURLs > 0 {
		return s.opts.sitemapMaxURLs
	}
	return sitemapMaxURLs
}

// llmsTxt serves GET /llms.txt (llmstxt.org): what this instance holds and
// how an agent calls it.
func (s *pages) llmsTxt(ctx *fasthttp.RequestCtx) {
	base := s.opts.BaseURL
	c := s.eng.Counts(false)
	srcs := s.eng.Sources()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", s.siteName())
	fmt.Fprintf(&b, "> Search and question answering over %s in %s and %s, with a JSON API for agents.\n\n",
		count(c.Messages, "chat message"), count(c.Channels, "channel"), count(c.Documents, "document"))
	if d := s.siteDescription(); d != "" {
		fmt.Fprintf(&b, "%s\n\n", mdText(d))
	}
	b.WriteString("Sources: ")
	listed := 0
	for _, src := range srcs {
		st := s.eng.SourceStats(src.ID, false)
		if st.Messages+st.Documents == 0 {
			continue
		}
		if listed++; listed > 1 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (`%s`, %s: %s, %s)", mdText(src.Name), src.ID, src.Type, count(st.Messages, "message"), count(st.Documents, "document"))
	}
	b.WriteString(".\n\n")
	limit := "no limit"
	if s.opts.PublicRateLimit > 0 {
		limit = fmt.Sprintf("%d requests per minute per client address (burst %d)", s.opts.PublicRateLimit, s.opts.PublicRateLimit)
	}
	fmt.Fprintf(&b, "Access: the public endpoints need no key and are limited to %s; past it they answer 429 with `Retry-After`, and every limited answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`. `Authorization: Bearer <key>` (the operator's API key) lifts the limit, opens `/api/v1/ask` and lets the API answer from the private conversations this instance holds (without it, only public content is served). Errors are JSON `{\"error\", \"code\"}`.\n\n", limit)
	searchAccess, searchAuth := "public", ""
	if s.opts.SearchAccess == "bearer" {
		searchAccess, searchAuth = "Bearer key required", "-H 'Authorization: Bearer $API_KEY' "
	}
	fmt.Fprintf(&b, `Semantic search, for agents (public): `+"`q`"+` required (at most 2048 bytes), `+"`limit`"+` 1–20 (default 10), `+"`max_chars`"+` 200–10000 (default 2000), `+"`boost`"+` as `+"`sourceId:multiplier`"+` pairs (0.1–10), `+"`hyde=0`"+` to skip query expansion, `+"`source`"+` to restrict to source ids. Results carry `+"`type`, `score` (0–1), `title`, `source`, `content`, `url`"+` (a deep link).

`+"```sh\ncurl '%s/api/semantic-search?q=how+to+retry+failed+jobs&limit=5'\n```"+`

Full-text search (%s): `+"`q`"+` (quoted phrases, `+"`-term`"+`), `+"`limit`"+` 1–100 (default 20), `+"`offset`"+`, `+"`source`, `channel`, `from`, `after`/`before`"+` (dates).

`+"```sh\ncurl %s'%s/api/search?q=%%22exit+code%%22+-docker&limit=10'\n```"+`

Ask (public): `+"`POST /api/ask`"+` with JSON `+"`{\"question\": \"…\", \"messages\": [{\"role\": \"user\"|\"assistant\", \"content\": \"…\"}]}`"+` (question 1–4000 characters, history at most 100 turns); `+"`Accept: text/event-stream`"+` streams `+"`sources`, `token`… and `done`"+` events, otherwise one JSON answer `+"`{answer, sources, usage}`"+` with `+"`[n]`"+` citations into `+"`sources`"+`. `+"`POST /api/v1/ask`"+` is the same for integrations with the Bearer key.

`+"```sh\ncurl -H 'Content-Type: application/json' -d '{\"question\":\"How do I configure retries?\"}' %s/api/ask\n```"+`

Documents (public list): `+"`GET /api/documents?limit=100&offset=0`"+`; each document has a page at `+"`"+documentRoute+"`"+`, each channel at `+"`"+channelRoute+"`"+` (100 messages a page, oldest first, `+"`?page=N`"+`).

Reading (public): `+"`GET /api/documents/{id-or-slug}?offset=0&length=20000`"+` gives a document in windows of characters (read on from `+"`nextOffset`"+`); `+"`GET /api/channels/{slug}/messages?around={message-id}&limit=50`"+` (or `+"`before`"+`/`+"`after`"+` a message id or a time) gives the conversation around a message. `+"`/api/search?content=snippet`"+` keeps document hits short.

`, base, searchAccess, searchAuth, base, base)
	fmt.Fprintf(&b, "Agents: the OpenAPI 3.1 description of every endpoint (parameters, bounds, answers, errors, authentication) is at `%s/openapi.json`. A Model Context Protocol server is at `%s/mcp` (streamable HTTP transport: JSON-RPC by POST), with tools `search`, `semantic_search`, `ask`, `read_document`, `read_channel` and `list_sources` under the same access rules as the HTTP API.\n\n", base, base)
	b.WriteString("## API\n\n")
	fmt.Fprintf(&b, "- [OpenAPI description](%s/openapi.json): GET, every route, parameter and schema (OpenAPI 3.1)\n", base)
	fmt.Fprintf(&b, "- [MCP server](%s/mcp): POST JSON-RPC, Model Context Protocol over streamable HTTP; public, the Bearer key lifts the limit\n", base)
	fmt.Fprintf(&b, "- [Semantic search](%s/api/semantic-search?q=example): GET, public; the best entry point for agents\n", base)
	fmt.Fprintf(&b, "- [Full-text search](%s/api/search?q=example): GET, %s\n", base, searchAccess)
	fmt.Fprintf(&b, "- [Ask](%s/api/ask): POST only, JSON body, public; streamed or one JSON answer\n", base)
	fmt.Fprintf(&b, "- [Documents](%s/api/documents): GET, public\n", base)
	fmt.Fprintf(&b, "- [Health](%s/healthz): GET, counts and index status\n\n", base)
	b.WriteString("## Sources\n\n")
	fmt.Fprintf(&b, "- [All sources and channels](%s/sources): channels, documents and web pages by source\n", base)
	for _, ch := range s.eng.Channels("", false) {
		if ch.ParentID != "" {
			continue
		}
		fmt.Fprintf(&b, "- [#%s](%s): %s\n", mdText(ch.Name), channelURL(base, ch.Slug), mdText(sourceName(srcs, ch.SourceID)))
	}
	docs, total := s.eng.Documents(0, 500, false)
	if total > 0 {
		b.WriteString("\n## Documents\n\n")
		for _, d := range docs {
			fmt.Fprintf(&b, "- [%s](%s): updated %s\n", mdText(d.Title), DocumentURL(base, d.Slug), d.UpdatedAt.UTC().Format("2006-01-02"))
		}
	}
	b.WriteString("\n## Optional\n\n")
	fmt.Fprintf(&b, "- [Every document in one file](%s/llms-full.txt): the full text of all %s documents\n", base, thousands(total))
	fmt.Fprintf(&b, "- [Sitemap](%s/sitemap.xml): every page\n", base)
	s.sendPage(ctx, "text/plain; charset=utf-8", []byte(b.String()), pageOpts{modified: s.lastChange()})
}

func sourceName(srcs []record.Source, id string) string {
	for _, s := range srcs {
		if s.ID == id {
			return s.Name
		}
	}
	return id
}

// mdText keeps a name from breaking a Markdown list item's link.
func mdText(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", "\n", " ", "\r", " ").Replace(s)
}

// llmsFullTxt serves GET /llms-full.txt: every document's text, newest
// first, streamed.
func (s *pages) llmsFullTxt(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "public, max-age=0, must-revalidate")
	base := s.opts.BaseURL
	docs, _ := s.eng.Documents(0, math.MaxInt, false) // copies of the records; texts are shared
	site := s.siteName()
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		fmt.Fprintf(w, "# %s: all documents\n\n", site)
		for i, d := range docs {
			fmt.Fprintf(w, "## %s\n\nPage: %s\n", mdText(d.Title), DocumentURL(base, d.Slug))
			if d.URL != "" {
				fmt.Fprintf(w, "Origin: %s\n", d.URL)
			}
			fmt.Fprintf(w, "Updated: %s\n\n%s\n\n---\n\n", d.UpdatedAt.UTC().Format("2006-01-02"), d.Content)
			if i%50 == 49 {
				if err := w.Flush(); err != nil {
					return // the client left
				}
			}
		}
	})
}
