package extract

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

func markdownOf(t testing.TB, page, addr string) (title, md string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var u *url.URL
	if addr != "" {
		if u, err = url.Parse(addr); err != nil {
			t.Fatal(err)
		}
	}
	title, md, err = HTMLMarkdown(doc, u)
	if err != nil {
		t.Fatal(err)
	}
	return title, md
}

func TestHTMLMarkdown(t *testing.T) {
	page := `<!doctype html><html><head><title>Installing Heron</title>
<script>var x = "<p>not text</p>";</script></head>
<body><nav><a href="/">Home</a></nav>
<main><h1>Installing Heron</h1>
<p>Run <code>heron init</code> <em>once</em>, then <strong>restart</strong>.</p>
<h2>Raspberry Pi</h2>
<ul><li>Boards<ul><li>Pi 4</li><li>Pi 5</li></ul></li><li>Power</li></ul>
<ol><li>Flash</li><li>Boot</li></ol>
<h3>Memory</h3>
<table><thead><tr><th>Board</th><th>RAM</th></tr></thead><tbody><tr><td>Pi 4</td><td>4 GB</td></tr></tbody></table>
<pre><code class="language-go">fmt.Println("# not a heading")
</code></pre>
<p><img src="/diagram.png" alt="Wiring diagram"></p>
<div hidden>secret</div></main>
<footer>© 2026 Heron</footer></body></html>`
	title, md := markdownOf(t, page, "https://heron.example/docs/install")
	if title != "Installing Heron" {
		t.Errorf("title %q", title)
	}
	want := "Run `heron init` *once*, then **restart**.\n\n" +
		"## Raspberry Pi\n\n" +
		"- Boards\n  \n  - Pi 4\n  - Pi 5\n- Power\n\n" +
		"1. Flash\n2. Boot\n\n" +
		"### Memory\n\n" +
		"| Board | RAM |\n|---|---|\n| Pi 4 | 4 GB |\n\n" +
		"```go\nfmt.Println(\"# not a heading\")\n```\n\n" +
		"Wiring diagram"
	if md != want {
		t.Errorf("markdown:\n%s\n--- want ---\n%s", md, want)
	}
	for _, junk := range []string{"not text", "Home", "secret", "©", "diagram.png", "# Installing"} {
		if strings.Contains(md, junk) {
			t.Errorf("markdown keeps %q", junk)
		}
	}
}

func TestHTMLMarkdownKeepsH1NotTheTitle(t *testing.T) {
	_, md := markdownOf(t, `<title>Heron docs</title><h1>Install</h1><p>x</p>`, "")
	if md != "# Install\n\nx" {
		t.Errorf("markdown %q", md)
	}
	// Text before the h1: it is not the page's heading.
	_, md = markdownOf(t, `<title>Install</title><p>x</p><h1>Install</h1>`, "")
	if md != "x\n\n# Install" {
		t.Errorf("markdown %q", md)
	}
}

func TestHTMLMarkdownLinks(t *testing.T) {
	long := "https://other.example/" + strings.Repeat("a", MaxLinkBytes)
	f := func(href, want string) {
		t.Helper()
		_, md := markdownOf(t, `<p><a href="`+href+`">text</a></p>`, "https://heron.example/docs/install")
		if md != want {
			t.Errorf("href %q: markdown %q, want %q", href, md, want)
		}
	}
	f("config", "[text](/docs/config)")
	f("../faq?q=1#top", "[text](/faq?q=1#top)")
	f("https://heron.example/docs/", "[text](/docs/)")
	f("#usage", "[text](#usage)")
	f("https://other.example/x", "[text](https://other.example/x)")
	f("http://heron.example/x", "[text](http://heron.example/x)") // another scheme: absolute
	f(long, "text")
	f("javascript:alert(1)", "text")
	f("mailto:a@heron.example", "text")
	f("", "text")

	// <base href> moves relative links.
	_, md := markdownOf(t, `<head><base href="/v2/"></head><body><a href="x">x</a></body>`, "https://heron.example/docs/install")
	if md != "[x](/v2/x)" {
		t.Errorf("with <base>: %q", md)
	}
}

func TestHTMLMarkdownLeavesDocAlone(t *testing.T) {
	page := `<title>T</title><nav><a href="/n">nav</a></nav><h1>T</h1><p><a href="x">x</a><img src="i.png" alt="i"></p>`
	doc, _ := html.Parse(strings.NewReader(page))
	var before strings.Builder
	html.Render(&before, doc)
	if _, _, err := HTMLMarkdown(doc, nil); err != nil {
		t.Fatal(err)
	}
	var after strings.Builder
	html.Render(&after, doc)
	if before.String() != after.String() {
		t.Errorf("doc changed:\n%s\n---\n%s", before.String(), after.String())
	}
}

func FuzzHTMLMarkdown(f *testing.F) {
	f.Add("<title>t</title><h1>t</h1><ul><li>a<ol><li>b</ol></ul><table><td>x<td>y")
	f.Add(`<pre><code class="language-go">x</code></pre><p><code>` + "`a`" + `</code> <em>*b*</em></p>`)
	f.Add(`<base href="//evil/"><a href="y">[y](z)</a><a href="#` + strings.Repeat("f", 200) + `">f</a>`)
	f.Add("<<<>>>&amp;&#xffff;\xff<h2>\xff</h2>")
	base, _ := url.Parse("https://a.example/p/q")
	f.Fuzz(func(t *testing.T, s string) {
		doc, err := html.Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		title, md, err := HTMLMarkdown(doc, base)
		if err != nil {
			t.Fatal(err) // the converter's own configuration is fixed
		}
		if !utf8.ValidString(md) {
			t.Fatalf("invalid UTF-8 out: %q", md)
		}
		if strings.Contains(title, "\n") {
			t.Fatalf("title has a newline: %q", title)
		}
	})
}

func TestHTMLMarkdownLongHeadingIsLinear(t *testing.T) {
	// Text nodes split by comments: the converter merges them by
	// repeated concatenation, quadratic unless merged before.
	page := "<title>T</title><h1>" + strings.Repeat("é<!---->", 200000) + "</h1>"
	_, md := markdownOf(t, page, "")
	if !strings.HasPrefix(md, "# éé") || !utf8.ValidString(md) {
		t.Fatalf("markdown %.40q", md)
	}
}
