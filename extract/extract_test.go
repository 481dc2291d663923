package extract

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHTML(t *testing.T) {
	page := `<!doctype html><html><head><title> Retries &amp; backoff | Wren docs </title>
<style>body{color:red}</style><script>var x = "<p>not text</p>";</script></head>
<body><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<header><h1>Retries and <em>backoff</em></h1></header>
<main><p>Wren retries a failed job
   with exponential backoff.</p>
<h2>Settings</h2>
<ul><li>max_attempts: total tries</li><li>backoff: <code>2s</code></li></ul>
<pre><code>retry:
  max_attempts: 5
</code></pre>
<table><tr><th>Key</th><th>Default</th></tr><tr><td>backoff</td><td>1s</td></tr></table>
<div hidden>secret hidden text</div><div aria-hidden="true">icon</div>
<p>Line one<br>Line two</p></main>
<footer>© 2026 Wren</footer></body></html>`
	title, text, err := HTML(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if title != "Retries & backoff | Wren docs" {
		t.Errorf("title %q", title)
	}
	want := "# Retries and backoff\n\n" +
		"Wren retries a failed job with exponential backoff.\n\n" +
		"## Settings\n\n" +
		"- max_attempts: total tries\n- backoff: 2s\n\n" +
		"retry:\n  max_attempts: 5\n\n\n" +
		"Key | Default\nbackoff | 1s\n\n" +
		"Line one\nLine two"
	if text != want {
		t.Errorf("text:\n%s\n--- want ---\n%s", text, want)
	}
	for _, junk := range []string{"not text", "Home", "secret", "icon", "©", "color"} {
		if strings.Contains(text, junk) {
			t.Errorf("text keeps %q", junk)
		}
	}
}

func TestHTMLTitleFallsBackToH1(t *testing.T) {
	title, text, _ := HTML(strings.NewReader("<h1>Only <b>heading</b></h1><p>body</p>"))
	if title != "Only heading" || text != "# Only heading\n\nbody" {
		t.Errorf("%q %q", title, text)
	}
}

func TestMarkdownTitle(t *testing.T) {
	for in, want := range map[string]string{
		"# Getting started\n\ntext":                   "Getting started",
		"intro\n## Sub\n# Real title #\n":             "Real title",
		"---\ntitle: \"From front matter\"\n---\n# H": "From front matter",
		"```\n# not a title\n```\n# Title":            "Title",
		"no heading at all":                           "",
	} {
		if got := MarkdownTitle(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestTitleFromFileName(t *testing.T) {
	for in, want := range map[string]string{
		"getting-started.md": "Getting started", "dir/some_file.name.txt": "Some file.name",
		"ébauche.md": "Ébauche", ".hidden": ".hidden", "": "",
	} {
		if got := TitleFromFileName(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func FuzzHTML(f *testing.F) {
	f.Add("<p>a<b>b</b></p><pre> x </pre><ul><li>1</li></ul>")
	f.Add("<title>t</title><h1>h</h1><table><td>x<td>y")
	f.Add("<<<>>>&amp;&#xffff;\xff")
	f.Fuzz(func(t *testing.T, s string) {
		title, text, err := HTML(strings.NewReader(s))
		if err != nil {
			return
		}
		if !utf8.ValidString(title) && utf8.ValidString(s) || !utf8.ValidString(text) && utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 out of valid input")
		}
		if strings.Contains(title, "\n") {
			t.Fatalf("title has a newline: %q", title)
		}
	})
}

func FuzzMarkdownTitle(f *testing.F) {
	f.Add("---\ntitle: x\n---\n# y")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(MarkdownTitle(s), "\n") {
			t.Fatal("title has a newline")
		}
	})
}

func TestHTMLLongHeadingIsLinear(t *testing.T) {
	// Text nodes split by comments inside one <h1>: once quadratic.
	page := "<h1>" + strings.Repeat("é<!---->", 200000) + "</h1>"
	title, _, err := HTML(strings.NewReader(page))
	if err != nil || len(title) > maxTitleBytes || !utf8.ValidString(title) {
		t.Fatalf("title of %d bytes, valid %v, err %v", len(title), utf8.ValidString(title), err)
	}
}

func TestLang(t *testing.T) {
	for in, want := range map[string]string{
		`<!doctype html><html lang="de-DE"><title>x</title>`: "de-DE",
		`<html LANG=" pt-BR ">`:                              "pt-BR",
		`<html><body lang="fr">`:                             "",
		`plain text`:                                         "",
	} {
		_, _, got, err := HTMLLang(strings.NewReader(in))
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
}
