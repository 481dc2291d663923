package doclinks

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestLinks: every relative link and image in README.md and docs/ names a
// file of the repository, and every #fragment a heading or an id of its
// target, so a section moved between files cannot leave a dead link.
func TestLinks(t *testing.T) {
	root := moduleRoot(t)
	files := markdownFiles(t, root)
	docs := make(map[string]*doc, len(files)) // by slash path from root
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = parse(string(b))
	}
	checked := 0
	for _, name := range files {
		for _, l := range docs[name].links {
			if external(l.target) {
				continue
			}
			checked++
			if msg := check(root, name, l.target, docs); msg != "" {
				t.Errorf("%s:%d: link %q: %s", name, l.line, l.target, msg)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d relative links found in %d files: is the parser still finding them?", checked, len(files))
	}
	t.Logf("%d relative links checked in %d files", checked, len(files))
}

// check returns why target, a link in the Markdown file from, leads
// nowhere, or "" when it resolves.
func check(root, from, target string, docs map[string]*doc) string {
	path, fragment, _ := strings.Cut(target, "#")
	path, _, _ = strings.Cut(path, "?")
	p, err := url.PathUnescape(path)
	if err != nil {
		return "bad escape in path"
	}
	name := from // a bare #fragment names the file itself
	switch {
	case strings.HasPrefix(p, "/"): // from the repository's root, as GitHub reads it
		name = filepath.ToSlash(filepath.Clean(strings.TrimPrefix(p, "/")))
	case p != "":
		name = filepath.ToSlash(filepath.Join(filepath.Dir(filepath.FromSlash(from)), filepath.FromSlash(p)))
	}
	if name == ".." || strings.HasPrefix(name, "../") {
		return "leads outside the repository"
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
		return "no file " + name
	}
	if fragment == "" {
		return ""
	}
	frag, err := url.PathUnescape(fragment)
	if err != nil {
		return "bad escape in fragment"
	}
	d, ok := docs[name]
	if !ok {
		if !isMarkdown(name) {
			if lineRef.MatchString(frag) { // file.go#L10-L20
				return ""
			}
			return "a fragment on " + name + ", which is not Markdown"
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return err.Error()
		}
		d = parse(string(b))
		docs[name] = d
	}
	if !d.anchors[frag] {
		return "no heading or id " + strconv.Quote(frag) + " in " + name
	}
	return ""
}

var lineRef = regexp.MustCompile(`^L\d+(-L\d+)?$`)

func isMarkdown(name string) bool {
	return strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".markdown")
}

// external reports whether a link leaves the repository: a URL with a
// scheme (http:, https:, mailto:, …) or a protocol-relative one.
func external(target string) bool {
	return scheme.MatchString(target) || strings.HasPrefix(target, "//")
}

var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// markdownFiles lists README.md and every Markdown file under docs/, as
// slash paths from root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && isMarkdown(path) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files[1:])
	return files
}

// moduleRoot walks up from the test's directory to the one holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// doc is what the check needs of one Markdown file.
type doc struct {
	links   []link
	anchors map[string]bool // heading slugs and explicit ids
}

type link struct {
	target string
	line   int
}

var (
	// inlineLink matches [text](target) and ![alt](target), the text
	// spanning lines and holding one level of brackets, the target
	// optionally in <…> and followed by a title.
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*\]\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	// refDef matches a reference definition, [label]: target.
	refDef = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:[ \t]*(<[^<>\n]*>|\S+)`)
	atx    = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setext = regexp.MustCompile(`^ {0,3}(=+|-+)[ \t]*$`)
	htmlID = regexp.MustCompile(`<[A-Za-z][^>]*\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')`)
)

// parse finds the links of a Markdown text, outside code, and the anchors
// it defines.
func parse(src string) *doc {
	noFences := blankFences(src)
	prose := blankCodeSpans(noFences)
	d := &doc{anchors: headingAnchors(noFences)}
	lineAt := func(off int) int { return 1 + strings.Count(prose[:off], "\n") }
	for _, m := range inlineLink.FindAllStringSubmatchIndex(prose, -1) {
		if m[0] > 0 && prose[m[0]-1] == '\\' {
			continue // \[text](…) is text
		}
		d.links = append(d.links, link{target: unangle(prose[m[2]:m[3]]), line: lineAt(m[0])})
	}
	for _, m := range refDef.FindAllStringSubmatchIndex(prose, -1) {
		d.links = append(d.links, link{target: unangle(prose[m[2]:m[3]]), line: lineAt(m[0])})
	}
	for _, m := range htmlID.FindAllStringSubmatch(prose, -1) {
		d.anchors[m[1]+m[2]] = true
	}
	return d
}

func unangle(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
}

// blankFences returns src with every fenced code block (``` or ~~~, the
// fences included) turned into blank lines, so offsets and line numbers
// stay as they were. An unclosed fence runs to the end, as CommonMark has it.
func blankFences(src string) string {
	lines := strings.SplitAfter(src, "\n")
	var fence string // the opening fence while inside a block
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if fence == "" {
			if f := fenceOf(trimmed); f != "" && !(f[0] == '`' && strings.Contains(trimmed[len(f):], "`")) {
				fence = f
				lines[i] = blank(line)
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" && f[0] == fence[0] && len(f) >= len(fence) &&
			strings.TrimSpace(trimmed[len(f):]) == "" {
			fence = ""
		}
		lines[i] = blank(line)
	}
	return strings.Join(lines, "")
}

// fenceOf returns the run of three or more backticks or tildes a line
// starts with, or "".
func fenceOf(line string) string {
	if line == "" || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return line[:n]
}

// blankCodeSpans returns src with every inline code span, backticks
// included, blanked. A span closes at the next run of as many backticks
// within its paragraph; an opening run without one stays as text.
func blankCodeSpans(src string) string {
	b := []byte(src)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++ // an escaped character, backtick or not, opens nothing
			continue
		case '`':
		default:
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		end := closingRun(b, i+n, n)
		if end < 0 {
			i += n - 1
			continue
		}
		for j := i; j < end; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
		i = end - 1
	}
	return string(b)
}

// closingRun returns the offset just past the first run of exactly n
// backticks at or after from, or -1 when a blank line (the paragraph's
// end) or the text's end comes first.
func closingRun(b []byte, from, n int) int {
	for j := from; j < len(b); {
		switch {
		case b[j] == '`':
			k := j
			for k < len(b) && b[k] == '`' {
				k++
			}
			if k-j == n {
				return k
			}
			j = k
		case b[j] == '\n' && blankLineAfter(b, j+1):
			return -1
		default:
			j++
		}
	}
	return -1
}

func blankLineAfter(b []byte, from int) bool {
	for j := from; j < len(b); j++ {
		switch b[j] {
		case ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

func blank(line string) string {
	if strings.HasSuffix(line, "\n") {
		return "\n"
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the headings of a text
// whose fenced code is blanked: ATX (# …) and setext (underlined) ones.
func headingAnchors(src string) map[string]bool {
	anchors := map[string]bool{}
	count := map[string]int{}
	lines := strings.Split(src, "\n")
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		text, ok := "", false
		if m := atx.FindStringSubmatch(line); m != nil {
			text, ok = m[2], true
		} else if i > 0 && setext.MatchString(line) && paragraphLine(lines[i-1]) {
			text, ok = strings.TrimSpace(lines[i-1]), true
		}
		if ok {
			anchors[uniqueSlug(slug(text), count)] = true
		}
	}
	return anchors
}

// paragraphLine reports whether a line can be the text of a setext heading.
func paragraphLine(line string) bool {
	s := strings.TrimSpace(line)
	if s == "" || atx.MatchString(line) || setext.MatchString(line) {
		return false
	}
	return !strings.HasPrefix(s, "|") && !strings.HasPrefix(s, ">") &&
		!strings.HasPrefix(s, "- ") && !strings.HasPrefix(s, "* ") && !strings.HasPrefix(s, "+ ")
}

// uniqueSlug numbers repeated slugs as GitHub does: x, x-1, x-2, …
func uniqueSlug(s string, count map[string]int) string {
	out := s
	for {
		if _, taken := count[out]; !taken {
			break
		}
		count[s]++
		out = s + "-" + strconv.Itoa(count[s])
	}
	count[out] = 0
	return out
}

var (
	mdImageOrLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag       = regexp.MustCompile(`<[^>]+>`)
)

// slug is GitHub's anchor of a heading: its text as rendered (links and
// images become their text, code its content, tags nothing), lower case,
// every space a '-', and every character but letters, digits, marks, '-'
// and '_' left out.
func slug(heading string) string {
	text := mdImageOrLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = strings.ReplaceAll(text, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	f := func(heading, want string) {
		t.Helper()
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	f("Configuration", "configuration")
	f("GET /api/search", "get-apisearch")
	f("GET /api/search?content=snippet", "get-apisearchcontentsnippet")
	f("Ranking at scale: what a query skips, and why results stay exact",
		"ranking-at-scale-what-a-query-skips-and-why-results-stay-exact")
	f("The conformance suite (`engine/storetest`)", "the-conformance-suite-enginestoretest")
	f("Sources — and crawling", "sources--and-crawling")
	f("snake_case and [a link](x.md)", "snake_case-and-a-link")
	f("Café über alles", "café-über-alles")
	f("Read-your-writes", "read-your-writes")
}

func TestParse(t *testing.T) {
	src := "# Title\n\n## Title\n\nSee [one](a.md#x) and ![img](pic.png \"t\"),\n" +
		"[two\nlines](#title-1), `[not](code.md)`, \\[not](either.md) <b id=\"here\">.\n\n" +
		"```sh\n# not a heading\n[no](link.md)\n```\n\n" +
		"~~~\n[no](link2.md)\n~~~\n\n" +
		"Under it\n--------\n\n[ref]: <b.md#y>\n"
	d := parse(src)
	var got []string
	for _, l := range d.links {
		got = append(got, l.target+"@"+strconv.Itoa(l.line))
	}
	want := []string{"a.md#x@5", "pic.png@5", "#title-1@6", "b.md#y@21"}
	if !slices.Equal(got, want) {
		t.Errorf("links = %q, want %q", got, want)
	}
	for _, a := range []string{"title", "title-1", "under-it", "here"} {
		if !d.anchors[a] {
			t.Errorf("anchor %q missing from %v", a, d.anchors)
		}
	}
	if d.anchors["not-a-heading"] {
		t.Error("a comment in a code block counted as a heading")
	}
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Sift\n")
	write("docs/a.md", "# A\n\n## Part two\n")
	write("main.go", "package main\n")
	docs := map[string]*doc{}
	f := func(from, target string, ok bool) {
		t.Helper()
		msg := check(root, from, target, docs)
		if (msg == "") != ok {
			t.Errorf("check(%s, %q) = %q, want ok=%v", from, target, msg, ok)
		}
	}
	f("README.md", "docs/a.md#part-two", true)
	f("README.md", "docs/a.md#part-three", false)
	f("README.md", "docs/b.md", false)
	f("docs/a.md", "../README.md#sift", true)
	f("docs/a.md", "#a", true)
	f("docs/a.md", "#sift", false)
	f("docs/a.md", "/main.go#L1", true)
	f("docs/a.md", "../main.go#top", false)
	f("docs/a.md", "../../outside.md", false)
	f("docs/a.md", "part%20two.md", false)
}
