package httpapi

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// chatSite imports the DiscordChatExporter files of testdata/chat through
// the API: #showcase with formatted messages, a thread its message starts,
// a thread whose starting message was not exported, a private thread and a
// thread whose channel was not exported.
func chatSite(t *testing.T) *testServer {
	t.Helper()
	ts := start(t)
	r := ts.do(t, "POST", "/api/sources", strings.NewReader(`{"id":"chat","name":"Wren Community","type":"discord","config":{"guildId":"1200000000000000000"}}`), adminJSON...)
	if r.status != 201 {
		t.Fatalf("source: %d %s", r.status, r.body)
	}
	for _, name := range []string{"showcase", "thread-linked", "thread-orphan", "thread-private", "thread-lost"} {
		f, err := os.Open("testdata/chat/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		r := ts.do(t, "POST", "/api/sources/chat/import", f, bearer...)
		f.Close()
		if r.status != 200 {
			t.Fatalf("import %s: %d %s", name, r.status, r.body)
		}
	}
	return ts
}

// TestChannelChatFormatting: a channel page shows the platform's
// formatting as HTML, escapes everything else, and groups an author's
// consecutive messages under one author line, each message keeping its
// anchor and permalink.
func TestChannelChatFormatting(t *testing.T) {
	ts := chatSite(t)
	r := htmlGet(t, ts, "/c/showcase")
	page := string(r.body)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, page)
	}
	inert(t, "/c/showcase", r.body)
	for _, want := range []string{
		"<strong>Wren 2.1</strong> is out: <em>finally</em> with <del>MySQL</del> Postgres 16 support",
		`<a href="https://example.com/wren/2.1" rel="nofollow ugc noopener">https://example.com/wren/2.1</a>.`,
		"<pre><code>wren config convert jobs.yaml &gt; wren.yaml</code></pre>",
		"<code>wren doctor --config **wren.yaml**</code>",
		"<blockquote>is sqlite ok for prod?</blockquote>yes, on a single node",
		`<u>Important</u>: <span class="spoiler" tabindex="0">the leader cache bug</span>`,
		"&lt;script&gt;alert(1)&lt;/script&gt; <strong>&lt;b&gt;not markup&lt;/b&gt;</strong> [x](javascript:alert(2))",
		"<blockquote>Quoted to the end:<br>\nsnake_case_names and 2*3*4 stay as typed</blockquote>",
		"<strong><em>both</em></strong> and <em>italic</em>, a lone ** and a <code>code span with **stars**</code>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}

	// Every message has its anchor and a permalink; authors' runs share a
	// line: Ana's three, Dee's first, Dee's next two 25 minutes later, and
	// Dee's reply (a reply starts a group).
	items := regexp.MustCompile(`<li class="(msg(?: cont)?)" id="m-(\d+)">\n(?:<div class="meta stamp">.*?<a href="#m-(\d+)">|<span class="av av\d+" aria-hidden="true">[^<]+</span><div class="meta"><span class="who">([^<]+)</span>.*?<a href="#m-(\d+)">)`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range items {
		if m[2] != m[3] && m[2] != m[5] {
			t.Errorf("message %s links to %s%s", m[2], m[3], m[5])
		}
		got = append(got, m[1]+":"+m[4])
	}
	want := []string{"msg:Ana", "msg cont:", "msg cont:", "msg:Dee (Wren team)", "msg:Dee (Wren team)", "msg cont:", "msg:Dee (Wren team)"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("groups %v, want %v", got, want)
	}
	if n := strings.Count(page, `<span class="who">Ana</span>`); n != 1 {
		t.Errorf("Ana's name shown %d times", n)
	}
	// The thread message 104 started is linked from it, not listed.
	if !strings.Contains(page, `<a href="/t/leader-cache-fix">Thread →</a>`) || strings.Contains(page, `<a href="/c/leader-cache-fix">Leader cache fix</a>`) {
		t.Error("the thread started by a message on the page")
	}
}

// TestOrphanThreads: threads no stored message starts are listed on their
// channel's page and on /sources (those of a channel not stored apart),
// and their links answer; a private one appears nowhere to the public.
func TestOrphanThreads(t *testing.T) {
	ts := chatSite(t)
	channel := string(htmlGet(t, ts, "/c/showcase").body)
	sources := string(htmlGet(t, ts, "/sources").body)
	threads := channel[strings.Index(channel, `<h2 id="threads-h">`):]
	if !strings.Contains(threads, `<a href="/c/release-planning">Release planning</a> <span class="meta">· not started from a message here</span>`) {
		t.Errorf("the channel page does not list its orphan thread:\n%s", threads)
	}
	showcase := regexp.MustCompile(`<li><a href="/c/showcase">#showcase</a>.*?</li></ul></li>`).FindString(sources)
	if !strings.Contains(showcase, `<a href="/c/release-planning">Release planning</a>`) {
		t.Errorf("/sources does not list the orphan under its channel: %q", showcase)
	}
	lost := sources[strings.Index(sources, "<h3>Threads</h3>"):]
	if !strings.Contains(lost, `<a href="/c/lost-thread">Lost thread</a>`) {
		t.Error("/sources does not list the thread whose channel is not stored")
	}
	if strings.Contains(sources, "leader-cache-fix") {
		t.Error("/sources lists a thread its message links")
	}
	for _, p := range []string{"/c/release-planning", "/c/lost-thread"} {
		if r := htmlGet(t, ts, p); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	for name, page := range map[string]string{"/c/showcase": channel, "/sources": sources} {
		if strings.Contains(page, "qwyxv") {
			t.Errorf("%s shows the private thread to the public", name)
		}
	}
	if r := htmlGet(t, ts, "/c/secret-roadmap-qwyxv"); r.status != 404 {
		t.Errorf("the private thread's page: %d", r.status)
	}
}
