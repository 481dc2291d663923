package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/valyala/fasthttp"
)

// openAPIDoc is the OpenAPI 3.1 description of every route in routes.go,
// maintained by hand next to the handlers; openapi_test.go fails when a
// route is missing from it or an answer does not match its schemas.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPI returns the handler of GET /openapi.json: the document with its
// servers entry set to BASE_URL, built once.
func (s *api) openAPI() fasthttp.RequestHandler {
	doc := withServer(openAPIDoc, s.opts.BaseURL)
	return func(ctx *fasthttp.RequestCtx) {
		s.sendPage(ctx, "application/json; charset=utf-8", doc, pageOpts{})
	}
}

// withServer returns doc with its servers replaced by one entry, base. The
// rest of the document keeps its order and layout.
func withServer(doc []byte, base string) []byte {
	const key = `"servers": [`
	i := bytes.Index(doc, []byte(key))
	if i < 0 {
		panic("BUG: openapi.json has no servers entry")
	}
	end := bytes.IndexByte(doc[i:], ']')
	if end < 0 {
		panic("BUG: openapi.json's servers entry is not closed")
	}
	entry, err := json.Marshal(map[string]string{"url": base, "description": "BASE_URL of this instance"})
	if err != nil {
		panic(fmt.Sprintf("BUG: encode the servers entry: %v", err))
	}
	out := make([]byte, 0, len(doc)+len(entry))
	out = append(out, doc[:i+len(key)]...)
	out = append(out, entry...)
	return append(out, doc[i+end:]...)
}
