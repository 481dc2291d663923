package httpapi

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserChatFormatting opens a channel of formatted chat in headless
// Chromium at desktop width, saves channel-formatted.png (and -phone.png
// at 390 px), and checks what
// the page shows: emphasis, quotes and code rendered, and each run of an
// author's messages under one visible author line.
func TestBrowserChatFormatting(t *testing.T) {
	if chromium() == "" {
		browser(t) // skips, or fails when a browser is required
	}
	ts := chatSite(t)
	ctx := browser(t)
	var seen struct {
		Strong, Quote, Pre, Spoiler string
		Authors                     []string
		Messages, Stamps, Anchors   int
		StampRight                  bool
	}
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.url+"/c/showcase"),
		chromedp.WaitVisible(".msg", chromedp.ByQuery),
		screenshot(screenshotDir(t), "channel-formatted"),
		chromedp.Evaluate(`(() => {
			const text = sel => { const e = document.querySelector(sel); return e ? e.innerText : ""; };
			const shown = e => e.getBoundingClientRect().width > 1;
			const cont = document.querySelector(".msg.cont"), stamp = cont.querySelector(".stamp"), body = cont.querySelector(".body");
			return {
				strong: text(".msg .body strong"), quote: text(".msg .body blockquote"), pre: text(".msg .body pre"),
				spoiler: getComputedStyle(document.querySelector(".spoiler")).color,
				authors: [...document.querySelectorAll(".msg .meta .who")].filter(shown).map(e => e.innerText),
				messages: document.querySelectorAll(".msg").length,
				stamps: [...document.querySelectorAll(".msg.cont .stamp time")].filter(shown).length,
				anchors: [...document.querySelectorAll(".msg")].filter(li => li.querySelector('a[href="#' + li.id + '"]')).length,
				stampRight: stamp.getBoundingClientRect().left > body.getBoundingClientRect().right - 1,
			};
		})()`, &seen),
	)
	if err != nil {
		t.Fatal(err)
	}
	// And on a phone.
	err = chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(ts.url+"/c/showcase"),
		chromedp.WaitVisible(".msg", chromedp.ByQuery),
		screenshot(screenshotDir(t), "channel-formatted-phone"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Strong != "Wren 2.1" || seen.Quote != "is sqlite ok for prod?" || seen.Pre != "wren config convert jobs.yaml > wren.yaml" {
		t.Errorf("rendered %q, %q, %q", seen.Strong, seen.Quote, seen.Pre)
	}
	if seen.Spoiler != "rgba(0, 0, 0, 0)" {
		t.Errorf("the spoiler's text is %s, not hidden", seen.Spoiler)
	}
	if want := "Ana,Dee (Wren team),Dee (Wren team),Dee (Wren team)"; strings.Join(seen.Authors, ",") != want {
		t.Errorf("author lines %q, want %s", seen.Authors, want)
	}
	if seen.Messages != 7 || seen.Stamps != 3 || seen.Anchors != 7 || !seen.StampRight {
		t.Errorf("%d messages, %d grouped with their time beside (right: %v), %d with a permalink", seen.Messages, seen.Stamps, seen.StampRight, seen.Anchors)
	}
}
