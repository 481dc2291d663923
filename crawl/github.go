package crawl

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// The GitHub connector reads a repository's issues (pull requests too)
// and their comments through the REST API, and its discussions through
// GraphQL (CONNECTORS.md §4). Each issue and each discussion is a channel;
// its body and its comments are the messages.

const githubAPI = "https://api.github.com"

type github struct {
	api  *apiClient
	repo string // owner/name
}

func newGitHub(src record.Source, env Env) (Connector, error) {
	repo, _ := src.Config["repo"].(string)
	token, _ := src.Config["token"].(string)
	base, _ := src.Config["apiBase"].(string)
	auth := ""
	if token != "" {
		auth = "Bearer " + token
	}
	c := newAPIClient(cmp.Or(base, githubAPI), auth, cmp.Or(env.UserAgent, "SiftBot"), allowPrivate(src), env)
	c.headers = map[string]string{"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
	return &github{api: c, repo: repo}, nil
}

type ghUser struct {
	Login string `json:"login"`
}

type ghIssue struct {
	Number      int             `json:"number"`
	Comments    int             `json:"comments"`
	Title       string          `json:"title"`
	Body        *string         `json:"body"`
	User        ghUser          `json:"user"`
	State       string          `json:"state"`
	HTMLURL     string          `json:"html_url"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	PullRequest json.RawMessage `json:"pull_request"`
}

type ghComment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	User      ghUser    `json:"user"`
	HTMLURL   string    `json:"html_url"`
	IssueURL  string    `json:"issue_url"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (g *github) Test(ctx context.Context) (string, error) {
	var repo struct {
		FullName string `json:"full_name"`
		Private  bool   `json:"private"`
		Issues   bool   `json:"has_issues"`
		Disc     bool   `json:"has_discussions"`
	}
	if err := g.api.get(ctx, "/repos/"+g.repo, nil, &repo); err != nil {
		return "", err
	}
	return fmt.Sprintf("found %s (issues %v, discussions %v)", repo.FullName, repo.Issues, repo.Disc), nil
}

type githubCursor struct {
	Issues      time.Time `json:"issues"`      // newest updated_at seen
	Comments    time.Time `json:"comments"`    // newest updated_at seen
	Discussions time.Time `json:"discussions"` // newest updatedAt seen
}

func (g *github) Crawl(ctx context.Context, cursorText string, full bool, emit func(Batch) error) (string, error) {
	var cur githubCursor
	if cursorText != "" && !full {
		json.Unmarshal([]byte(cursorText), &cur)
	}
	next := cur
	save := func() string { return encodeCursor(next) }
	known := map[int]bool{}    // issues whose channel was emitted in this crawl
	comments := map[int]int{}  // issue → its comment count, from the listing (full crawls)
	commented := map[int]int{} // issue → comments seen in this crawl

	// Issues, oldest update first, from the cursor on (since is inclusive:
	// the boundary one comes again, harmlessly). A watermark moves only
	// once its page is stored.
	q := url.Values{"state": {"all"}, "sort": {"updated"}, "direction": {"asc"}, "per_page": {"100"}}
	if !cur.Issues.IsZero() {
		q.Set("since", cur.Issues.UTC().Format(time.RFC3339))
	}
	err := g.pages(ctx, "/repos/"+g.repo+"/issues?"+q.Encode(), func(raw []byte) error {
		var issues []ghIssue
		if err := json.Unmarshal(raw, &issues); err != nil {
			return err
		}
		var b Batch
		latest := next.Issues
		for i := range issues {
			is := &issues[i]
			if is.Number <= 0 || is.CreatedAt.IsZero() {
				continue
			}
			ch, body := g.issue(is)
			b.Channels = append(b.Channels, ch)
			if body.Content != "" {
				b.Messages = append(b.Messages, body)
			}
			known[is.Number] = true
			comments[is.Number] = is.Comments
			if is.UpdatedAt.After(latest) {
				latest = is.UpdatedAt
			}
		}
		if err := emit(b); err != nil {
			return err
		}
		next.Issues = latest
		return nil
	})
	if err != nil {
		return save(), err
	}

	// Comments of every issue: incrementally by update from the watermark;
	// a full crawl by creation, so edits during the crawl shift no page.
	q = url.Values{"sort": {"updated"}, "direction": {"asc"}, "per_page": {"100"}}
	if full {
		q.Set("sort", "created")
	}
	if !cur.Comments.IsZero() {
		q.Set("since", cur.Comments.UTC().Format(time.RFC3339))
	}
	err = g.pages(ctx, "/repos/"+g.repo+"/issues/comments?"+q.Encode(), func(raw []byte) error {
		var list []ghComment
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		var b Batch
		latest := next.Comments
		var stop error
		for i := range list {
			c := &list[i]
			n := issueNumber(c.IssueURL)
			if n <= 0 || c.ID <= 0 || c.CreatedAt.IsZero() {
				continue
			}
			if !known[n] { // an issue this crawl has not seen: fetch it for its channel
				var is ghIssue
				if err := g.api.get(ctx, "/repos/"+g.repo+"/issues/"+strconv.Itoa(n), nil, &is); err != nil || is.Number != n {
					// Stop here: what came before is stored, the watermark
					// stays before this comment, the next crawl resumes.
					stop = fmt.Errorf("issue #%d of a comment: %v", n, cmp.Or[error](err, errors.New("the API answered another issue")))
					break
				}
				ch, _ := g.issue(&is)
				b.Channels = append(b.Channels, ch)
				known[n] = true
			}
			commented[n]++
			if c.UpdatedAt.After(latest) {
				latest = c.UpdatedAt
			}
			if strings.TrimSpace(c.Body) == "" {
				continue
			}
			m := record.Message{
				ChannelID: "issue-" + strconv.Itoa(n), ID: "comment-" + strconv.FormatInt(c.ID, 10), Author: c.User.Login,
				Content: textcut.Prefix(c.Body, record.MaxMessageBytes), Timestamp: c.CreatedAt.UTC(), URL: c.HTMLURL,
			}
			if c.UpdatedAt.After(c.CreatedAt.Add(time.Second)) {
				m.EditedAt = c.UpdatedAt.UTC()
			}
			b.Messages = append(b.Messages, m)
		}
		if err := emit(b); err != nil {
			return err
		}
		if !full {
			next.Comments = latest
		}
		return stop
	})
	if err != nil {
		return save(), err
	}
	if full {
		// An issue is complete when the listing showed all its comments
		// (a comment added or removed meanwhile waits for the next one).
		var complete []string
		for n := range known {
			if count, ok := comments[n]; ok && commented[n] == count {
				complete = append(complete, "issue-"+strconv.Itoa(n))
			}
		}
		if len(complete) > 0 {
			if err := emit(Batch{CompleteChannels: complete}); err != nil {
				return save(), err
			}
		}
		next.Comments = time.Now().UTC().Add(-time.Minute)
	}

	newest, err := g.discussions(ctx, cur.Discussions, full, emit)
	if err != nil {
		if isAuthError(err) || strings.Contains(err.Error(), "NOT_FOUND") {
			// No token (GraphQL needs one) or no discussions: issues only.
			emit(Batch{Failed: []string{"discussions: " + err.Error()}})
			return save(), nil
		}
		return save(), err
	}
	next.Discussions = newest // only after the whole list: it runs newest first
	return save(), nil
}

// issue maps an issue to its channel and its body's message.
func (g *github) issue(is *ghIssue) (record.Channel, record.Message) {
	kind, label := "issue", "Issue"
	if len(is.PullRequest) > 0 && string(is.PullRequest) != "null" {
		label = "PR"
	}
	id := "issue-" + strconv.Itoa(is.Number)
	ch := record.Channel{ID: id, Kind: kind, URL: is.HTMLURL, Topic: label + " · " + is.State,
		Name: textcut.Prefix(fmt.Sprintf("#%d %s", is.Number, cleanLine(is.Title)), 200)}
	body := ""
	if is.Body != nil {
		body = *is.Body
	}
	m := record.Message{ChannelID: id, ID: id, Author: is.User.Login, Timestamp: is.CreatedAt.UTC(), URL: is.HTMLURL,
		Content: textcut.Prefix(strings.TrimSpace(is.Title+"\n\n"+body), record.MaxMessageBytes)}
	return ch, m
}

var issueURLNumber = regexp.MustCompile(`/issues/(\d+)$`)

func issueNumber(u string) int {
	m := issueURLNumber.FindStringSubmatch(u)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// pages follows a REST list through its Link rel="next" headers. A link
// that comes back twice, or the page cap, is an error: stopping there would
// look like the end of the list.
func (g *github) pages(ctx context.Context, pathQuery string, fn func(raw []byte) error) error {
	u := g.api.base + pathQuery
	used := map[string]bool{}
	for page := 0; page < 10_000; page++ {
		var raw json.RawMessage
		h, err := g.api.do(ctx, "GET", u, nil, &raw)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.TrimPrefix(u, g.api.base), err)
		}
		if err := fn(raw); err != nil {
			return err
		}
		used[u] = true
		u = nextLink(h.Get("Link"))
		switch {
		case u == "":
			return nil
		case !strings.HasPrefix(u, g.api.base+"/"):
			return fmt.Errorf("a next page off the API: %s", u)
		case used[u]:
			return fmt.Errorf("%s: %w", pathQuery, errCursorStuck)
		}
	}
	return fmt.Errorf("%s: more than 10000 pages", pathQuery)
}

// nextLink reads rel="next" from a Link header.
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		target, params, ok := strings.Cut(part, ";")
		if ok && strings.Contains(params, `rel="next"`) {
			return strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return ""
}

const discussionsQuery = `query($owner:String!,$name:String!,$cursor:String){
  repository(owner:$owner,name:$name){
    discussions(first:50,after:$cursor,orderBy:{field:UPDATED_AT,direction:DESC}){
      pageInfo{hasNextPage endCursor}
      nodes{ id number title url body createdAt updatedAt author{login}
             category{name}
             comments(first:50){ pageInfo{hasNextPage}
               nodes{ id body createdAt url author{login}
                      replies(first:50){ pageInfo{hasNextPage} nodes{ id body createdAt url author{login} } } } } } } } }`

// ghDiscussionPage is the comments and replies read per discussion and
// comment: 50 × 50 × 50 nodes stay well inside GraphQL's 500,000.
const ghDiscussionPage = 50

type ghDiscussionNode struct {
	ID        string    `json:"id"`
	Body      string    `json:"body"`
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"createdAt"`
	Author    *ghUser   `json:"author"`
}

type ghDiscussion struct {
	ghDiscussionNode
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updatedAt"`
	Category  struct {
		Name string `json:"name"`
	} `json:"category"`
	Comments struct {
		PageInfo struct {
			HasNextPage bool `json:"hasNextPage"`
		} `json:"pageInfo"`
		Nodes []struct {
			ghDiscussionNode
			Replies struct {
				PageInfo struct {
					HasNextPage bool `json:"hasNextPage"`
				} `json:"pageInfo"`
				Nodes []ghDiscussionNode `json:"nodes"`
			} `json:"replies"`
		} `json:"nodes"`
	} `json:"comments"`
}

// discussions reads the repository's discussions, most recently updated
// first, down to the watermark.
func (g *github) discussions(ctx context.Context, since time.Time, full bool, emit func(Batch) error) (time.Time, error) {
	newest := since
	owner, name, _ := strings.Cut(g.repo, "/")
	cursor := ""
	for page := 0; page < 10_000; page++ {
		vars := map[string]any{"owner": owner, "name": name, "cursor": nil}
		if cursor != "" {
			vars["cursor"] = cursor
		}
		body, _ := json.Marshal(map[string]any{"query": discussionsQuery, "variables": vars})
		var res struct {
			Data struct {
				Repository *struct {
					Discussions struct {
						PageInfo struct {
							HasNextPage bool   `json:"hasNextPage"`
							EndCursor   string `json:"endCursor"`
						} `json:"pageInfo"`
						Nodes []ghDiscussion `json:"nodes"`
					} `json:"discussions"`
				} `json:"repository"`
			} `json:"data"`
			Errors []struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"errors"`
		}
		if _, err := g.api.do(ctx, "POST", g.api.base+"/graphql", body, &res); err != nil {
			return since, fmt.Errorf("graphql: %w", err)
		}
		if len(res.Errors) > 0 {
			return since, fmt.Errorf("graphql: %s: %s", res.Errors[0].Type, res.Errors[0].Message)
		}
		if res.Data.Repository == nil {
			return since, fmt.Errorf("graphql: NOT_FOUND: repository %s", g.repo)
		}
		d := res.Data.Repository.Discussions
		var b Batch
		done := false
		for i := range d.Nodes {
			n := &d.Nodes[i]
			if !since.IsZero() && !n.UpdatedAt.After(since) {
				done = true // older than the watermark: the rest are too
				break
			}
			if n.Number <= 0 {
				continue
			}
			if n.UpdatedAt.After(newest) {
				newest = n.UpdatedAt
			}
			id := "discussion-" + strconv.Itoa(n.Number)
			b.Channels = append(b.Channels, record.Channel{ID: id, Kind: "discussion", URL: n.URL, Topic: "Discussion · " + n.Category.Name,
				Name: textcut.Prefix(fmt.Sprintf("%s (discussion #%d)", cleanLine(n.Title), n.Number), 200)})
			add := func(x *ghDiscussionNode, msgID, replyTo string, text string) {
				if strings.TrimSpace(text) == "" || msgID == "" || x.CreatedAt.IsZero() {
					return
				}
				m := record.Message{ChannelID: id, ID: msgID, Content: textcut.Prefix(text, record.MaxMessageBytes),
					Timestamp: x.CreatedAt.UTC(), URL: x.URL, ReplyTo: replyTo}
				if x.Author != nil {
					m.Author = x.Author.Login
				}
				b.Messages = append(b.Messages, m)
			}
			add(&n.ghDiscussionNode, id, "", strings.TrimSpace(n.Title+"\n\n"+n.Body))
			cut := n.Comments.PageInfo.HasNextPage
			for j := range n.Comments.Nodes {
				c := &n.Comments.Nodes[j]
				cid := "dc-" + c.ID
				add(&c.ghDiscussionNode, cid, "", c.Body)
				for k := range c.Replies.Nodes {
					r := &c.Replies.Nodes[k]
					add(r, "dc-"+r.ID, cid, r.Body)
				}
				cut = cut || c.Replies.PageInfo.HasNextPage
			}
			switch {
			case cut:
				b.Failed = append(b.Failed, fmt.Sprintf("discussion #%d: more than %d comments or replies to one; the first are indexed", n.Number, ghDiscussionPage))
			case full:
				b.CompleteChannels = append(b.CompleteChannels, id)
			}
		}
		if err := emit(b); err != nil {
			return since, err
		}
		if done || !d.PageInfo.HasNextPage || d.PageInfo.EndCursor == "" {
			return newest, nil
		}
		if d.PageInfo.EndCursor == cursor {
			return since, fmt.Errorf("graphql discussions: %w", errCursorStuck)
		}
		cursor = d.PageInfo.EndCursor
	}
	return since, fmt.Errorf("graphql discussions: more than 10000 pages")
}
