package crawl

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// fakeGitHub speaks the REST and GraphQL parts the connector uses
// (CONNECTORS.md §4): Bearer auth, issues and comments sorted by update
// with an inclusive since, Link rel="next" pagination (two items a page
// here), pull requests among issues, one primary-rate-limit 403 with
// x-ratelimit-reset, and discussions over GraphQL (token required).
type fakeGitHub struct {
	*httptest.Server
	mu          sync.Mutex
	token       string
	issues      []map[string]any
	comments    []map[string]any
	discussions []map[string]any
	limited     bool
	calls       []string
	clock       time.Time
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{token: "ghp_test", limited: true, clock: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	f.issue(1, "Install fails on ARM", "It crashes with SIGILL on a Pi.", nil)
	f.issue(2, "Add ARM builds", "Builds for arm64.", map[string]any{"url": "https://api.github.com/repos/acme/gadget/pulls/2"})
	f.issue(3, "Docs typo", "", nil)
	f.comment(1, "Which Pi model? The v2 lacks NEON.")
	f.comment(1, "A Pi 2, yes. Works on the Pi 4.")
	f.comment(2, "LGTM")
	f.discussions = []map[string]any{
		{"id": "D_1", "number": 7, "title": "Roadmap for 3.0", "url": "https://github.com/acme/gadget/discussions/7",
			"body": "What should 3.0 bring? Plugin sandboxing?", "createdAt": "2024-04-01T10:00:00Z", "updatedAt": "2024-04-02T10:00:00Z",
			"author": map[string]any{"login": "maintainer"}, "category": map[string]any{"name": "Ideas"},
			"comments": map[string]any{"pageInfo": map[string]any{"hasNextPage": false}, "nodes": []any{
				map[string]any{"id": "DC_1", "body": "Sandboxing via WASM, please.", "createdAt": "2024-04-01T11:00:00Z", "url": "https://github.com/acme/gadget/discussions/7#c1",
					"author": map[string]any{"login": "ana"},
					"replies": map[string]any{"pageInfo": map[string]any{"hasNextPage": false}, "nodes": []any{
						map[string]any{"id": "DC_2", "body": "Seconded.", "createdAt": "2024-04-01T12:00:00Z", "url": "https://github.com/acme/gadget/discussions/7#c2", "author": nil},
					}}},
			}}},
	}
	return f
}

func (f *fakeGitHub) tick() string {
	f.clock = f.clock.Add(time.Hour)
	return f.clock.Format(time.RFC3339)
}

func (f *fakeGitHub) issue(n int, title, body string, pr map[string]any) {
	at := f.tick()
	is := map[string]any{"number": n, "title": title, "body": body, "state": "open", "user": map[string]any{"login": "user" + strconv.Itoa(n)},
		"html_url": fmt.Sprintf("https://github.com/acme/gadget/issues/%d", n), "created_at": at, "updated_at": at, "comments": 0}
	if body == "" {
		is["body"] = nil
	}
	if pr != nil {
		is["pull_request"] = pr
	}
	f.issues = append(f.issues, is)
}

func (f *fakeGitHub) comment(n int, body string) {
	at := f.tick()
	id := len(f.comments) + 100
	f.comments = append(f.comments, map[string]any{"id": id, "body": body, "user": map[string]any{"login": "commenter"},
		"html_url":  fmt.Sprintf("https://github.com/acme/gadget/issues/%d#issuecomment-%d", n, id),
		"issue_url": fmt.Sprintf("https://api.github.com/repos/acme/gadget/issues/%d", n), "created_at": at, "updated_at": at})
	for _, is := range f.issues {
		if is["number"] == n {
			is["updated_at"] = at
			is["comments"] = is["comments"].(int) + 1
		}
	}
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.RequestURI())
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("User-Agent") == "" || r.Header.Get("X-GitHub-Api-Version") != "2022-11-28" {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"Request forbidden by administrative rules. Please make sure your request has a User-Agent header"}`)
		return
	}
	authed := r.Header.Get("Authorization") == "Bearer "+f.token
	if r.Header.Get("Authorization") != "" && !authed {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials"}`)
		return
	}
	if f.limited && strings.Contains(r.URL.Path, "/comments") {
		f.limited = false
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10))
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
		return
	}
	// list pages a list sorted by updated_at, since inclusive, two a page.
	list := func(items []map[string]any) {
		since, _ := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
		var sel []map[string]any
		for _, it := range items {
			if at, _ := time.Parse(time.RFC3339, it["updated_at"].(string)); !at.Before(since) {
				sel = append(sel, it)
			}
		}
		slices.SortFunc(sel, func(a, b map[string]any) int {
			return strings.Compare(a["updated_at"].(string), b["updated_at"].(string))
		})
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page = max(page, 1)
		from, to := min((page-1)*2, len(sel)), min(page*2, len(sel))
		if to < len(sel) {
			q := r.URL.Query()
			q.Set("page", strconv.Itoa(page+1))
			self := "http://" + r.Host // the address it was reached at
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next", <%s%s?page=99>; rel="last"`, self, r.URL.Path, q.Encode(), self, r.URL.Path))
		}
		json.NewEncoder(w).Encode(sel[from:to])
	}
	switch p := r.URL.Path; {
	case p == "/repos/acme/gadget":
		fmt.Fprint(w, `{"full_name":"acme/gadget","private":false,"has_issues":true,"has_discussions":true}`)
	case p == "/repos/acme/gadget/issues":
		list(f.issues)
	case p == "/repos/acme/gadget/issues/comments":
		list(f.comments)
	case strings.HasPrefix(p, "/repos/acme/gadget/issues/"):
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "/repos/acme/gadget/issues/"))
		for _, is := range f.issues {
			if is["number"] == n {
				json.NewEncoder(w).Encode(is)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	case p == "/graphql" && r.Method == "POST":
		if !authed {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"This endpoint requires you to be authenticated."}`)
			return
		}
		var req struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &req) != nil || !strings.Contains(req.Query, "discussions(") || req.Variables["owner"] != "acme" {
			fmt.Fprint(w, `{"errors":[{"type":"INVALID","message":"bad query"}]}`)
			return
		}
		// GitHub's node limit: the product of the nested first: sizes.
		nodes := 1
		for _, m := range regexp.MustCompile(`first:(\d+)`).FindAllStringSubmatch(req.Query, -1) {
			n, _ := strconv.Atoi(m[1])
			nodes *= n
		}
		if nodes > 500_000 {
			fmt.Fprintf(w, `{"errors":[{"type":"MAX_NODE_LIMIT_EXCEEDED","message":"This query requests up to %d possible nodes which exceeds the maximum limit of 500,000."}]}`, nodes)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"repository": map[string]any{"discussions": map[string]any{
			"pageInfo": map[string]any{"hasNextPage": false, "endCursor": "c1"}, "nodes": f.discussions}}}})
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	}
}

func TestGitHubCrawl(t *testing.T) {
	f := newFakeGitHub(t)
	eng := webEngine(t)
	cfg, err := CheckConfig("github", map[string]any{"repo": "acme/gadget", "token": f.token, "apiBase": f.URL, "allowPrivate": true})
	if err != nil {
		t.Fatal(err)
	}
	eng.PutSource(record.Source{ID: "gh", Name: "Gadget on GitHub", Type: "github", Enabled: true, Config: cfg})
	r := NewRunner(eng, RunnerOptions{Env: Env{UserAgent: "SiftBot/test"}})
	defer r.Close()
	if tr, err := r.Test(t.Context(), "gh"); err != nil || !tr.OK || !strings.Contains(tr.Detail, "acme/gadget") {
		t.Fatalf("test: %+v %v", tr, err)
	}
	res, err := r.Crawl("gh", false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range eng.Channels("gh", true) {
		names = append(names, c.ID+" "+c.Name+" ["+c.Topic+"]")
	}
	slices.Sort(names)
	want := []string{"discussion-7 Roadmap for 3.0 (discussion #7) [Discussion · Ideas]", "issue-1 #1 Install fails on ARM [Issue · open]",
		"issue-2 #2 Add ARM builds [PR · open]", "issue-3 #3 Docs typo [Issue · open]"}
	if !slices.Equal(names, want) {
		t.Fatalf("channels %q", names)
	}
	// 3 issue bodies (the empty one keeps its title), 3 comments, the
	// discussion, its comment and the reply.
	if st := eng.SourceStats("gh", true); st.Messages != 9 || res.Messages != 9 {
		t.Fatalf("stats %+v, result %+v", st, res)
	}
	var msgs []record.Message
	for _, c := range eng.Channels("gh", true) {
		if c.ID == "issue-1" {
			msgs, _, _ = eng.ChannelMessages(c.Slug, 0, 10)
		}
	}
	if len(msgs) != 3 || !strings.HasPrefix(msgs[0].Content, "Install fails on ARM\n\nIt crashes") || msgs[1].Author != "commenter" ||
		!strings.Contains(msgs[1].URL, "#issuecomment-") {
		t.Fatalf("issue 1: %+v", msgs)
	}

	// Incremental: a new comment, found from the cursor on.
	f.mu.Lock()
	f.comment(3, "Fixed in the docs.")
	f.calls = nil
	f.mu.Unlock()
	res, err = r.Crawl("gh", false)
	if err != nil || res.Messages != 1 {
		t.Fatalf("incremental: %+v %v", res, err)
	}
	f.mu.Lock()
	calls := f.calls
	f.mu.Unlock()
	for _, c := range calls {
		if strings.Contains(c, "/issues?") && !strings.Contains(c, "since=") {
			t.Fatalf("an incremental crawl listed every issue: %s", c)
		}
	}

	// Full: a comment deleted upstream goes.
	f.mu.Lock()
	f.comments = f.comments[1:] // a comment of issue 1
	f.issues[0]["comments"] = f.issues[0]["comments"].(int) - 1
	f.issues[0]["updated_at"] = f.tick()
	f.mu.Unlock()
	res, err = r.Crawl("gh", true)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("full: %+v %v", res, err)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "NEON"}); len(found.Messages) != 0 {
		t.Fatal("the deleted comment is still found")
	}
}

// TestGitHubWithoutToken: public issues are read anonymously; discussions
// (GraphQL needs a token) are reported, not fatal.
func TestGitHubWithoutToken(t *testing.T) {
	f := newFakeGitHub(t)
	eng := webEngine(t)
	cfg, _ := CheckConfig("github", map[string]any{"repo": "acme/gadget", "apiBase": f.URL, "allowPrivate": true})
	eng.PutSource(record.Source{ID: "gh", Name: "G", Type: "github", Enabled: true, Config: cfg})
	r := NewRunner(eng, RunnerOptions{})
	defer r.Close()
	res, err := r.Crawl("gh", false)
	if err != nil || res.Messages != 6 || res.Failed != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if nextLink(`<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"`) != "https://api.github.com/x?page=2" ||
		nextLink(`<https://api.github.com/x?page=5>; rel="last"`) != "" {
		t.Fatal("Link parsing")
	}
}

// FuzzGitHubIssues maps whatever an issues page holds: every issue with a
// number gives a channel and a message the engine takes.
func FuzzGitHubIssues(f *testing.F) {
	f.Add(`[{"number":1,"title":"t","body":"b","user":{"login":"a"},"state":"open","html_url":"https://github.com/a/b/issues/1","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z","pull_request":{}}]`)
	g := &github{repo: "a/b"}
	f.Fuzz(func(t *testing.T, page string) {
		var issues []ghIssue
		if json.Unmarshal([]byte(page), &issues) != nil {
			return
		}
		for i := range issues {
			ch, m := g.issue(&issues[i])
			if ch.ID != m.ChannelID || len(m.Content) > record.MaxMessageBytes || strings.ContainsAny(ch.Name, "\n\r") {
				t.Fatalf("%+v %+v", ch, m)
			}
		}
	})
}
