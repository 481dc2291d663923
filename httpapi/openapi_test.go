package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"

	"github.com/sift-search/sift/insights"
	"github.com/sift-search/sift/internal/demo"
	"github.com/sift-search/sift/record"
)

// The OpenAPI document (openapi.json) is kept honest here: it must be a
// valid OpenAPI 3.1 document, describe exactly the routes the router has,
// and match what a running server answers.

// openAPIModel parses doc with libopenapi and builds its 3.x model.
func openAPIModel(t *testing.T, doc []byte) libopenapi.Document {
	t.Helper()
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	if info := d.GetSpecInfo(); info.VersionNumeric != 3.1 {
		t.Fatalf("openapi.json is OpenAPI %s, want 3.1", info.Version)
	}
	if _, err := d.BuildV3Model(); err != nil {
		t.Fatalf("openapi.json does not build a model: %v", err)
	}
	return d
}

func validationErrors(errs []*vErrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s (%s)", e.Message, e.Reason, e.SpecPath)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s at %s (schema %s)", f.Reason, f.FieldPath, f.KeywordLocation)
		}
	}
	return b.String()
}

func TestOpenAPIDocumentValid(t *testing.T) {
	d := openAPIModel(t, openAPIDoc)
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	// Against the OpenAPI 3.1 specification's own schema.
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document:%s", validationErrors(verrs))
	}
	// Every $ref resolves, and operation ids are unique.
	m, _ := d.BuildV3Model()
	if m.Index != nil {
		if errs := m.Index.GetResolver().GetResolvingErrors(); len(errs) > 0 {
			t.Fatalf("unresolved references: %v", errs)
		}
	}
	var all map[string]any
	if err := json.Unmarshal(openAPIDoc, &all); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for path, ops := range openAPIOperations(t, openAPIDoc) {
		for method, op := range ops {
			id, _ := op["operationId"].(string)
			if id == "" {
				continue
			}
			if prev, dup := ids[id]; dup {
				t.Errorf("operationId %q of %s %s is also %s's", id, method, path, prev)
			}
			ids[id] = method + " " + path
		}
	}
}

// openAPIOperations returns the document's operations by path and method
// (upper case).
func openAPIOperations(t *testing.T, doc []byte) map[string]map[string]map[string]any {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	methods := []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
	out := map[string]map[string]map[string]any{}
	for path, item := range d.Paths {
		out[path] = map[string]map[string]any{}
		for k, raw := range item {
			if !slices.Contains(methods, k) {
				continue
			}
			var op map[string]any
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", k, path, err)
			}
			out[path][strings.ToUpper(k)] = op
		}
	}
	return out
}

// routePattern writes a fasthttp/router path as an OpenAPI path template:
// {name:regexp} and {name?} become {name}, a catch-all {name:*} too.
var routeParam = regexp.MustCompile(`\{([^}:?]+)[^}]*\}`)

func routePattern(p string) string { return routeParam.ReplaceAllString(p, "{$1}") }

func TestOpenAPICoversEveryRoute(t *testing.T) {
	for _, access := range []string{"public", "bearer"} {
		ts := start(t, func(o *Options) { o.SearchAccess = access; o.PublicRateLimit = 10 })
		routes := ts.srv.routes().List()
		ops := openAPIOperations(t, openAPIDoc)
		inRouter := map[string]map[string]bool{}
		for method, paths := range routes {
			for _, p := range paths {
				p = routePattern(p)
				if inRouter[p] == nil {
					inRouter[p] = map[string]bool{}
				}
				inRouter[p][method] = true
				if _, ok := ops[p][method]; !ok {
					t.Errorf("route %s %s is not described in openapi.json", method, p)
				}
			}
		}
		for p, byMethod := range ops {
			for method := range byMethod {
				if !inRouter[p][method] {
					t.Errorf("openapi.json describes %s %s, which the router does not serve", method, p)
				}
			}
		}
		// Every operation says who may call it, and every API operation
		// answers its errors with the shared error shape.
		for p, byMethod := range ops {
			for method, op := range byMethod {
				if _, ok := op["security"]; !ok {
					t.Errorf("%s %s: no security requirement", method, p)
				}
				res, _ := op["responses"].(map[string]any)
				if len(res) == 0 {
					t.Errorf("%s %s: no responses", method, p)
				}
				if !strings.HasPrefix(p, "/api/") {
					continue
				}
				for status, r := range res {
					if status >= "400" || status == "default" {
						if !strings.Contains(mustJSON(t, r), "#/components/") {
							t.Errorf("%s %s: response %s does not use a shared component", method, p, status)
						}
					}
				}
				if _, ok := res["default"]; !ok {
					t.Errorf("%s %s: no default (error) response", method, p)
				}
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openAPIDemo serves the demo content, semantically indexed, with every
// kind of credentials and a public rate limit that the test stays under.
func openAPIDemo(t *testing.T) *testServer {
	t.Helper()
	eng, idx := semanticDemo(t, nil)
	rec, err := insights.Open(insights.Options{Store: eng})
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, eng, idx, Options{APISecretKey: testKey, AdminUser: testUser, AdminPassword: testPass, PublicRateLimit: 1000, Insights: rec})
	t.Cleanup(func() { rec.Close() })
	return ts
}

// servedValidators fetch /openapi.json from ts and return validators of
// requests and answers built from it: strict, where a field an answer
// carries that the document does not declare fails too, and loose.
func servedValidators(t *testing.T, ts *testServer) (strict, loose validator.Validator) {
	t.Helper()
	r := ts.get(t, "/openapi.json")
	if r.status != 200 {
		t.Fatalf("GET /openapi.json: %d %s", r.status, r.body)
	}
	strict, errs := validator.NewValidator(openAPIModel(t, r.body), config.WithStrictMode(),
		config.WithStrictIgnorePaths("$.body.skippedReasons.*", "$.body.**.skippedReasons.*"), // maps: their keys are data
		config.WithStrictIgnoredHeadersExtra("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy",
			"Vary", "Cache-Control", "ETag", "Last-Modified", "X-Accel-Buffering", "Server", "Date"))
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	loose, errs = validator.NewValidator(openAPIModel(t, r.body))
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	return strict, loose
}

// apiCall is a request of TestOpenAPIAnswersMatch and the status it must get.
type apiCall struct {
	method, path string
	body         string
	header       []string
	status       int
	badRequest   bool // the request itself breaks the document's rules
	loose        bool // an answer whose schema leaves its fields open
	looseRequest bool // a request whose schema leaves its fields open
}

var (
	basicAuth  = []string{"Authorization", "Basic " + basic(testUser, testPass)}
	jsonHeader = "application/json"
)

var mcpHeader = withJSON("Accept", "application/json, text/event-stream")

const mcpInit = `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "openapi-test", "version": "1"}}}`

func withJSON(h ...string) []string { return append([]string{"Content-Type", jsonHeader}, h...) }

func (c apiCall) request(t *testing.T, base string) *http.Request {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Set(c.header[i], c.header[i+1])
	}
	return req
}

// check makes the call and validates the answer (and, for a good request,
// the request) against the document.
func (c apiCall) check(t *testing.T, ts *testServer, strict, loose validator.Validator) []byte {
	t.Helper()
	res, err := http.DefaultClient.Do(c.request(t, ts.url))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != c.status {
		t.Fatalf("%s %s: status %d, want %d: %.300s", c.method, c.path, res.StatusCode, c.status, body)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	v := strict
	if c.loose {
		v = loose
	}
	if ok, errs := v.ValidateHttpResponse(c.request(t, ts.url), res); !ok {
		t.Errorf("%s %s: the %d answer does not match openapi.json:%s\nbody: %.500s", c.method, c.path, res.StatusCode, validationErrors(errs), body)
	}
	if !c.badRequest {
		v := strict
		if c.looseRequest {
			v = loose
		}
		if ok, errs := v.ValidateHttpRequestSync(c.request(t, ts.url)); !ok {
			t.Errorf("%s %s: the request does not match openapi.json:%s", c.method, c.path, validationErrors(errs))
		}
	}
	return body
}

func TestOpenAPIAnswersMatch(t *testing.T) {
	ts := openAPIDemo(t)
	strict, loose := servedValidators(t, ts)
	docs, _ := ts.eng.Documents(0, 1, false)
	if len(docs) == 0 {
		t.Fatal("the demo has no documents")
	}
	doc := docs[0]
	var channel record.Channel
	for _, ch := range ts.eng.Channels(demo.ChatSource, false) {
		if ch.ParentID == "" {
			channel = ch
			break
		}
	}
	if channel.Slug == "" {
		t.Fatal("the demo has no channel")
	}
	export, err := os.ReadFile("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}
	ask := `{"question": "How do I install Wren?", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}`
	calls := []apiCall{
		{method: "GET", path: "/healthz", status: 200},
		{method: "GET", path: "/api/search?q=install&limit=5", status: 200},
		{method: "GET", path: "/api/search?q=install&content=snippet&source=" + demo.DocsSource + "&after=2020-01-01", status: 200},
		{method: "GET", path: "/api/search?q=install", header: bearer, status: 200},
		{method: "GET", path: "/api/suggest?q=how+to+inst", status: 200},
		{method: "GET", path: "/api/suggest?q=wren&limit=3", header: bearer, status: 200},
		{method: "GET", path: "/api/semantic-search?q=how+do+I+install+wren&limit=3&max_chars=300&boost=" + demo.DocsSource + ":1.5&hyde=0", status: 200},
		{method: "GET", path: "/api/semantic-search?q=fiber+scheduling", status: 200},
		{method: "GET", path: "/api/documents?limit=5", status: 200},
		{method: "GET", path: "/api/documents/" + doc.Slug + "?length=200", status: 200},
		{method: "GET", path: "/api/documents/" + doc.ID + "?offset=10&length=100000", header: bearer, status: 200},
		{method: "GET", path: "/api/channels/" + channel.Slug + "/messages?limit=5", status: 200},
		{method: "GET", path: "/api/channels/" + channel.Slug + "/messages?after=2000-01-01T00:00:00Z&limit=3", status: 200},
		{method: "POST", path: "/api/ask", body: ask, header: withJSON(), status: 200},
		{method: "POST", path: "/api/ask?links=pages", body: ask, header: withJSON(), status: 200},
		{method: "POST", path: "/api/v1/ask", body: ask, header: withJSON(bearer...), status: 200},
		{method: "GET", path: "/api/sources", header: basicAuth, status: 200},
		{method: "GET", path: "/api/sources/" + demo.ChatSource, header: bearer, status: 200},
		{method: "GET", path: "/api/sources/" + demo.ChatSource + "/channels", header: basicAuth, status: 200},
		{method: "PATCH", path: "/api/sources/" + demo.ChatSource + "/channels/" + channel.ID, body: `{"visibility": "inherit"}`, header: withJSON(basicAuth...), status: 200},
		{method: "GET", path: "/api/sources/" + demo.ChatSource + "/optouts", header: basicAuth, status: 200},
		{method: "GET", path: "/api/settings", header: basicAuth, status: 200},
		{method: "PATCH", path: "/api/settings", body: `{"siteName": "Wren", "siteAccent": "#1A73E8"}`, header: withJSON(basicAuth...), status: 200},
		{method: "GET", path: "/site/logo", status: 404},
		{method: "PUT", path: "/api/settings/logo", body: string(testPNG(4)), header: append([]string{"Content-Type", "image/png"}, basicAuth...), status: 200},
		{method: "GET", path: "/site/logo", status: 200},
		{method: "PUT", path: "/api/settings/logo", body: testSVG, header: append([]string{"Content-Type", "image/png"}, bearer...), status: 415, badRequest: true},
		{method: "DELETE", path: "/api/settings/logo", header: bearer, status: 204},
		{method: "POST", path: "/api/sources", body: `{"name": "Notes", "type": "upload", "schedule": ""}`, header: withJSON(basicAuth...), status: 201},
		{method: "PATCH", path: "/api/sources/notes", body: `{"name": "Team notes", "visibility": "private"}`, header: withJSON(bearer...), status: 200},
		{method: "POST", path: "/api/documents", body: `{"title": "Runbook", "content": "Restart the fiber pool.", "sourceId": "notes"}`, header: withJSON(basicAuth...), status: 201},
		{method: "DELETE", path: "/api/sources/notes", header: bearer, status: 204},
		{method: "POST", path: "/api/sources/" + demo.ChatSource + "/import", body: string(export), header: withJSON(bearer...), status: 200, looseRequest: true},
		{method: "GET", path: "/api/sources/" + demo.ChatSource, header: basicAuth, status: 200}, // with its lastImport
		{method: "POST", path: "/api/sources/" + demo.ChatSource + "/test", header: basicAuth, status: 200},
		{method: "POST", path: "/api/sources/" + demo.DocsSource + "/crawl", header: basicAuth, status: 400},
		{method: "POST", path: "/api/sources/" + demo.ChatSource + "/optouts", body: `{"author": "nobody-here"}`, header: withJSON(basicAuth...), status: 201},
		{method: "DELETE", path: "/api/sources/" + demo.ChatSource + "/optouts/nobody-here", header: basicAuth, status: 204},
		{method: "POST", path: "/api/admin/backup", header: bearer, status: 200},
		{method: "GET", path: "/api/admin/insights", header: basicAuth, status: 200},
		{method: "GET", path: "/api/admin/insights?days=7&callers=public", header: bearer, status: 200},
		{method: "GET", path: "/api/admin/insights?days=1&callers=authenticated", header: bearer, status: 200},
		{method: "GET", path: "/metrics", header: basicAuth, status: 200},
		{method: "GET", path: "/openapi.json", status: 200, loose: true},
		{method: "GET", path: "/llms.txt", status: 200},
		{method: "GET", path: "/sitemap.xml", status: 200},
		{method: "GET", path: "/d/" + doc.Slug, status: 200},
		{method: "GET", path: "/c/" + channel.Slug + "?page=1", status: 200},
		{method: "POST", path: "/mcp", body: mcpInit, header: mcpHeader, status: 200, loose: true, looseRequest: true},
		{method: "POST", path: "/mcp", body: `{"jsonrpc": "2.0", "method": "notifications/initialized"}`, header: mcpHeader, status: 202},
		{method: "POST", path: "/mcp", body: `{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}`, header: mcpHeader, status: 200, loose: true, looseRequest: true},
		{method: "POST", path: "/mcp", body: `{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_document", "arguments": {"document": "` + doc.Slug + `", "length": 100}}}`, header: mcpHeader, status: 200, loose: true, looseRequest: true},
		{method: "POST", path: "/mcp", body: `{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "semantic_search", "arguments": {"q": "install", "limit": 99}}}`, header: slices.Concat(mcpHeader, bearer), status: 200, loose: true, looseRequest: true},
		{method: "GET", path: "/mcp", status: 405},
		{method: "DELETE", path: "/mcp", status: 405},
		{method: "POST", path: "/mcp", body: mcpInit, header: withJSON("Accept", "text/html"), status: 400, badRequest: true},
		{method: "POST", path: "/mcp", body: `{"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}`, header: mcpHeader, status: 400, loose: true},
		{method: "POST", path: "/mcp", body: `{"jsonrpc":`, header: mcpHeader, status: 400, badRequest: true},
		{method: "POST", path: "/mcp", body: mcpInit, header: slices.Concat(mcpHeader, []string{"Authorization", "Bearer wrong"}), status: 401, badRequest: true},
		// Errors: the shared error shape.
		{method: "GET", path: "/api/search?q=install&limit=0", status: 400, badRequest: true},
		{method: "GET", path: "/api/search?limit=5", status: 400, badRequest: true},
		{method: "GET", path: "/api/search?q=install&content=everything", status: 400, badRequest: true},
		{method: "GET", path: "/api/suggest", status: 400, badRequest: true},
		{method: "GET", path: "/api/suggest?q=a&limit=9", status: 400, badRequest: true},
		{method: "GET", path: "/api/semantic-search?q=install&max_chars=20000", status: 400, badRequest: true},
		{method: "GET", path: "/api/documents/" + doc.Slug + "?length=0", status: 400, badRequest: true},
		{method: "POST", path: "/api/ask", body: `{"question": ""}`, header: withJSON(), status: 400, badRequest: true},
		{method: "POST", path: "/api/ask", body: "How?", header: []string{"Content-Type", "text/plain"}, status: 415, badRequest: true},
		{method: "GET", path: "/api/sources", status: 401, badRequest: true},
		{method: "GET", path: "/api/admin/insights", status: 401, badRequest: true},
		{method: "GET", path: "/api/admin/insights?days=abc", header: basicAuth, status: 400, badRequest: true},
		{method: "GET", path: "/api/admin/insights?days=91", header: basicAuth, status: 400},
		{method: "GET", path: "/api/search?q=install", header: []string{"Authorization", "Bearer wrong"}, status: 401, badRequest: true},
		{method: "POST", path: "/api/v1/ask", body: ask, header: withJSON(), status: 401, badRequest: true},
		{method: "GET", path: "/api/sources/nope", header: basicAuth, status: 404},
		{method: "GET", path: "/api/documents/no-such-document", status: 404},
		{method: "GET", path: "/api/channels/no-such-channel/messages", status: 404},
		{method: "POST", path: "/api/sources", body: `{"id": "` + demo.ChatSource + `", "name": "Again", "type": "upload"}`, header: withJSON(basicAuth...), status: 409},
		// Last: the channel is gone until the next import.
		{method: "DELETE", path: "/api/sources/" + demo.ChatSource + "/channels/" + channel.ID, header: basicAuth, status: 204},
		{method: "POST", path: "/api/sources/" + demo.ChatSource + "/channels/" + channel.ID + "/restore", header: basicAuth, status: 200},
	}
	for _, c := range calls {
		c.check(t, ts, strict, loose)
	}
	checkAskStream(t, ts)
}

// checkAskStream reads a streamed answer and validates each event against
// the AskEvent schema the document gives for text/event-stream.
func checkAskStream(t *testing.T, ts *testServer) {
	t.Helper()
	c := apiCall{method: "POST", path: "/api/ask", body: `{"question": "How do I install Wren?"}`,
		header: withJSON("Accept", "text/event-stream"), status: 200}
	res, err := http.DefaultClient.Do(c.request(t, ts.url))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("streamed ask: %d %s", res.StatusCode, ct)
	}
	d := openAPIModel(t, openAPIDoc)
	m, _ := d.BuildV3Model()
	evSchema := m.Model.Components.Schemas.GetOrZero("AskEvent")
	if evSchema == nil {
		t.Fatal("no AskEvent schema")
	}
	schema := evSchema.Schema()
	media := m.Model.Paths.PathItems.GetOrZero("/api/ask").Post.Responses.Codes.GetOrZero("200").Content.GetOrZero("text/event-stream")
	if media == nil {
		t.Fatal("POST /api/ask: no text/event-stream answer described")
	}
	sv := schema_validation.NewSchemaValidator()
	var types []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if ok, errs := sv.ValidateSchemaString(schema, data); !ok {
			t.Errorf("event %s does not match AskEvent:%s", data, validationErrors(errs))
		}
		var ev struct{ Type string }
		json.Unmarshal([]byte(data), &ev)
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
	}
	if !slices.Equal(types, []string{"sources", "token", "done"}) {
		t.Errorf("events %v, want sources, token…, done", types)
	}
}

func TestOpenAPIServedWithBaseURL(t *testing.T) {
	ts := start(t)
	r := ts.get(t, "/openapi.json")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: %d %s", r.status, r.header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") || len(doc.Servers) != 1 || doc.Servers[0].URL != ts.url || len(doc.Paths) == 0 {
		t.Fatalf("openapi %q, servers %+v, %d paths; want 3.1 and %s", doc.OpenAPI, doc.Servers, len(doc.Paths), ts.url)
	}
	// Apart from servers it is the embedded document.
	if want := withServer(openAPIDoc, ts.url); !bytes.Equal(r.body, want) {
		t.Error("the served document differs from the embedded one")
	}
	openAPIModel(t, r.body)
	if h := ts.do(t, "HEAD", "/openapi.json", nil); h.status != 200 || len(h.body) != 0 {
		t.Errorf("HEAD /openapi.json: %d, %d bytes", h.status, len(h.body))
	}
	if etag := r.header.Get("ETag"); etag == "" {
		t.Error("no ETag")
	} else if again := ts.get(t, "/openapi.json", "If-None-Match", etag); again.status != 304 {
		t.Errorf("If-None-Match: %d, want 304", again.status)
	}
	llms := ts.get(t, "/llms.txt")
	for _, want := range []string{ts.url + "/openapi.json", ts.url + "/mcp"} {
		if !bytes.Contains(llms.body, []byte(want)) {
			t.Errorf("llms.txt does not mention %s", want)
		}
	}
}
