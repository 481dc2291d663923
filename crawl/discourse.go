package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/sift-search/sift/extract"
	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// The Discourse connector reads a forum through its JSON API
// (CONNECTORS.md §3): each topic is a channel named "Category / Topic
// title", its posts are the messages. Public forums need no key; with
// apiKey and apiUsername the crawl sees what that user sees.

type discourse struct {
	api  *apiClient
	base string // the forum's address, for links
}

func newDiscourse(src record.Source, env Env) (Connector, error) {
	base, _ := src.Config["baseUrl"].(string)
	c := newAPIClient(base, "", env.UserAgent, allowPrivate(src), env)
	c.headers = map[string]string{}
	if key, _ := src.Config["apiKey"].(string); key != "" {
		c.headers["Api-Key"] = key
		user, _ := src.Config["apiUsername"].(string)
		if user == "" {
			user = "system"
		}
		c.headers["Api-Username"] = user
	}
	return &discourse{api: c, base: strings.TrimRight(base, "/")}, nil
}

type dsTopic struct {
	ID         int       `json:"id"`
	Slug       string    `json:"slug"`
	Title      string    `json:"title"`
	CategoryID int       `json:"category_id"`
	PostsCount int       `json:"posts_count"`
	BumpedAt   time.Time `json:"bumped_at"`
	Pinned     bool      `json:"pinned"`
}

type dsPost struct {
	ID          int        `json:"id"`
	Name        string     `json:"name"`
	Username    string     `json:"username"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	Cooked      string     `json:"cooked"`
	PostNumber  int        `json:"post_number"`
	PostType    int        `json:"post_type"`
	ReplyTo     *int       `json:"reply_to_post_number"`
	DeletedAt   *time.Time `json:"deleted_at"`
	Hidden      bool       `json:"hidden"`
	Version     int        `json:"version"`
	UserDeleted bool       `json:"user_deleted"`
}

func (d *discourse) Test(ctx context.Context) (string, error) {
	var cats struct {
		List struct {
			Categories []struct {
				Name string `json:"name"`
			} `json:"categories"`
		} `json:"category_list"`
	}
	if err := d.api.get(ctx, "/categories.json", nil, &cats); err != nil {
		return "", err
	}
	return fmt.Sprintf("the forum answers: %d categories visible", len(cats.List.Categories)), nil
}

type discourseCursor struct {
	Bumped time.Time `json:"bumped"` // the newest bumped_at seen
}

// maxTopicPages bounds the pages of /latest.json one crawl reads.
const maxTopicPages = 10_000

func (d *discourse) Crawl(ctx context.Context, cursorText string, full bool, emit func(Batch) error) (string, error) {
	var cur discourseCursor
	if cursorText != "" && !full {
		json.Unmarshal([]byte(cursorText), &cur)
	}
	// Topics come newest first: the watermark moves only when the whole
	// list went through ("" keeps the last crawl's).
	next := cur
	save := func() string { return encodeCursor(next) }
	categories, err := d.categories(ctx)
	if err != nil {
		return "", err
	}
	// /latest.json lists topics by activity, newest first: an incremental
	// crawl stops at the first (unpinned) topic not bumped since.
	for page := 0; page < maxTopicPages; page++ {
		var res struct {
			TopicList struct {
				Topics       []dsTopic `json:"topics"`
				MoreTopicURL string    `json:"more_topics_url"`
			} `json:"topic_list"`
		}
		if err := d.api.get(ctx, "/latest.json", url.Values{"page": {strconv.Itoa(page)}}, &res); err != nil {
			return "", err
		}
		done := len(res.TopicList.Topics) == 0 || res.TopicList.MoreTopicURL == ""
		for _, t := range res.TopicList.Topics {
			if !cur.Bumped.IsZero() && !t.BumpedAt.After(cur.Bumped) {
				if t.Pinned {
					continue
				}
				done = true
				break
			}
			if t.ID <= 0 {
				continue
			}
			if err := d.topic(ctx, t, categories, full, emit); err != nil {
				if ctx.Err() != nil {
					return "", err
				}
				if isAuthError(err) || isNotFound(err) {
					emit(Batch{Failed: []string{fmt.Sprintf("topic %d: %v", t.ID, err)}})
					continue
				}
				return "", err
			}
			if t.BumpedAt.After(next.Bumped) {
				next.Bumped = t.BumpedAt
			}
		}
		if done {
			break
		}
	}
	return save(), nil
}

// categories maps category ids to names, subcategories as "Parent / Child".
func (d *discourse) categories(ctx context.Context) (map[int]string, error) {
	var res struct {
		List struct {
			Categories []struct {
				ID            int    `json:"id"`
				Name          string `json:"name"`
				SubcategoryID []int  `json:"subcategory_ids"`
			} `json:"categories"`
		} `json:"category_list"`
	}
	if err := d.api.get(ctx, "/categories.json", url.Values{"include_subcategories": {"true"}}, &res); err != nil {
		return nil, err
	}
	names := map[int]string{}
	for _, c := range res.List.Categories {
		names[c.ID] = c.Name
	}
	for _, c := range res.List.Categories {
		for _, sub := range c.SubcategoryID {
			if n, ok := names[sub]; ok && !strings.Contains(n, " / ") {
				names[sub] = c.Name + " / " + n
			}
		}
	}
	return names, nil
}

// topic reads one topic's posts: the first ones come with the topic, the
// rest by id from its post stream, in batches.
func (d *discourse) topic(ctx context.Context, t dsTopic, categories map[int]string, full bool, emit func(Batch) error) error {
	var res struct {
		ID         int    `json:"id"`
		Title      string `json:"title"`
		Slug       string `json:"slug"`
		CategoryID int    `json:"category_id"`
		PostStream struct {
			Posts  []dsPost `json:"posts"`
			Stream []int    `json:"stream"`
		} `json:"post_stream"`
	}
	if err := d.api.get(ctx, "/t/"+strconv.Itoa(t.ID)+".json", nil, &res); err != nil {
		return err
	}
	posts := res.PostStream.Posts
	have := map[int]bool{}
	for _, p := range posts {
		have[p.ID] = true
	}
	var missing []int
	for _, id := range res.PostStream.Stream {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	for start := 0; start < len(missing); start += 50 {
		q := url.Values{}
		for _, id := range missing[start:min(start+50, len(missing))] {
			q.Add("post_ids[]", strconv.Itoa(id))
		}
		var more struct {
			PostStream struct {
				Posts []dsPost `json:"posts"`
			} `json:"post_stream"`
		}
		if err := d.api.get(ctx, "/t/"+strconv.Itoa(t.ID)+"/posts.json", q, &more); err != nil {
			return err
		}
		posts = append(posts, more.PostStream.Posts...)
	}
	title := cleanLine(res.Title)
	if title == "" {
		title = cleanLine(t.Title)
	}
	name := title
	if cat := categories[res.CategoryID]; cat != "" {
		name = cat + " / " + title
	}
	slug := res.Slug
	if slug == "" {
		slug = "-"
	}
	chID := "topic-" + strconv.Itoa(t.ID)
	ch := record.Channel{ID: chID, Kind: "topic", Name: visibleName(name, 200, "topic "+strconv.Itoa(t.ID)), URL: fmt.Sprintf("%s/t/%s/%d", d.base, slug, t.ID)}
	byNumber := map[int]int{}
	for _, p := range posts {
		byNumber[p.PostNumber] = p.ID
	}
	var msgs []record.Message
	for i := range posts {
		p := &posts[i]
		if p.ID <= 0 || p.PostType != 1 || p.DeletedAt != nil || p.Hidden || p.UserDeleted || p.CreatedAt.IsZero() {
			continue // moderator actions, whispers, deleted or hidden posts
		}
		text := postText(p.Cooked)
		if text == "" {
			continue
		}
		m := record.Message{
			ChannelID: chID, ID: "post-" + strconv.Itoa(p.ID), Author: p.Username, Content: textcut.Prefix(text, record.MaxMessageBytes),
			Timestamp: p.CreatedAt.UTC(), URL: fmt.Sprintf("%s/t/%s/%d/%d", d.base, slug, t.ID, p.PostNumber),
		}
		if p.Name != "" && p.Name != p.Username {
			m.AuthorName = p.Name
		}
		if p.Version > 1 {
			m.EditedAt = p.UpdatedAt.UTC()
		}
		if p.ReplyTo != nil {
			if id, ok := byNumber[*p.ReplyTo]; ok {
				m.ReplyTo = "post-" + strconv.Itoa(id)
			}
		}
		msgs = append(msgs, m)
	}
	b := Batch{Channels: []record.Channel{ch}, Messages: msgs}
	// Complete only when every post of the stream came back.
	got := map[int]bool{}
	for _, p := range posts {
		got[p.ID] = true
	}
	whole := len(res.PostStream.Stream) > 0
	for _, id := range res.PostStream.Stream {
		whole = whole && got[id]
	}
	if full && whole {
		b.CompleteChannels = []string{chID}
	}
	return emit(b)
}

// postText turns a post's cooked HTML into text. The quotes of other
// posts it embeds (<aside class="quote">) and link previews (onebox
// asides) are left out, as extract leaves out every <aside>: they are
// indexed where they were written.
func postText(cooked string) string {
	doc, err := html.Parse(strings.NewReader(cooked))
	if err != nil {
		return ""
	}
	_, text := extract.HTMLNode(doc)
	return cleanText(text)
}
