package httpapi

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sift-search/sift/internal/mdtext"
)

// frontPage reads the home page as the browser shows it: the site's
// identity and the recent conversations.
const frontPage = `(() => ({
	site: document.querySelector(".hero h1").textContent.trim(),
	lead: (document.querySelector(".hero .lead") || {textContent: ""}).textContent.trim(),
	convos: Array.from(document.querySelectorAll(".convos .convo-title")).map(a => a.getAttribute("href")),
	overflow: document.documentElement.scrollWidth > innerWidth,
}))()`

// conversationLD reads a conversation page's title and what its JSON-LD
// names it.
const conversationLD = `(() => {
	const ld = JSON.parse(document.querySelector('script[type="application/ld+json"]').textContent);
	return {h1: document.querySelector("h1").textContent.trim(), type: ld["@type"],
		name: ld["@type"] === "QAPage" ? ld.mainEntity.name : ld.headline,
		messages: document.querySelectorAll(".messages .msg").length,
		overflow: document.documentElement.scrollWidth > innerWidth};
})()`

type frontView struct {
	Site, Lead string
	Convos     []string
	Overflow   bool
}

type conversationView struct {
	H1, Type, Name string
	Messages       int
	Overflow       bool
}

// TestBrowserPublicPages: on the demo content, at a desktop's and a phone's
// size, the home page shows the site's identity and at least five recent
// conversations whose links answer; a conversation's page is named by its
// JSON-LD as by its title; the search and channel pages fit the screen.
// Each page is photographed (docs/screenshots with SIFT_DOCS_SCREENSHOTS=1).
func TestBrowserPublicPages(t *testing.T) {
	if chromium() == "" {
		browser(t) // skips, or fails when a browser is required
	}
	ts := startAsk(t, nil)
	ctx := browser(t)
	shots := screenshotDir(t)
	docs := os.Getenv("SIFT_DOCS_SCREENSHOTS") != ""
	shot := func(name string) chromedp.Action {
		if docs {
			return chromedp.Tasks{viewportShot(shots, name), viewportShot(filepath.Join("..", "docs", "screenshots"), name)}
		}
		return viewportShot(shots, name)
	}
	for _, size := range screens {
		var front frontView
		err := chromedp.Run(ctx,
			chromedp.EmulateViewport(size.width, size.height),
			chromedp.Navigate(ts.url+"/"),
			chromedp.WaitVisible(".convos", chromedp.ByQuery),
			chromedp.Evaluate(frontPage, &front),
			shot("home-"+size.name),
		)
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		if front.Site != "Wren Community" || front.Lead == "" || len(front.Convos) < 5 || front.Overflow {
			t.Fatalf("%s: home %+v", size.name, front)
		}
		for _, href := range front.Convos {
			if r := htmlGet(t, ts, href); r.status != 200 {
				t.Errorf("%s: %s answers %d", size.name, href, r.status)
			}
		}
		var conv conversationView
		err = chromedp.Run(ctx,
			chromedp.Navigate(ts.url+front.Convos[1]),
			chromedp.WaitVisible(".messages", chromedp.ByQuery),
			chromedp.Evaluate(conversationLD, &conv),
			shot("conversation-"+size.name),
		)
		if err != nil {
			t.Fatalf("%s: %v", size.name, err)
		}
		if conv.H1 == "" || conv.Name != conv.H1 || conv.Messages < 2 || conv.Overflow ||
			conv.Type != "QAPage" && conv.Type != "DiscussionForumPosting" {
			t.Errorf("%s: conversation %s: %+v", size.name, front.Convos[1], conv)
		}
		for _, p := range []struct{ path, wait, name string }{
			{"/?q=webhook+signature", ".hit-doc", "search"},
			{"/c/help", ".msg", "channel"},
		} {
			var overflow bool
			err := chromedp.Run(ctx,
				chromedp.Navigate(ts.url+p.path),
				chromedp.WaitVisible(p.wait, chromedp.ByQuery),
				chromedp.Evaluate(`document.documentElement.scrollWidth > innerWidth`, &overflow),
				shot(p.name+"-"+size.name),
			)
			if err != nil || overflow {
				t.Errorf("%s %s: %v, wider than the screen: %v", size.name, p.path, err, overflow)
			}
		}
	}
}

// TestBrowserPreviewsCut: no preview the pages show ends within a word
// without an ellipsis: the titles of the recent conversations (the first
// message, cut) and the sources under a streamed answer (their preview,
// cut again to fit).
func TestBrowserPreviewsCut(t *testing.T) {
	if chromium() == "" {
		browser(t)
	}
	ts := startAsk(t, nil)
	// Titles: each is its first message's text whole, or a prefix of it
	// ending at a word with "…".
	home := string(htmlGet(t, ts, "/").body)
	links := regexp.MustCompile(`<a class="convo-title" href="/t/([^"]+)">([^<]+)</a>`).FindAllStringSubmatch(home, -1)
	if len(links) < 5 {
		t.Fatalf("%d recent conversations", len(links))
	}
	for _, l := range links {
		slug, id, _ := splitConvoSlug(html.UnescapeString(l[1]))
		pos, err := ts.eng.MessagePosition(slug, id)
		if err != nil {
			t.Fatal(err)
		}
		msgs, _, _ := ts.eng.ChannelMessages(slug, pos, 1)
		first := strings.Join(strings.Fields(mdtext.PlainChat(msgs[0].Content)), " ")
		checkCut(t, "title", html.UnescapeString(l[2]), first)
	}

	// Sources under an answer streamed into the page.
	ctx := browser(t)
	const question = "How do I verify webhook signatures?"
	var previews []string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.url+"/"),
		chromedp.WaitVisible("#question", chromedp.ByID),
		chromedp.SendKeys("#question", question, chromedp.ByID),
		chromedp.Click("#ask-form button", chromedp.ByQuery),
		chromedp.WaitVisible(`#answer[data-done="true"]`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("#answer-sources li .meta")).map(e => e.textContent.replace(/^ — /, ""))`, &previews),
	)
	if err != nil {
		t.Fatal(err)
	}
	r := ts.do(t, "POST", "/api/ask", strings.NewReader(`{"question":"`+question+`"}`), "Content-Type", "application/json")
	var out struct {
		Sources []struct{ Preview string }
	}
	if err := json.Unmarshal(r.body, &out); err != nil || len(out.Sources) != len(previews) || len(previews) == 0 {
		t.Fatalf("%d previews shown, the API's: %v %s", len(previews), err, r.body)
	}
	for i, p := range previews {
		full := strings.TrimSuffix(out.Sources[i].Preview, "…")
		checkCut(t, "source preview", p, full)
	}
}

// checkCut fails unless shown is whole, or a prefix of whole cut after a
// word and marked with "…".
func checkCut(t *testing.T, what, shown, whole string) {
	t.Helper()
	if shown == whole {
		return
	}
	cut, ok := strings.CutSuffix(shown, "…")
	if !ok {
		t.Errorf("%s %q is cut without an ellipsis (of %q)", what, shown, whole)
		return
	}
	if !strings.HasPrefix(whole, cut) {
		t.Errorf("%s %q is not a prefix of %q", what, shown, whole)
		return
	}
	if next := whole[len(cut):]; next != "" && !strings.ContainsAny(next[:1], " ,;:.!?") {
		t.Errorf("%s %q ends within a word of %q", what, shown, whole)
	}
}
