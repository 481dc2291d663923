package crawl

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/query"
	"github.com/sift-search/sift/record"
)

// fakeDiscourse speaks the JSON routes the connector uses (CONNECTORS.md
// §3): categories with subcategories, /latest.json by activity with 0-based
// pages and more_topics_url, /t/{id}.json with the first posts and the
// whole post stream, /t/{id}/posts.json?post_ids[]=, Api-Key auth for a
// restricted category, and one 429 with extras.wait_seconds.
type fakeDiscourse struct {
	*httptest.Server
	mu      sync.Mutex
	key     string
	topics  []map[string]any
	posts   map[int][]map[string]any // topic → posts
	limited bool
	calls   []string
	next    int
	clock   time.Time
}

func newFakeDiscourse(t *testing.T) *fakeDiscourse {
	f := &fakeDiscourse{key: "forum-key", posts: map[int][]map[string]any{}, limited: true, next: 500, clock: time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	f.topic(10, 3, "Install fails on ARM", false, "Install fails on ARM with SIGILL", "Which board?", "A Pi 2.")
	f.topic(11, 2, "Welcome to the forum", true, "Read the guidelines first.")
	f.topic(12, 4, "Staff only", false, "Internal note about the release.")
	for i := range 3 {
		f.topic(20+i, 1, fmt.Sprintf("Question %d", i), false, fmt.Sprintf("Question number %d about gaskets", i))
	}
	ps := f.posts[10]
	ps[1]["reply_to_post_number"] = 1
	ps[2]["cooked"] = `<aside class="quote" data-post="2"><blockquote><p>Which board?</p></blockquote></aside><p>A Pi 2, it lacks NEON.</p>`
	ps[2]["version"] = 2
	f.post(10, 4, "a staff whisper")                                          // post_type 4: not indexed
	f.post(10, 1, "deleted words")["deleted_at"] = "2024-03-02T00:00:00.000Z" // deleted: not indexed
	return f
}

func (f *fakeDiscourse) tick() string {
	f.clock = f.clock.Add(time.Hour)
	return f.clock.Format("2006-01-02T15:04:05.000Z")
}

func (f *fakeDiscourse) topic(id, category int, title string, pinned bool, posts ...string) {
	f.topics = append(f.topics, map[string]any{"id": id, "slug": strings.ToLower(strings.ReplaceAll(title, " ", "-")), "title": title,
		"category_id": category, "pinned": pinned})
	for _, p := range posts {
		f.post(id, 1, p)
	}
}

func (f *fakeDiscourse) post(topic, typ int, text string) map[string]any {
	f.next++
	at := f.tick()
	p := map[string]any{"id": f.next, "name": "Ana B", "username": "ana", "created_at": at, "updated_at": at,
		"cooked": "<p>" + text + "</p>", "post_number": len(f.posts[topic]) + 1, "post_type": typ, "reply_to_post_number": nil,
		"deleted_at": nil, "hidden": false, "version": 1}
	f.posts[topic] = append(f.posts[topic], p)
	for _, t := range f.topics {
		if t["id"] == topic {
			t["bumped_at"] = at
		}
	}
	return p
}

func (f *fakeDiscourse) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.URL.RequestURI())
	w.Header().Set("Content-Type", "application/json")
	staff := r.Header.Get("Api-Key") == f.key && r.Header.Get("Api-Username") == "system"
	if r.Header.Get("Api-Key") != "" && !staff {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"errors":["You are not permitted to view the requested resource. The API username or key is invalid."],"error_type":"invalid_access"}`)
		return
	}
	if f.limited && strings.HasPrefix(r.URL.Path, "/t/") {
		f.limited = false
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"errors":["You’ve performed this action too many times."],"error_type":"rate_limit","extras":{"wait_seconds":0.05}}`)
		return
	}
	notFound := func() {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"errors":["The requested URL or resource could not be found."],"error_type":"not_found"}`)
	}
	visible := func(t map[string]any) bool { return t["category_id"] != 4 || staff }
	switch p := r.URL.Path; {
	case p == "/categories.json":
		cats := []map[string]any{{"id": 1, "name": "Support", "subcategory_ids": []int{3}}, {"id": 2, "name": "Meta"}, {"id": 3, "name": "Installation"}}
		if staff {
			cats = append(cats, map[string]any{"id": 4, "name": "Staff", "read_restricted": true})
		}
		json.NewEncoder(w).Encode(map[string]any{"category_list": map[string]any{"categories": cats}})
	case p == "/latest.json":
		var list []map[string]any
		for _, t := range f.topics {
			if visible(t) {
				list = append(list, t)
			}
		}
		// Pinned first, then by activity.
		slices.SortFunc(list, func(a, b map[string]any) int {
			if a["pinned"] != b["pinned"] {
				if a["pinned"] == true {
					return -1
				}
				return 1
			}
			return strings.Compare(b["bumped_at"].(string), a["bumped_at"].(string))
		})
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		from, to := min(page*2, len(list)), min(page*2+2, len(list))
		tl := map[string]any{"topics": list[from:to], "per_page": 2}
		if to < len(list) {
			tl["more_topics_url"] = fmt.Sprintf("/latest?page=%d", page+1)
		}
		json.NewEncoder(w).Encode(map[string]any{"users": []any{}, "topic_list": tl})
	case strings.HasPrefix(p, "/t/"):
		rest := strings.TrimPrefix(p, "/t/")
		idText, more := strings.CutSuffix(rest, "/posts.json")
		idText = strings.TrimSuffix(idText, ".json")
		id, _ := strconv.Atoi(idText)
		var topic map[string]any
		for _, t := range f.topics {
			if t["id"] == id && visible(t) {
				topic = t
			}
		}
		if topic == nil {
			notFound()
			return
		}
		posts := f.posts[id]
		if more {
			want := map[string]bool{}
			for _, v := range r.URL.Query()["post_ids[]"] {
				want[v] = true
			}
			var sel []map[string]any
			for _, p := range posts {
				if want[strconv.Itoa(p["id"].(int))] {
					sel = append(sel, p)
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"id": id, "post_stream": map[string]any{"posts": sel}})
			return
		}
		stream := []int{}
		for _, p := range posts {
			stream = append(stream, p["id"].(int))
		}
		json.NewEncoder(w).Encode(map[string]any{"id": id, "title": topic["title"], "slug": topic["slug"], "category_id": topic["category_id"],
			"posts_count": len(posts), "post_stream": map[string]any{"posts": posts[:min(2, len(posts))], "stream": stream}})
	default:
		notFound()
	}
}

func discourseCrawl(t *testing.T, f *fakeDiscourse, key string) (*engine.Engine, *Runner) {
	t.Helper()
	eng := webEngine(t)
	c := map[string]any{"baseUrl": f.URL, "allowPrivate": true}
	if key != "" {
		c["apiKey"], c["apiUsername"] = key, "system"
	}
	cfg, err := CheckConfig("discourse", c)
	if err != nil {
		t.Fatal(err)
	}
	eng.PutSource(record.Source{ID: "forum", Name: "Gadget forum", Type: "discourse", Enabled: true, Config: cfg})
	r := NewRunner(eng, RunnerOptions{})
	t.Cleanup(r.Close)
	return eng, r
}

func TestDiscourseCrawl(t *testing.T) {
	f := newFakeDiscourse(t)
	eng, r := discourseCrawl(t, f, "")
	if tr, err := r.Test(t.Context(), "forum"); err != nil || !tr.OK || !strings.Contains(tr.Detail, "3 categories") {
		t.Fatalf("test: %+v %v", tr, err)
	}
	res, err := r.Crawl("forum", false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range eng.Channels("forum", true) {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	want := []string{"Meta / Welcome to the forum", "Support / Installation / Install fails on ARM", "Support / Question 0", "Support / Question 1", "Support / Question 2"}
	if !slices.Equal(names, want) {
		t.Fatalf("topics %q (the staff topic must not be seen without a key)", names)
	}
	// 3 + 1 + 3 posts; the whisper and the deleted post are left out.
	if st := eng.SourceStats("forum", true); st.Messages != 7 || res.Messages != 7 {
		t.Fatalf("stats %+v, result %+v", st, res)
	}
	var posts []record.Message
	for _, c := range eng.Channels("forum", true) {
		if c.ID == "topic-10" {
			posts, _, _ = eng.ChannelMessages(c.Slug, 0, 10)
			if c.URL != f.URL+"/t/install-fails-on-arm/10" {
				t.Errorf("topic URL %s", c.URL)
			}
		}
	}
	if len(posts) != 3 || posts[2].Content != "A Pi 2, it lacks NEON." || posts[1].ReplyTo != posts[0].ID || posts[0].AuthorName != "Ana B" ||
		posts[2].EditedAt.IsZero() || posts[2].URL != f.URL+"/t/install-fails-on-arm/10/3" {
		t.Fatalf("posts of topic 10: %+v", posts)
	}

	// Incremental: one topic gets a post; only it is read again.
	f.mu.Lock()
	f.post(21, 1, "a late answer about gaskets")
	f.calls = nil
	f.mu.Unlock()
	res, err = r.Crawl("forum", false)
	if err != nil || res.Messages != 1 {
		t.Fatalf("incremental: %+v %v", res, err)
	}
	f.mu.Lock()
	calls := f.calls
	f.mu.Unlock()
	for _, c := range calls {
		if strings.HasPrefix(c, "/t/") && !strings.HasPrefix(c, "/t/21") {
			t.Fatalf("an incremental crawl read %s", c)
		}
	}

	// Full: a post deleted upstream goes.
	f.mu.Lock()
	f.posts[20] = nil
	f.topics[3]["bumped_at"] = f.tick()
	f.posts[20] = append(f.posts[20], map[string]any{"id": 999, "username": "bob", "created_at": f.tick(), "updated_at": f.tick(),
		"cooked": "<p>replaced</p>", "post_number": 2, "post_type": 1, "version": 1})
	f.mu.Unlock()
	res, err = r.Crawl("forum", true)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("full: %+v %v", res, err)
	}
}

func TestDiscourseWithKey(t *testing.T) {
	f := newFakeDiscourse(t)
	eng, r := discourseCrawl(t, f, f.key)
	if _, err := r.Crawl("forum", false); err != nil {
		t.Fatal(err)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "internal release note"}); len(found.Messages) != 1 {
		t.Fatal("the restricted topic was not read with the key")
	}
	_, r2 := discourseCrawl(t, f, "wrong-key")
	if tr, _ := r2.Test(t.Context(), "forum"); tr.OK || !strings.Contains(tr.Error, "403") {
		t.Fatalf("a wrong key: %+v", tr)
	}
}

// FuzzDiscoursePost: any cooked HTML gives clean text, never a panic.
func FuzzDiscoursePost(f *testing.F) {
	f.Add(`<aside class="quote"><blockquote>q</blockquote></aside><p>a <b>b</b></p><pre><code>x</code></pre>`)
	f.Add("<p>\x00\x1b[31m</p>")
	f.Fuzz(func(t *testing.T, cooked string) {
		text := postText(cooked)
		if strings.ContainsFunc(text, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' }) {
			t.Fatalf("control characters in %q", text)
		}
	})
}

// TestDiscourseWatermarkAfterFailure: a crawl that fails part-way keeps the
// old watermark, so the topics it did not reach come with the next one.
func TestDiscourseWatermarkAfterFailure(t *testing.T) {
	f := newFakeDiscourse(t)
	eng, r := discourseCrawl(t, f, "")
	if _, err := r.Crawl("forum", false); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.post(20, 1, "an answer about flanges")
	f.post(21, 1, "an answer about grommets")
	f.mu.Unlock()
	// The newest topic loads, the older one fails (a 500 every time).
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/t/20") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		f.serve(w, req)
	}))
	defer broken.Close()
	eng.UpdateSource("forum", func(s *record.Source) error { s.Config["baseUrl"] = broken.URL; return nil })
	r2 := NewRunner(eng, RunnerOptions{Env: Env{backoff: time.Millisecond}})
	defer r2.Close()
	if _, err := r2.Crawl("forum", false); err == nil {
		t.Fatal("the crawl ignored a failing topic")
	}
	eng.UpdateSource("forum", func(s *record.Source) error { s.Config["baseUrl"] = f.URL; return nil })
	if _, err := r2.Crawl("forum", false); err != nil {
		t.Fatal(err)
	}
	if found, _ := eng.Search(query.SearchRequest{Query: "flanges"}); len(found.Messages) != 1 {
		t.Fatal("the topic the failed crawl did not reach was skipped for good")
	}
}
