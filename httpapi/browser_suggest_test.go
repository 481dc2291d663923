package httpapi

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// suggestState is what the search box and its list show.
const suggestState = `(() => {
	const q = document.getElementById("q"), list = document.getElementById("q-suggestions");
	return {expanded: q.getAttribute("aria-expanded"), role: q.getAttribute("role"), activeId: q.getAttribute("aria-activedescendant") || "",
		hidden: list.hidden, options: Array.from(list.querySelectorAll("[role=option]"), li => li.textContent),
		selected: Array.from(list.querySelectorAll("[aria-selected=true]"), li => li.id),
		value: q.value, focused: document.activeElement === q, stayed: window.stayed === 1,
		path: location.pathname, search: location.search, results: !!document.querySelector("#search-results section")};
})()`

type suggestView struct {
	Expanded, Role, ActiveID, Value, Path, Search string
	Hidden, Focused, Stayed, Results              bool
	Options, Selected                             []string
}

// TestBrowserSuggest: on the demo content, typing into the search box
// lists suggestions under it, the results come in place when typing
// pauses (no page load, the box keeps the focus), the arrow keys move
// through the list, Escape closes it, Enter on a document opens its page
// and Enter on a word searches for it.
func TestBrowserSuggest(t *testing.T) {
	if chromium() == "" {
		browser(t) // skips, or fails when a browser is required
	}
	ts := serve(t, demoEngine(t), nil, Options{})
	ctx := browser(t)
	var v suggestView
	state := func() chromedp.Action { return chromedp.Evaluate(suggestState, &v) }
	waitFor := func(what string, ok func() bool) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if err := chromedp.Evaluate(suggestState, &v).Do(ctx); err != nil {
					return err
				}
				if ok() {
					return nil
				}
				if time.Now().After(deadline) {
					t.Fatalf("waiting for %s: %+v", what, v)
				}
			}
		})
	}
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
				return err
			}
			os.WriteFile(filepath.Join(screenshotDir(t), name+".png"), png, 0o644)
			return os.WriteFile("/tmp/"+name+".png", png, 0o644)
		})
	}
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.url+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.Evaluate(`window.stayed = 1`, nil),
		chromedp.Click("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "webh", chromedp.ByID),
		waitFor("the list", func() bool { return !v.Hidden && len(v.Options) > 1 }),
		chromedp.Sleep(700), // past the pause: a fragment of a word is not searched
		state(),
	)
	if err != nil {
		t.Fatal(err)
	}
	if v.Results || v.Search != "" {
		t.Fatalf("a fragment of a word was searched: %+v", v)
	}
	err = chromedp.Run(ctx,
		chromedp.SendKeys("#q", "ook", chromedp.ByID),
		waitFor("the list", func() bool { return !v.Hidden && len(v.Options) > 1 }),
		waitFor("the results in place", func() bool { return v.Results }),
	)
	if err != nil {
		t.Fatal(err)
	}
	if v.Role != "combobox" || v.Expanded != "true" || !v.Focused || !v.Stayed || v.Path != "/" || v.Search != "?q=webhook&source=" {
		t.Fatalf("after typing: %+v", v)
	}
	for _, o := range v.Options {
		if !strings.HasPrefix(strings.ToLower(o), "webh") && !strings.Contains(strings.ToLower(o), "webh") {
			t.Errorf("suggestion %q does not complete webh", o)
		}
	}
	doc := -1
	for i, o := range v.Options {
		if strings.Contains(o, "Document") {
			doc = i
			break
		}
	}
	if doc < 0 {
		t.Fatalf("no document among %q", v.Options)
	}
	err = chromedp.Run(ctx,
		chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), state(),
	)
	if err != nil || v.ActiveID != "q-opt-1" || len(v.Selected) != 1 || v.Selected[0] != "q-opt-1" {
		t.Fatalf("two arrows down: %+v %v", v, err)
	}
	if err := chromedp.Run(ctx, shot("suggest")); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Run(ctx, chromedp.KeyEvent(kb.ArrowUp), chromedp.KeyEvent(kb.ArrowUp), state())
	if err != nil || v.ActiveID != "q-opt-"+strconv.Itoa(len(v.Options)-1) {
		t.Fatalf("arrows up wrap to the last: %+v %v", v, err)
	}
	err = chromedp.Run(ctx, chromedp.KeyEvent(kb.Escape), state())
	if err != nil || !v.Hidden || v.Expanded != "false" || v.ActiveID != "" || v.Value != "webhook" {
		t.Fatalf("Escape: %+v %v", v, err)
	}
	// Down opens the list again; Enter on the document opens its page.
	var keys []chromedp.Action
	keys = append(keys, chromedp.KeyEvent(kb.ArrowDown))
	for range doc + 1 {
		keys = append(keys, chromedp.KeyEvent(kb.ArrowDown))
	}
	keys = append(keys, state())
	if err := chromedp.Run(ctx, keys...); err != nil || v.Hidden || v.ActiveID != "q-opt-"+strconv.Itoa(doc) {
		t.Fatalf("down to the document: %+v %v", v, err)
	}
	var path string
	err = chromedp.Run(ctx, pressEnter(), chromedp.WaitVisible("#doc-h", chromedp.ByID), chromedp.Evaluate(`location.pathname`, &path))
	if err != nil || !strings.HasPrefix(path, "/d/") {
		t.Fatalf("Enter on a document: at %s, %v", path, err)
	}
	// A word: Enter searches for the completed query.
	err = chromedp.Run(ctx,
		chromedp.Navigate(ts.url+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.Click("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "how to conf", chromedp.ByID),
		waitFor("word suggestions", func() bool { return !v.Hidden && len(v.Options) > 0 && strings.HasPrefix(v.Options[0], "how to conf") }),
		chromedp.KeyEvent(kb.ArrowDown),
		pressEnter(),
		chromedp.WaitVisible("#results-h", chromedp.ByID),
		state(),
	)
	if err != nil || !strings.HasPrefix(v.Value, "how to conf") || v.Value == "how to conf" || !strings.Contains(v.Search, "q=how+to+conf") {
		t.Fatalf("Enter on a word: %+v %v", v, err)
	}
	// On a phone the list stays within the screen.
	var fits bool
	err = chromedp.Run(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(ts.url+"/"),
		chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.Click("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "sched", chromedp.ByID),
		waitFor("suggestions on a phone", func() bool { return !v.Hidden && len(v.Options) > 0 }),
		chromedp.Evaluate(`(() => { const r = document.getElementById("q-suggestions").getBoundingClientRect();
			return r.left >= 0 && r.right <= innerWidth && document.documentElement.scrollWidth <= innerWidth; })()`, &fits),
		shot("suggest-mobile"),
		chromedp.KeyEvent(kb.Escape),
		shot("suggest-mobile-closed"),
	)
	if err != nil || !fits {
		t.Fatalf("on a phone: fits %v, %v", fits, err)
	}
}

// pressEnter presses Enter where a page navigates away on it: the key
// goes down only, as chromedp.KeyEvent's key up may wait on a renderer
// that is being replaced.
func pressEnter() chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		return input.DispatchKeyEvent(input.KeyDown).WithKey("Enter").WithCode("Enter").
			WithWindowsVirtualKeyCode(13).WithNativeVirtualKeyCode(13).WithText("\r").Do(ctx)
	})
}
