package httpapi

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

// routes is the whole route table. Access: s.public (no credentials, the
// public tier's rate limit unless admin credentials lift it), s.search
// (SEARCH_ACCESS decides), s.suggestAccess (as s.search, with buckets of
// its own), s.bearer (the API key), s.admin (Basic Auth or
// Bearer); pages and the health check are open and not limited (but the
// home page's server-side answers, which share the public tier's buckets).
func (s *Server) routes() *router.Router {
	r := router.New()
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.SaveMatchedRoutePath = true // the route's pattern labels its metrics

	// Pages and the health check answer HEAD too (fasthttp drops the body).
	page := func(path string, h fasthttp.RequestHandler) { r.GET(path, h); r.HEAD(path, h) }

	page("/healthz", s.health)

	r.GET("/api/search", s.searchAccess(s.search))
	r.GET("/api/suggest", s.suggestAccess(s.suggest)) // its own buckets, not the public tier's
	r.GET("/api/semantic-search", s.public(s.semanticSearch))
	r.POST("/api/ask", s.public(s.askHandler(askForm{})))
	r.POST("/api/v1/ask", s.bearer(s.askHandler(askForm{v1: true})))
	r.GET("/api/documents", s.public(s.listDocuments))
	r.POST("/api/documents", s.admin(s.uploadDocuments))
	r.GET("/api/documents/{id}", s.public(s.getDocument)) // id or slug
	r.DELETE("/api/documents/{id}", s.admin(s.deleteDocument))
	r.GET("/api/channels/{slug}/messages", s.public(s.channelMessages))
	r.POST("/api/admin/backup", s.admin(s.backup))
	r.GET("/api/admin/insights", s.admin(s.adminInsights))
	r.GET("/api/sources", s.admin(s.listSources))
	r.POST("/api/sources", s.admin(s.createSource))
	r.GET("/api/sources/{id}", s.admin(s.getSource))
	r.PATCH("/api/sources/{id}", s.admin(s.patchSource))
	r.DELETE("/api/sources/{id}", s.admin(s.deleteSource))
	r.POST("/api/sources/{id}/crawl", s.admin(s.crawlSource))
	r.POST("/api/sources/{id}/test", s.admin(s.testSource))
	r.POST("/api/sources/{id}/import", s.admin(s.importSource))
	r.GET("/api/sources/{id}/channels", s.admin(s.listChannels))
	r.PATCH("/api/sources/{id}/channels/{channelId}", s.admin(s.patchChannel))
	r.DELETE("/api/sources/{id}/channels/{channelId}", s.admin(s.deleteChannel))
	r.POST("/api/sources/{id}/channels/{channelId}/restore", s.admin(s.restoreChannel))
	r.GET("/api/sources/{id}/optouts", s.admin(s.listOptOuts))
	r.POST("/api/sources/{id}/optouts", s.admin(s.addOptOut))
	r.DELETE("/api/sources/{id}/optouts/{author}", s.admin(s.deleteOptOut))
	r.GET("/api/settings", s.admin(s.getSettings))
	r.PATCH("/api/settings", s.admin(s.patchSettings))
	r.PUT("/api/settings/logo", s.admin(s.putLogo))
	r.DELETE("/api/settings/logo", s.admin(s.deleteLogo))
	r.GET("/metrics", s.metricsAccess(s.serveMetrics))
	// MCP (streamable HTTP, stateless): access is decided per tool call
	// inside, from the same credentials and buckets as s.public (mcp.go).
	r.POST("/mcp", s.mcpHandler())
	r.GET("/mcp", mcpStateless)
	r.DELETE("/mcp", mcpStateless)

	page("/", s.homePage)
	r.POST("/", s.homePage) // the ask box without JavaScript
	page("/sources", s.sourcesPage)
	page(channelRoute, s.channelPage)
	page(documentRoute, s.documentPage)
	page(convoRoute, s.conversationPage)
	page("/status", s.statusPage)
	page("/robots.txt", s.robotsTxt)
	page("/sitemap.xml", s.sitemapIndex)
	page("/sitemap-{n}.xml", s.sitemapFile)
	page("/llms.txt", s.llmsTxt)
	page("/llms-full.txt", s.llmsFullTxt)
	page("/openapi.json", s.openAPI())
	page("/static/{name}", s.staticFile)
	page("/site/logo", s.serveLogo)
	page("/dashboard", s.basicOnly(s.dashboard))
	page("/dashboard/insights", s.basicOnly(s.consoleInsights))
	// The operator's console: pages with Basic Auth only; its actions are
	// POSTs that also need a same-site request and the form's token.
	page("/dashboard/add-source", s.basicOnly(s.consoleAddForm))
	page("/dashboard/sources/{id}", s.basicOnly(s.consoleSource))
	page("/dashboard/sources/{id}/delete", s.basicOnly(s.consoleConfirmDelete))
	page("/dashboard/sources/{id}/channels", s.basicOnly(s.consoleChannels))
	page("/dashboard/sources/{id}/channels/delete", s.basicOnly(s.consoleConfirmChannelDelete))
	r.POST("/dashboard/sources", s.consolePost(s.consoleAdd))
	r.POST("/dashboard/sources/{id}", s.consolePost(s.consoleEdit))
	r.POST("/dashboard/sources/{id}/delete", s.consolePost(s.consoleDelete))
	r.POST("/dashboard/sources/{id}/test", s.consolePost(s.consoleTest))
	r.POST("/dashboard/sources/{id}/crawl", s.consolePost(s.consoleCrawl))
	r.POST("/dashboard/sources/{id}/import", s.consolePost(s.consoleImport))
	r.POST("/dashboard/sources/{id}/channels/visibility", s.consolePost(s.consoleChannelVisibility))
	r.POST("/dashboard/sources/{id}/channels/delete", s.consolePost(s.consoleDeleteChannel))
	r.POST("/dashboard/sources/{id}/channels/restore", s.consolePost(s.consoleRestoreChannel))
	r.POST("/dashboard/sources/{id}/optouts", s.consolePost(s.consoleOptOut))
	r.POST("/dashboard/sources/{id}/optouts/delete", s.consolePost(s.consoleOptIn))
	r.POST("/dashboard/documents", s.consolePost(s.consoleUpload))
	r.POST("/dashboard/settings", s.consolePost(s.consoleSettings))
	r.POST("/dashboard/settings/logo", s.consolePost(s.consoleLogo))
	r.POST("/dashboard/settings/logo/delete", s.consolePost(s.consoleDeleteLogo))

	r.NotFound = s.notFound
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "method %s not allowed here (allowed: %s)",
			ctx.Method(), ctx.Response.Header.Peek("Allow"))
	}
	return r
}

// searchAccess applies SEARCH_ACCESS to GET /api/search: public (rate
// limited) or Bearer only.
func (s *Server) searchAccess(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.opts.SearchAccess == "bearer" {
		return s.bearer(h)
	}
	return s.public(h)
}
