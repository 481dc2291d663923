package httpapi

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// routes is the whole route table, each handler in its room (rooms.go).
// Access: s.public (no credentials, the public tier's rate limit unless
// admin credentials lift it), api.searchAccess (SEARCH_ACCESS decides),
// api.suggestAccess (as searchAccess, with buckets of its own), s.bearer
// (the API key), s.admin (Basic Auth or Bearer), s.basicOnly and
// console.consolePost (the console); pages and the health check are open
// and not limited (but the home page's server-side answers, which share
// the public tier's buckets).
func (s *Server) routes() *router.Router {
	api, manage, pages, console, tally := s.api, s.manage, s.pages, s.console, s.tally
	r := router.New()
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.SaveMatchedRoutePath = true // the route's pattern labels its metrics

	// Pages and the health check answer HEAD too (fasthttp drops the body).
	page := func(path string, h fasthttp.RequestHandler) { r.GET(path, h); r.HEAD(path, h) }

	page("/healthz", api.health)

	r.GET("/api/search", api.searchAccess(api.search))
	r.GET("/api/suggest", api.suggestAccess(api.suggest)) // its own buckets, not the public tier's
	r.GET("/api/semantic-search", s.public(api.semanticSearch))
	r.POST("/api/ask", s.public(api.askHandler(askForm{})))
	r.POST("/api/v1/ask", s.bearer(api.askHandler(askForm{v1: true})))
	r.GET("/api/documents", s.public(api.listDocuments))
	r.POST("/api/documents", s.admin(manage.uploadDocuments))
	r.GET("/api/documents/{id}", s.public(api.getDocument)) // id or slug
	r.DELETE("/api/documents/{id}", s.admin(manage.deleteDocument))
	r.GET("/api/channels/{slug}/messages", s.public(api.channelMessages))
	r.POST("/api/admin/backup", s.admin(manage.backup))
	r.GET("/api/admin/insights", s.admin(tally.adminInsights))
	r.GET("/api/sources", s.admin(manage.listSources))
	r.POST("/api/sources", s.admin(manage.createSource))
	r.GET("/api/sources/{id}", s.admin(manage.getSource))
	r.PATCH("/api/sources/{id}", s.admin(manage.patchSource))
	r.DELETE("/api/sources/{id}", s.admin(manage.deleteSource))
	r.POST("/api/sources/{id}/crawl", s.admin(manage.crawlSource))
	r.POST("/api/sources/{id}/test", s.admin(manage.testSource))
	r.POST("/api/sources/{id}/import", s.admin(manage.importSource))
	r.GET("/api/sources/{id}/channels", s.admin(manage.listChannels))
	r.PATCH("/api/sources/{id}/channels/{channelId}", s.admin(manage.patchChannel))
	r.DELETE("/api/sources/{id}/channels/{channelId}", s.admin(manage.deleteChannel))
	r.POST("/api/sources/{id}/channels/{channelId}/restore", s.admin(manage.restoreChannel))
	r.GET("/api/sources/{id}/optouts", s.admin(manage.listOptOuts))
	r.POST("/api/sources/{id}/optouts", s.admin(manage.addOptOut))
	r.DELETE("/api/sources/{id}/optouts/{author}", s.admin(manage.deleteOptOut))
	r.GET("/api/settings", s.admin(manage.getSettings))
	r.PATCH("/api/settings", s.admin(manage.patchSettings))
	r.PUT("/api/settings/logo", s.admin(manage.putLogo))
	r.DELETE("/api/settings/logo", s.admin(manage.deleteLogo))
	r.GET("/metrics", s.metricsAccess(s.serveMetrics))
	// MCP (streamable HTTP, stateless): access is decided per tool call
	// inside, from the same credentials and buckets as s.public (mcp.go).
	r.POST("/mcp", api.mcpHandler())
	r.GET("/mcp", mcpStateless)
	r.DELETE("/mcp", mcpStateless)

	page("/", pages.homePage)
	r.POST("/", pages.homePage) // the ask box without JavaScript
	page("/sources", pages.sourcesPage)
	page(channelRoute, pages.channelPage)
	page(documentRoute, pages.documentPage)
	page(convoRoute, pages.conversationPage)
	page("/status", pages.statusPage)
	page("/robots.txt", pages.robotsTxt)
	page("/sitemap.xml", pages.sitemapIndex)
	page("/sitemap-{n}.xml", pages.sitemapFile)
	page("/llms.txt", pages.llmsTxt)
	page("/llms-full.txt", pages.llmsFullTxt)
	page("/openapi.json", api.openAPI())
	page("/static/{name}", pages.staticFile)
	page("/site/logo", pages.serveLogo)
	page("/dashboard", s.basicOnly(console.dashboard))
	page("/dashboard/insights", s.basicOnly(console.consoleInsights))
	// The operator's console: pages with Basic Auth only; its actions are
	// POSTs that also need a same-site request and the form's token.
	page("/dashboard/add-source", s.basicOnly(console.consoleAddForm))
	page("/dashboard/sources/{id}", s.basicOnly(console.consoleSource))
	page("/dashboard/sources/{id}/delete", s.basicOnly(console.consoleConfirmDelete))
	page("/dashboard/sources/{id}/channels", s.basicOnly(console.consoleChannels))
	page("/dashboard/sources/{id}/channels/delete", s.basicOnly(console.consoleConfirmChannelDelete))
	r.POST("/dashboard/sources", console.consolePost(console.consoleAdd))
	r.POST("/dashboard/sources/{id}", console.consolePost(console.consoleEdit))
	r.POST("/dashboard/sources/{id}/delete", console.consolePost(console.consoleDelete))
	r.POST("/dashboard/sources/{id}/test", console.consolePost(console.consoleTest))
	r.POST("/dashboard/sources/{id}/crawl", console.consolePost(console.consoleCrawl))
	r.POST("/dashboard/sources/{id}/import", console.consolePost(console.consoleImport))
	r.POST("/dashboard/sources/{id}/channels/visibility", console.consolePost(console.consoleChannelVisibility))
	r.POST("/dashboard/sources/{id}/channels/delete", console.consolePost(console.consoleDeleteChannel))
	r.POST("/dashboard/sources/{id}/channels/restore", console.consolePost(console.consoleRestoreChannel))
	r.POST("/dashboard/sources/{id}/optouts", console.consolePost(console.consoleOptOut))
	r.POST("/dashboard/sources/{id}/optouts/delete", console.consolePost(console.consoleOptIn))
	r.POST("/dashboard/documents", console.consolePost(console.consoleUpload))
	r.POST("/dashboard/settings", console.consolePost(console.consoleSettings))
	r.POST("/dashboard/settings/logo", console.consolePost(console.consoleLogo))
	r.POST("/dashboard/settings/logo/delete", console.consolePost(console.consoleDeleteLogo))

	r.NotFound = s.notFound
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "method %s not allowed here (allowed: %s)",
			ctx.Method(), ctx.Response.Header.Peek("Allow"))
	}
	return r
}

// searchAccess applies SEARCH_ACCESS to GET /api/search: public (rate
// limited) or Bearer only.
func (s *api) searchAccess(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.opts.SearchAccess == "bearer" {
		return s.bearer(h)
	}
	return s.public(h)
}
