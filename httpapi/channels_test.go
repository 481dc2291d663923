package httpapi

import (
	"strings"
	"testing"

	"github.com/sift-search/sift/record"
	"github.com/valyala/fasthttp"
)

// FuzzAdminBodies sends any body to the channel, opt-out and settings
// endpoints: never a 5xx, and the settings in effect stay valid.
func FuzzAdminBodies(f *testing.F) {
	ts := start(f)
	eng := ts.eng
	if _, err := eng.PutSource(record.Source{ID: "s", Name: "S", Type: "slack", Enabled: true}); err != nil {
		f.Fatal(err)
	}
	if _, err := eng.PutChannels([]record.Channel{{SourceID: "s", ID: "c", Name: "general"}}); err != nil {
		f.Fatal(err)
	}
	h := ts.srv.Handler()
	for _, seed := range []string{`{"visibility":"public"}`, `{"visibility":"inherit"}`, `{"author":"ana"}`,
		`{"siteName":"Acme","siteDescription":"x"}`, `{"siteName":""}`, `{"visibility":1}`, `[]`, `{"author":"\u0000"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, target := range []string{"PATCH /api/sources/s/channels/c", "POST /api/sources/s/optouts", "PATCH /api/settings",
			"PATCH /api/sources/nope/channels/c", "POST /api/sources/s/channels/c/restore"} {
			method, path, _ := strings.Cut(target, " ")
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod(method)
			ctx.Request.SetRequestURI(path)
			ctx.Request.Header.SetContentType("application/json")
			ctx.Request.Header.Set("Authorization", "Bearer "+testKey)
			ctx.Request.SetBodyString(body)
			h(&ctx)
			if st := ctx.Response.StatusCode(); st >= 500 {
				t.Fatalf("%s %q: status %d: %s", target, body, st, ctx.Response.Body())
			}
		}
		if n := ts.srv.siteName(); n == "" || strings.ContainsRune(n, 0) {
			t.Fatalf("site name %q", n)
		}
	})
}
