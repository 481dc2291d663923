package httpapi

import (
	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// privileged reports whether a request carries the API key or the admin's
// Basic Auth: such callers of the API see private content too. Pages always
// show the public view; the dashboard shows everything.
func (s *Server) privileged(ctx *fasthttp.RequestCtx) bool {
	return s.auth.bearerOK(ctx) || s.auth.basicOK(ctx)
}

// publicDocuments keeps the documents callers without credentials may see.
func publicDocuments(docs []record.Document) []record.Document {
	out := docs[:0]
	for _, d := range docs {
		if !d.Hidden {
			out = append(out, d)
		}
	}
	return out
}
