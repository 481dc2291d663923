package httpapi

import (
	"regexp"
	"strings"
	"testing"
)

func TestRenderChat(t *testing.T) {
	f := func(d chatDialect, in, want string) {
		t.Helper()
		if got := string(renderChat(in, d)); got != want {
			t.Errorf("%q\n got %s\nwant %s", in, got, want)
		}
	}
	md, slack := markdownChat, slackChat

	// Emphasis as Discord reads it.
	f(md, "**bold** and *it* and _it_", "<strong>bold</strong> and <em>it</em> and <em>it</em>")
	f(md, "__under__ ~~gone~~ ||secret||", `<u>under</u> <del>gone</del> <span class="spoiler" tabindex="0">secret</span>`)
	f(md, "***both***", "<strong><em>both</em></strong>")
	f(md, "**Wren v2.0.0 is out!** 🎉", "<strong>Wren v2.0.0 is out!</strong> 🎉")
	f(md, "**bold _nested_ here**", "<strong>bold <em>nested</em> here</strong>")
	f(md, "**two\nlines**", "<strong>two<br>\nlines</strong>")
	f(md, "~one~ tilde", "~one~ tilde")
	// Slack's mrkdwn: *bold*, ~strike~.
	f(slack, "*bold* _it_ ~gone~", "<strong>bold</strong> <em>it</em> <del>gone</del>")
	f(slack, "~20M runs, ~9M rows", "~20M runs, ~9M rows")
	f(slack, "status page (https://status.example.com) failed &amp;", `status page (<a href="https://status.example.com" rel="nofollow ugc noopener">https://status.example.com</a>) failed &amp;amp;`)
	f(slack, "*Deploy* of `x < 3`", "<strong>Deploy</strong> of <code>x &lt; 3</code>")

	// No emphasis inside words or around spaces; unbalanced markers stay.
	f(md, "snake_case_names and 2*3*4", "snake_case_names and 2*3*4")
	f(md, "a * b * c", "a * b * c")
	f(md, "**open only", "**open only")
	f(md, "close only**", "close only**")
	f(md, "**a *b** c*", "<strong>a *b</strong> c*")
	f(md, "****", "****")
	f(md, "|| a | b ||", "|| a | b ||")
	f(md, "*/5 * * * *", "*/5 * * * *")

	// Code: markers inside are text; fences drop the language line.
	f(md, "`**not bold**` and ``a ` b``", "<code>**not bold**</code> and <code>a ` b</code>")
	f(md, "a ` b", "a ` b")
	f(md, "**use `x`**", "<strong>use <code>x</code></strong>")
	f(md, "run:\n```sh\nmake *all*\n```\ndone", "run:<pre><code>make *all*</code></pre>done")
	f(md, "```one line```", "<pre><code>one line</code></pre>")
	f(md, "``` open only", "``` open only")

	// Quotes.
	f(md, "> quoted\n> more\nreply", "<blockquote>quoted<br>\nmore</blockquote>reply")
	f(md, "hi\n>>> all\nof this\n```\ncode\n```", "hi<blockquote>all<br>\nof this<pre><code>code</code></pre></blockquote>")
	f(md, ">not a quote", "&gt;not a quote")
	f(slack, ">quote", "<blockquote>quote</blockquote>")
	f(md, "a > b", "a &gt; b")

	// Links: http(s) only, without the punctuation after them.
	f(md, "see https://x.example/a_b_c.", `see <a href="https://x.example/a_b_c" rel="nofollow ugc noopener">https://x.example/a_b_c</a>.`)
	f(md, "(https://en.example/wiki/A_(b))", `(<a href="https://en.example/wiki/A_(b)" rel="nofollow ugc noopener">https://en.example/wiki/A_(b)</a>)`)
	f(md, "**https://x.example**", `<strong><a href="https://x.example" rel="nofollow ugc noopener">https://x.example</a></strong>`)
	f(md, "[x](javascript:alert(1))", "[x](javascript:alert(1))")
	f(md, "[x](https://ok.example)", `[x](<a href="https://ok.example" rel="nofollow ugc noopener">https://ok.example</a>)`)
	f(md, "xhttps://no.example https://", "xhttps://no.example https://")

	// Everything is escaped.
	f(md, "**<script>alert(1)</script>**", "<strong>&lt;script&gt;alert(1)&lt;/script&gt;</strong>")
	f(md, "`<b>` <img src=x onerror=alert(1)> & \"'", "<code>&lt;b&gt;</code> &lt;img src=x onerror=alert(1)&gt; &amp; &#34;&#39;")
	f(md, `https://x.example/"onmouseover="alert(1)`, `<a href="https://x.example/" rel="nofollow ugc noopener">https://x.example/</a>&#34;onmouseover=&#34;alert(1)`)
	f(md, "line one\nline two", "line one<br>\nline two")
}

// TestRenderChatPathological: long runs of markers finish, in linear time
// by construction, and give output of a size bounded by the input's.
func TestRenderChatPathological(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("*a", 100000), strings.Repeat("**a _b ", 100000), strings.Repeat("`", 100000),
		strings.Repeat("` ``", 100000), strings.Repeat("_", 100000), strings.Repeat("a_ ", 50000) + strings.Repeat(" _a", 50000),
		strings.Repeat("> ", 100000), strings.Repeat(">\na\n", 100000), strings.Repeat("```", 100000),
		strings.Repeat("http://", 100000), strings.Repeat("https://x(", 100000) + strings.Repeat(")", 100000),
		strings.Repeat("||x ~~", 100000), strings.Repeat("*_~|", 100000),
	} {
		for _, d := range []chatDialect{markdownChat, slackChat} {
			out := renderChat(in, d)
			wellFormed(t, in, string(out))
		}
	}
}

// chatTag matches the tags the chat renderer writes.
var chatTag = regexp.MustCompile(`^<(/?)(strong|em|u|del|code|pre|blockquote|br|span|a)(?: class="spoiler" tabindex="0"| href="https?://[^"<>]*" rel="nofollow ugc noopener")?>`)

// wellFormed checks a rendering: every '<' starts one of the renderer's
// own tags, tags are balanced and nested, and the output's size is
// bounded by the input's.
func wellFormed(t *testing.T, in, out string) {
	t.Helper()
	if len(out) > 16*len(in)+64 {
		t.Fatalf("%d bytes of output for %d of input", len(out), len(in))
	}
	var stack []string
	for i := 0; i < len(out); {
		j := strings.IndexByte(out[i:], '<')
		if j < 0 {
			break
		}
		i += j
		m := chatTag.FindStringSubmatch(out[i:])
		if m == nil {
			t.Fatalf("markup not of the renderer's own at %d: %.60q (input %.60q)", i, out[i:], in)
		}
		i += len(m[0])
		switch {
		case m[2] == "br":
		case m[1] == "":
			stack = append(stack, m[2])
		case len(stack) == 0 || stack[len(stack)-1] != m[2]:
			t.Fatalf("</%s> closes %v (input %.60q)", m[2], stack, in)
		default:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		t.Fatalf("unclosed %v (input %.60q)", stack, in)
	}
}

// FuzzRenderMessage: whatever a chat message holds, its rendering is
// well-formed and holds no markup but the renderer's own.
func FuzzRenderMessage(f *testing.F) {
	for _, s := range []string{
		hostile, "**<script>**", "[x](javascript:alert(1))", "`**x**` ``a`b``", "***a** b*", "> q\n>>> r\n```js\n<b>\n```",
		"snake_case 2*3*4 ~x~ ||s|| __u__", "https://x.example/(a)_b_ **https://y.example**", "```\n```", "*a _b* c_",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range []chatDialect{markdownChat, slackChat} {
			wellFormed(t, s, string(renderChat(s, d)))
		}
	})
}
