package httpapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserConsole drives the dashboard's console in headless Chromium
// as an operator would, with plain form submissions: add and crawl a web
// source, upload a document, add a Discord source and import an export
// into it, make its channel private, opt an author out, rename the site.
// Chromium sends its own Sec-Fetch-Site and Origin headers, so the
// console's cross-site check sees a real browser's same-origin posts.
func TestBrowserConsole(t *testing.T) {
	ctx := browser(t)
	ts := start(t)
	web := site(t)
	shots := screenshotDir(t)
	shot := func(name string) chromedp.Action { return screenshot(shots, name) }
	doc := filepath.Join(t.TempDir(), "release-notes.md")
	if err := os.WriteFile(doc, []byte("# Release notes\n\nVersion 2 adds **time zones** to schedules."), 0o644); err != nil {
		t.Fatal(err)
	}
	export, err := filepath.Abs("../internal/demo/discord-export.json")
	if err != nil {
		t.Fatal(err)
	}

	// outcome waits for the page a form led to, until its flash says want
	// (asking again while the browser navigates).
	outcome := func(want string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var got string
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				err := chromedp.Evaluate(`(document.querySelector(".flash") || {textContent: ""}).textContent`, &got).Do(ctx)
				if err == nil && strings.Contains(got, want) {
					return nil
				}
			}
			return fmt.Errorf("waiting for %q; the page says %q", want, strings.TrimSpace(got))
		})
	}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testPass))
	err = chromedp.Run(ctx,
		network.Enable(),
		network.SetExtraHTTPHeaders(network.Headers{"Authorization": auth}),
		chromedp.Navigate(ts.url+"/dashboard"),
		chromedp.WaitVisible("h1", chromedp.ByQuery),
		shot("console-dashboard-empty"),

		// A web source, crawled from a local site.
		chromedp.Click(`a[href="/dashboard/add-source?type=web"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "Wren handbook", chromedp.ByID),
		chromedp.SendKeys("#cfg-urls", web.URL+"/", chromedp.ByID),
		chromedp.Click("#cfg-allowPrivate", chromedp.ByID),
		chromedp.SetValue("#cfg-delayMs", "0", chromedp.ByID),
		shot("console-add-web"),
		chromedp.Click(`form.stack button[type=submit]`, chromedp.ByQuery),
		outcome(`Source "Wren handbook" added`),
		chromedp.Click(`form[action$="/crawl"]:not(:has(input[name=full])) button`, chromedp.ByQuery),
		outcome("Crawl finished: 0 channels, 0 messages, 2 documents touched"),
		shot("console-source-crawled"),

		// A document upload from the dashboard.
		chromedp.Navigate(ts.url+"/dashboard"),
		chromedp.SetUploadFiles("#up-file", []string{doc}, chromedp.ByID),
		chromedp.Click(`form[action="/dashboard/documents"] button`, chromedp.ByQuery),
		outcome("Stored 1 document:"),
		shot("console-uploaded"),

		// A Discord source that takes an export.
		chromedp.Navigate(ts.url+"/dashboard/add-source?type=discord"),
		chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "Wren Discord", chromedp.ByID),
		chromedp.SendKeys("#cfg-guildId", "1102345678901234567", chromedp.ByID),
		chromedp.Click(`form.stack button[type=submit]`, chromedp.ByQuery),
		outcome(`Source "Wren Discord" added`),
		chromedp.SetUploadFiles("#import-file", []string{export}, chromedp.ByID),
		chromedp.Click(`form[action$="/import"] button`, chromedp.ByQuery),
		outcome("Imported a discord export: 1 channel"),
		shot("console-imported"),

		// Its channel made private.
		chromedp.Click(`a[href="/dashboard/sources/wren-discord/channels"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#vis-1", chromedp.ByID),
		chromedp.SetValue("#vis-1", "private", chromedp.ByID),
		chromedp.Click(`form[action$="/channels/visibility"] button`, chromedp.ByQuery),
		outcome(`Channel "help" is set to private`),
		shot("console-channels"),

		// An author opted out.
		chromedp.Navigate(ts.url+"/dashboard/sources/wren-discord"),
		chromedp.SendKeys("#optout-author", "marta.vos", chromedp.ByID),
		chromedp.Click(`form[action$="/optouts"] button`, chromedp.ByQuery),
		outcome("marta.vos opted out"),
		shot("console-optout"),

		// The site renamed.
		chromedp.Navigate(ts.url+"/dashboard"),
		chromedp.SendKeys("#set-name", "Wren Answers", chromedp.ByID),
		chromedp.Click(`form[action="/dashboard/settings"] button`, chromedp.ByQuery),
		outcome(`The site is now called "Wren Answers"`),
		shot("console-dashboard"),
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(ts.url+"/dashboard/sources/wren-discord"),
		chromedp.WaitVisible("h1", chromedp.ByQuery),
		shot("console-source-phone"),
		chromedp.EmulateViewport(1280, 900),
	)
	if err != nil {
		t.Fatal(err)
	}

	chans, _, _ := ts.eng.SourceChannels("wren-discord")
	src, _ := ts.eng.Source("wren-discord")
	if len(chans) != 1 || !chans[0].Hidden || len(src.OptOuts) != 1 || ts.eng.SourceStats("wren-handbook", true).Documents != 2 {
		t.Fatalf("after the console: channels %+v, opt-outs %v", chans, src.OptOuts)
	}

	// The public home page carries the new name, seen without credentials.
	var brand string
	err = chromedp.Run(ctx,
		network.SetExtraHTTPHeaders(network.Headers{}),
		chromedp.Navigate(ts.url+"/"),
		chromedp.Text(".brand", &brand, chromedp.ByQuery),
		shot("console-home-renamed"),
	)
	if err != nil || brand != "Wren Answers" {
		t.Fatalf("home page brand %q: %v", brand, err)
	}
	t.Logf("screenshots in %s", shots)
}
