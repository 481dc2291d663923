package httpapi

// The server's handlers live in rooms, one per audience, over the shared
// core (Server: its stores, authentication, limits, errors, rendering and
// the route table in routes.go). A room embeds the core and adds only its
// own handlers, mainly in the files named; a room calls another's through
// the core's fields (s.api.searchFor from the pages).
//
//	api      the public and agents' JSON API: search, semantic search, ask,
//	         suggestions, reading, health, OpenAPI, MCP (search.go,
//	         semantic.go, ask.go, sse.go, suggest.go, reading.go, backend.go,
//	         mcp.go, openapi.go, admin.go's health)
//	manage   the operators' JSON API: sources, channels, opt-outs, document
//	         uploads, settings, the logo, backups (sources.go, channels.go,
//	         documents.go, site_logo.go, admin.go's backup)
//	pages    the public HTML: home, channels, conversations, documents, the
//	         search page, status, sitemaps, robots.txt and llms.txt
//	         (pages_*.go, conversations.go, seo.go)
//	console  the operator's HTML console under /dashboard (console*.go,
//	         dashboard.go), with its anti-CSRF key and flashes
//	tally    what people search and ask: noted by the API and the pages,
//	         reported to operators (insights.go)

// api is the public and agents' JSON API.
type api struct{ *Server }

// manage is the operators' JSON API.
type manage struct{ *Server }

// pages is the public HTML site.
type pages struct{ *Server }

// console is the operator's HTML console.
type console struct {
	*Server
	key     [32]byte // HMAC key of the anti-CSRF tokens; random per process
	flashes *flashStore
}

// tally notes searches and questions and reports on them.
type tally struct{ *Server }
