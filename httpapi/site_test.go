package httpapi

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/semantic"
)

// testPNG encodes a side×side image of noise (which does not compress: the
// file has about 4·side² bytes).
func testPNG(side int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, uint64(side)))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func testGIF(t testing.TB) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	testSVG  = `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`
	testHTML = `<!DOCTYPE html><html><body><script>alert(1)</script></body></html>`
)

var logoURL = regexp.MustCompile(`^/site/logo\?v=[0-9a-f]{16}$`)

func TestSiteAccentSettings(t *testing.T) {
	ts := start(t)
	patch := func(body string) resp {
		return ts.do(t, "PATCH", "/api/settings", strings.NewReader(body), withJSON(basicAuth...)...)
	}
	if r := patch(`{"siteAccent": "#1A73E8"}`); r.status != 200 || r.json(t)["siteAccent"] != "#1a73e8" {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/api/settings", nil, bearer...); r.json(t)["siteAccent"] != "#1a73e8" || ts.srv.siteAccent() != "#1a73e8" {
		t.Fatalf("get: %s, method %q", r.body, ts.srv.siteAccent())
	}
	for _, bad := range []string{`"red"`, `"#12345"`, `"#1234567"`, `"#12345g"`, `"1a73e8a"`, `"#1a73e8 x"`, `5`} {
		wantError(t, patch(`{"siteAccent": `+bad+`}`), 400, "siteAccent")
	}
	wantError(t, patch(`{"siteLogo": "/x.png"}`), 400, "/api/settings/logo")
	if ts.srv.siteAccent() != "#1a73e8" {
		t.Fatal("a refused change changed the accent")
	}
	if r := patch(`{"siteAccent": ""}`); r.status != 200 || r.json(t)["siteAccent"] != "" || ts.srv.siteAccent() != "" {
		t.Fatalf("reset: %d %s", r.status, r.body)
	}

	// The console: a colour input (it cannot be empty) and a checkbox
	// returning to the default.
	o := newOperator(t, ts)
	page := o.get("/dashboard")
	for _, want := range []string{`type="color" id="set-accent" name="siteAccent" value="#0645ad"`, `name="siteAccentShown" value="#0645ad"`, `name="siteAccentDefault"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the settings form lacks %s", want)
		}
	}
	o.done(o.form("/dashboard/settings", "siteName", "Wren", "siteAccent", "#0645ad", "siteAccentShown", "#0645ad"), "Settings saved")
	if a := ts.srv.siteAccent(); a != "" {
		t.Fatalf("saving the other settings set the accent shown: %q", a)
	}
	o.done(o.form("/dashboard/settings", "siteName", "Wren", "siteAccent", "#FF8800", "siteAccentShown", "#0645ad"), "Settings saved")
	if a := ts.srv.siteAccent(); a != "#ff8800" {
		t.Fatalf("accent %q, want #ff8800", a)
	}
	if page := o.get("/dashboard"); !strings.Contains(page, `name="siteAccent" value="#ff8800"`) {
		t.Fatal("the form does not show the accent set")
	}
	o.failed(o.form("/dashboard/settings", "siteAccent", "#ff880", "siteAccentShown", "#ff8800"), 400, "siteAccent")
	o.done(o.form("/dashboard/settings", "siteName", "Wren", "siteAccent", "#ff8800", "siteAccentShown", "#ff8800"), "Settings saved")
	if a := ts.srv.siteAccent(); a != "#ff8800" {
		t.Fatalf("an unchanged colour input changed the accent: %q", a)
	}
	o.done(o.form("/dashboard/settings", "siteAccent", "#ff8800", "siteAccentShown", "#ff8800", "siteAccentDefault", "1"), "Settings saved")
	if a := ts.srv.siteAccent(); a != "" {
		t.Fatalf("the checkbox did not return to the default: %q", a)
	}
}

func TestSiteLogoAPI(t *testing.T) {
	ts := start(t)
	logo := testPNG(8)
	if r := ts.get(t, "/site/logo"); r.status != 404 || ts.srv.siteLogoURL() != "" {
		t.Fatalf("no logo yet: %d, %q", r.status, ts.srv.siteLogoURL())
	}
	wantError(t, ts.do(t, "PUT", "/api/settings/logo", bytes.NewReader(logo), "Content-Type", "image/png"), 401)

	r := ts.do(t, "PUT", "/api/settings/logo", bytes.NewReader(logo), append([]string{"Content-Type", "image/png"}, basicAuth...)...)
	url, _ := r.json(t)["siteLogo"].(string)
	if r.status != 200 || !logoURL.MatchString(url) || ts.srv.siteLogoURL() != url {
		t.Fatalf("upload: %d %s; method %q", r.status, r.body, ts.srv.siteLogoURL())
	}
	got := ts.get(t, url) // anonymous: a logo is public
	if got.status != 200 || !bytes.Equal(got.body, logo) || got.header.Get("Content-Type") != "image/png" ||
		got.header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(got.header.Get("Cache-Control"), "max-age=31536000") {
		t.Fatalf("GET %s: %d %v, %d bytes", url, got.status, got.header, len(got.body))
	}
	if r := ts.get(t, "/site/logo"); r.status != 200 || strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Fatalf("unversioned: %d %s", r.status, r.header.Get("Cache-Control"))
	}
	if r := ts.get(t, url, "If-None-Match", got.header.Get("ETag")); r.status != 304 {
		t.Fatalf("revalidation: %d", r.status)
	}
	if r := ts.do(t, "HEAD", url, nil); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("HEAD: %d", r.status)
	}

	// Multipart, with a Bearer token, replaces it.
	gifLogo := testGIF(t)
	body, ct := multipartBody(t, map[string]string{"logo.gif": string(gifLogo)})
	r = ts.do(t, "PUT", "/api/settings/logo", body, append([]string{"Content-Type", ct}, bearer...)...)
	if url2, _ := r.json(t)["siteLogo"].(string); r.status != 200 || url2 == url {
		t.Fatalf("multipart upload: %d %s", r.status, r.body)
	}
	if got := ts.get(t, ts.srv.siteLogoURL()); !bytes.Equal(got.body, gifLogo) || got.header.Get("Content-Type") != "image/gif" {
		t.Fatalf("the GIF: %s, %d bytes", got.header.Get("Content-Type"), len(got.body))
	}
	if r := ts.get(t, url); r.status != 200 || !bytes.Equal(r.body, gifLogo) || strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Fatalf("an old version's address: %d %s", r.status, r.header.Get("Cache-Control"))
	}

	// Refused, the logo unchanged: what is not an image of the four
	// types, whatever the Content-Type says; over 256 KiB, announced or
	// not; an empty body.
	before := ts.srv.siteLogoURL()
	put := func(body io.Reader, header ...string) resp {
		return ts.do(t, "PUT", "/api/settings/logo", body, append(header, basicAuth...)...)
	}
	wantError(t, put(strings.NewReader(testSVG), "Content-Type", "image/svg+xml"), 415, "PNG")
	wantError(t, put(strings.NewReader(testHTML), "Content-Type", "image/png"), 415, "text/html")
	svgPart, svgCT := multipartBody(t, map[string]string{"logo.svg": testSVG})
	wantError(t, put(svgPart, "Content-Type", svgCT), 415)
	big := testPNG(280) // over 300 KiB
	if len(big) < 300<<10 {
		t.Fatalf("the big PNG has %d bytes", len(big))
	}
	wantError(t, put(bytes.NewReader(big), "Content-Type", "image/png"), 413)
	// Chunked: read up to the bound.
	wantError(t, put(io.MultiReader(bytes.NewReader(big)), "Content-Type", "image/png"), 413)
	over := testPNG(260) // over 256 KiB, within the body's bound
	if len(over) <= maxLogoBytes || len(over) > maxLogoBody {
		t.Fatalf("the PNG over the limit has %d bytes", len(over))
	}
	wantError(t, put(bytes.NewReader(over), "Content-Type", "image/png"), 413, "256 KiB")
	wantError(t, put(nil), 400, "empty")
	if ts.srv.siteLogoURL() != before {
		t.Fatal("a refused upload changed the logo")
	}
	for _, sig := range []string{"\xff\xd8\xff\xe0", "RIFF\x00\x00\x00\x00WEBPVP8 "} { // JPEG, WebP
		if _, err := checkLogo([]byte(sig + strings.Repeat("\x00", 64))); err != nil {
			t.Errorf("%q: %v", sig, err)
		}
	}

	wantError(t, ts.do(t, "DELETE", "/api/settings/logo", nil), 401)
	if r := ts.do(t, "DELETE", "/api/settings/logo", nil, bearer...); r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if r := ts.get(t, "/site/logo"); r.status != 404 || ts.srv.siteLogoURL() != "" {
		t.Fatalf("after DELETE: %d, %q", r.status, ts.srv.siteLogoURL())
	}
}

func TestSiteLogoConsole(t *testing.T) {
	ts := start(t)
	o := newOperator(t, ts)
	logo := testPNG(8)
	page := o.done(o.upload("/dashboard/settings/logo", map[string]string{"logo.png": string(logo)}), "Logo saved")
	url := ts.srv.siteLogoURL()
	if !logoURL.MatchString(url) || !strings.Contains(page, `<img src="`+url+`"`) {
		t.Fatalf("the dashboard does not show the logo %q", url)
	}
	if got := ts.get(t, url); !bytes.Equal(got.body, logo) || got.header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET %s: %s, %d bytes", url, got.header.Get("Content-Type"), len(got.body))
	}

	o.failed(o.upload("/dashboard/settings/logo", map[string]string{"logo.svg": testSVG}), 415, "no SVG")
	o.failed(o.upload("/dashboard/settings/logo", map[string]string{"logo.png": testHTML}), 415, "text/html")
	o.failed(o.upload("/dashboard/settings/logo", map[string]string{"logo.png": string(testPNG(280))}), 413, "Refused")
	o.failed(o.upload("/dashboard/settings/logo", map[string]string{"logo.png": string(testPNG(260))}), 413, "256 KiB")
	o.failed(o.form("/dashboard/settings/logo"), 415, "multipart")
	body, ct := multipartBody(t, map[string]string{"logo.png": string(testPNG(9))}, "csrf", o.token)
	if r := o.request("POST", "/dashboard/settings/logo", body, "Content-Type", ct, "Sec-Fetch-Site", "cross-site"); r.status != 403 {
		t.Fatalf("cross-site: %d", r.status)
	}
	if ts.srv.siteLogoURL() != url {
		t.Fatal("a refused upload changed the logo")
	}

	page = o.done(o.form("/dashboard/settings/logo/delete"), "Logo removed")
	if ts.srv.siteLogoURL() != "" || strings.Contains(page, "/site/logo") {
		t.Fatal("the logo is still there")
	}
}

// TestSiteLogoRestart: with a data dir the logo outlives the server; a
// file that does not match the setting's version is not served, and
// without a data dir nothing is kept.
func TestSiteLogoRestart(t *testing.T) {
	dir := t.TempDir()
	serveOn := func(dataDir string) *testServer {
		eng, idx, err := semantic.Open(engine.Options{DataDir: dir, NoSync: true}.OpenWith, semantic.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return serve(t, eng, idx, Options{AdminUser: testUser, AdminPassword: testPass, DataDir: dataDir})
	}
	stop := func(ts *testServer) {
		ts.srv.Shutdown(context.Background())
		ts.eng.Close()
	}
	ts := serveOn(dir)
	logo := testPNG(16)
	if r := ts.do(t, "PUT", "/api/settings/logo", bytes.NewReader(logo), basicAuth...); r.status != 200 {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	url := ts.srv.siteLogoURL()
	stop(ts)
	if b, err := os.ReadFile(filepath.Join(dir, logoFile)); err != nil || !bytes.Equal(b, logo) {
		t.Fatalf("the file: %v", err)
	}

	ts = serveOn(dir)
	if got := ts.get(t, "/site/logo"); got.status != 200 || !bytes.Equal(got.body, logo) || got.header.Get("Content-Type") != "image/png" {
		t.Fatalf("after a restart: %d, %d bytes", got.status, len(got.body))
	}
	if ts.srv.siteLogoURL() != url {
		t.Fatalf("address %q, was %q", ts.srv.siteLogoURL(), url)
	}
	stop(ts)

	if err := os.WriteFile(filepath.Join(dir, logoFile), testGIF(t), 0o600); err != nil {
		t.Fatal(err)
	}
	ts = serveOn(dir)
	if r := ts.get(t, "/site/logo"); r.status != 404 || ts.srv.siteLogoURL() != "" {
		t.Fatalf("a file not of the setting's version: %d, %q", r.status, ts.srv.siteLogoURL())
	}
	stop(ts)

	ts = serveOn("") // memory only: the setting is kept, the bytes are not
	if r := ts.get(t, "/site/logo"); r.status != 404 || ts.srv.siteLogoURL() != "" {
		t.Fatalf("without a data dir: %d, %q", r.status, ts.srv.siteLogoURL())
	}
	if r := ts.do(t, "PUT", "/api/settings/logo", bytes.NewReader(logo), basicAuth...); r.status != 200 || ts.srv.siteLogoURL() != url {
		t.Fatalf("upload in memory: %d %s", r.status, r.body)
	}
}

var (
	accentForm  = regexp.MustCompile(`^#[0-9a-f]{6}$`)
	logoSetting = regexp.MustCompile(`^image/(png|jpeg|gif|webp);[0-9a-f]{16}$`)
)

func FuzzParseAccent(f *testing.F) {
	for _, s := range []string{"#1a73e8", "#1A73E8", "", "#", "red", "#12345g", "#ＡＢＣ", "#1a73e8\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := parseAccent(s)
		if !ok {
			if c != "" {
				t.Fatalf("%q: refused with %q", s, c)
			}
			return
		}
		if !accentForm.MatchString(c) || !strings.EqualFold(c, s) {
			t.Fatalf("%q: %q", s, c)
		}
		if again, ok := parseAccent(c); !ok || again != c {
			t.Fatalf("%q: not stable: %q", c, again)
		}
	})
}

func FuzzParseLogoSetting(f *testing.F) {
	for _, s := range []string{"image/png;0123456789abcdef", "image/svg+xml;0123456789abcdef", "image/png;0123456789ABCDEF", "image/png", ";", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ct, version, ok := parseLogoSetting(s)
		if ok != logoSetting.MatchString(s) {
			t.Fatalf("%q: ok %v", s, ok)
		}
		if ok && ct+";"+version != s {
			t.Fatalf("%q: %q, %q", s, ct, version)
		}
	})
}
