package httpapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sift-search/sift/internal/demo"
)

// firstScreen measures the search page as loaded: where the first message
// and the first document hit start, the viewport's height, and whether the
// page is wider than the viewport.
const firstScreen = `(() => {
	const top = sel => { const el = document.querySelector(sel); return el ? el.getBoundingClientRect().top : -1; };
	return {msg: top(".hit-msg"), doc: top(".hit-doc"), height: innerHeight,
		overflow: document.documentElement.scrollWidth > innerWidth};
})()`

type screenFit struct {
	Msg, Doc, Height float64
	Overflow         bool
}

// TestBrowserSearchPage: on the demo content, a search shows its first
// message and its first document on the first screen, on a desktop and on
// a phone, and a search that finds nothing says what to change.
func TestBrowserSearchPage(t *testing.T) {
	if chromium() == "" {
		browser(t) // skips, or fails when a browser is required
	}
	eng := demoEngine(t)
	ts := serve(t, eng, nil, Options{})
	ctx := browser(t)
	shots := screenshotDir(t)
	for _, size := range screens {
		var fit screenFit
		err := chromedp.Run(ctx,
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(ts.url+"/?q=retry+backoff"),
			chromedp.WaitVisible(".hit-doc", chromedp.ByQuery),
			chromedp.Evaluate(firstScreen, &fit),
			viewportShot(shots, "search-fit-"+size.name),
		)
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		if fit.Msg < 0 || fit.Doc < 0 || fit.Msg >= fit.Height || fit.Doc >= fit.Height || fit.Overflow {
			t.Errorf("%s: first message at %v, first document at %v, viewport %v high, wider than the viewport: %v",
				size.name, fit.Msg, fit.Doc, fit.Height, fit.Overflow)
		}
	}
	var suggestions int
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.url+`/?q=%22retry+zeppelin%22+-backoff&source=`+demo.DocsSource),
		chromedp.WaitVisible(".no-results", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll(".suggestions a").length`, &suggestions),
		viewportShot(shots, "search-empty-mobile"),
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.url+"/?q=retry&source="+demo.ChatSource+"&after=2026-03-01"),
		chromedp.WaitVisible(".filter", chromedp.ByQuery),
		viewportShot(shots, "search-filtered"),
	)
	if err != nil || suggestions < 3 {
		t.Fatalf("empty search: %d suggestions, %v", suggestions, err)
	}
}

// viewportShot saves what the viewport shows, the first screen, as
// dir/name.png.
func viewportShot(dir, name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var png []byte
		if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}
