package httpapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium to drive: $CHROMIUM, else Debian's.
func chromium() string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p != "" {
			if _, err := exec.LookPath(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// screens are the sizes the pages are tried at: a desktop's and a phone's.
var screens = []struct {
	name          string
	width, height int64
}{{"desktop", 1280, 900}, {"phone", 390, 844}}

// screenshotDir is where the browser test leaves a picture of each page:
// test-output/screenshots at the module's root.
func screenshotDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "test-output", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts headless Chromium for a test and returns its context,
// which ends with the test or after two minutes. Without Chromium the test
// is skipped, or fails when SIFT_REQUIRE_BROWSER is set.
func browser(t *testing.T) context.Context {
	path := chromium()
	if path == "" {
		msg := "BROWSER TESTS SKIPPED: no Chromium found (apt-get install -y chromium, or set CHROMIUM); .ci/run installs it"
		if os.Getenv("SIFT_REQUIRE_BROWSER") != "" {
			t.Fatal(msg + ", and SIFT_REQUIRE_BROWSER is set")
		}
		fmt.Fprintln(os.Stderr, "\n*** "+msg+" ***")
		t.Skip(msg)
	}
	profile, err := os.MkdirTemp("", "sift-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) }) // after the browser is gone (cleanups run last-registered first)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// screenshot saves the whole page as dir/name.png.
func screenshot(dir, name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var png []byte
		if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}

// TestBrowser drives headless Chromium through the pages as a person
// would: search from the home page, open a message in its channel, ask a
// question and watch the answer stream in, and open the dashboard, which
// needs Basic Auth.
func TestBrowser(t *testing.T) {
	if chromium() == "" {
		browser(t) // skips, or fails when a browser is required
	}
	ts := startAsk(t, nil) // the demo content, the extractive answerer
	ctx := browser(t)
	shots := screenshotDir(t)

	// The status of each page the browser loads.
	var mu sync.Mutex
	status := map[string]int64{}
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventResponseReceived); ok && e.Type == network.ResourceTypeDocument {
			mu.Lock()
			status[e.Response.URL] = e.Response.Status
			mu.Unlock()
		}
	})
	statusOf := func(u string) int64 {
		mu.Lock()
		defer mu.Unlock()
		return status[u]
	}
	shot := func(name string) chromedp.Action { return screenshot(shots, name) }

	// Home → search → a message result → its conversation, at the message.
	var resultHref, where string
	err := chromedp.Run(ctx,
		network.Enable(),
		chromedp.Navigate(ts.url+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		shot("home"),
		chromedp.SendKeys("#q", "webhook signature nginx", chromedp.ByID),
		chromedp.Submit("#q", chromedp.ByID),
		chromedp.WaitVisible("a.result", chromedp.ByQuery),
		shot("search"),
		chromedp.AttributeValue("a.result", "href", &resultHref, nil, chromedp.ByQuery),
		chromedp.Click("a.result", chromedp.ByQuery),
		chromedp.WaitVisible(".msg:target", chromedp.ByQuery),
		chromedp.Evaluate(`(() => {
			const el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
			if (!el) return "missing " + location.hash;
			const r = el.getBoundingClientRect();
			return r.top >= 0 && r.top < innerHeight ? "visible" : "off screen at " + r.top;
		})()`, &where),
		shot("channel"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resultHref, "#m-") || where != "visible" {
		t.Fatalf("the result %s opened its conversation with the message %s", resultHref, where)
	}

	// The API's link form, /c/slug#m-id, finds the message's page too.
	var id string
	if err := chromedp.Run(ctx, chromedp.AttributeValue(".msg:target", "id", &id, nil, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	slug, _, _ := strings.Cut(strings.TrimPrefix(resultHref, "/t/"), ".")
	err = chromedp.Run(ctx,
		chromedp.Navigate(ts.url+"/c/"+slug+"#"+id),
		chromedp.WaitVisible("#"+id+":target", chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("/c/%s#%s: %v", slug, id, err)
	}

	// The ask box streams an answer with citations.
	var answer string
	var cited int
	err = chromedp.Run(ctx,
		chromedp.Navigate(ts.url+"/"),
		chromedp.WaitVisible("#question", chromedp.ByID),
		chromedp.SendKeys("#question", "Why did my job run twice after the DST change?", chromedp.ByID),
		chromedp.Click("#ask-form button", chromedp.ByQuery),
		chromedp.WaitVisible(`#answer[data-done="true"]`, chromedp.ByQuery),
		chromedp.Text("#answer", &answer, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#answer a").length + document.querySelectorAll("#answer-sources li").length`, &cited),
		shot("ask"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "[1]") || cited < 2 {
		t.Fatalf("answer %q with %d links and sources", answer, cited)
	}

	// A document, the sources, a phone-sized channel page.
	var docTitle string
	err = chromedp.Run(ctx,
		chromedp.Navigate(ts.url+"/d/cron-syntax"),
		chromedp.Text("h1", &docTitle, chromedp.ByQuery),
		shot("document"),
		chromedp.Navigate(ts.url+"/sources"),
		chromedp.WaitVisible("h1", chromedp.ByQuery),
		shot("sources"),
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(ts.url+"/c/"+slug),
		chromedp.WaitVisible(".msg", chromedp.ByQuery),
		shot("channel-phone"),
		chromedp.EmulateViewport(1280, 900),
	)
	if err != nil || docTitle != "Cron Syntax" {
		t.Fatalf("document page %q: %v", docTitle, err)
	}

	// The dashboard: refused without credentials (Chromium, headless,
	// cannot show the login prompt, so the page fails to load), shown with
	// Basic Auth.
	var refused int
	err = chromedp.Run(ctx, chromedp.Navigate(ts.url+"/dashboard"))
	if err == nil || !strings.Contains(err.Error(), "AUTH") {
		t.Fatalf("dashboard without credentials loaded: %v", err)
	}
	err = chromedp.Run(ctx,
		chromedp.Navigate(ts.url+"/"),
		chromedp.Evaluate(`fetch("/dashboard", {credentials: "omit"}).then(r => r.status)`, &refused, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	if err != nil || refused != 401 {
		t.Fatalf("dashboard without credentials: %d %v", refused, err)
	}
	var heading string
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+":"+testPass))
	err = chromedp.Run(ctx,
		network.SetExtraHTTPHeaders(network.Headers{"Authorization": auth}),
		chromedp.Navigate(ts.url+"/dashboard"),
		chromedp.Text("h1", &heading, chromedp.ByQuery),
		shot("dashboard"),
	)
	if err != nil || heading != "Dashboard" || statusOf(ts.url+"/dashboard") != 200 {
		t.Fatalf("dashboard with Basic Auth: %q %d %v", heading, statusOf(ts.url+"/dashboard"), err)
	}
	t.Logf("screenshots in %s", shots)
}
