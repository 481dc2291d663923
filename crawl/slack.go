package crawl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// The Slack connector reads a workspace through the Web API
// (CONNECTORS.md §2): users.list for names, conversations.list for the
// channels the bot is in, conversations.history for each, and
// conversations.replies for each thread. Messages are mapped exactly as the
// export importer maps them (ids "<channel>-<ts>", threads as channels of
// their own), so importing an export and crawling the same workspace agree.
// Private channels (is_private, is_im, is_mpim) and their threads are
// Private.

const slackAPI = "https://slack.com/api"

// slackLookback is how far before the newest message seen an incremental
// crawl looks again, so new replies to recent threads are found: a reply
// does not move its thread's parent in conversations.history.
const slackLookback = 7 * 24 * time.Hour

type slack struct {
	api      *apiClient
	pageSize int
	channels map[string]bool
}

func newSlack(src record.Source, env Env) (Connector, error) {
	token, _ := src.Config["token"].(string)
	if token == "" {
		return nil, invalidConfig("config.token is needed to crawl a slack source (a bot token, xoxb-…; without one the source takes imports only)")
	}
	base, _ := src.Config["apiBase"].(string)
	s := &slack{api: newAPIClient(cmp.Or(base, slackAPI), "Bearer "+token, env.UserAgent, allowPrivate(src), env), pageSize: 200,
		channels: configSet(src.Config, "channelIds")}
	if n, ok := src.Config["pageSize"].(float64); ok && n >= 1 {
		s.pageSize = int(n)
	}
	return s, nil
}

// slackEnvelope is what every Web API answer carries: errors come with
// HTTP 200 and ok false.
type slackEnvelope struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
	Metadata struct {
		NextCursor string `json:"next_cursor"`
	} `json:"response_metadata"`
}

// call runs a Web API method and checks ok.
func (s *slack) call(ctx context.Context, method string, q url.Values, v any) error {
	var raw json.RawMessage
	if err := s.api.get(ctx, "/"+method, q, &raw); err != nil {
		return err
	}
	var env slackEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if !env.OK {
		return fmt.Errorf("%s: %w", method, &apiError{Status: slackStatus(env.Error), Message: cmp.Or(env.Error, "not ok")})
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: decode the answer: %w", method, err)
	}
	return nil
}

// slackStatus gives Slack's auth errors the status they mean, so the
// crawl can tell "no access to this channel" from a failure.
func slackStatus(e string) int {
	switch e {
	case "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired":
		return 401
	case "not_in_channel", "missing_scope", "access_denied":
		return 403
	case "channel_not_found", "thread_not_found", "message_not_found":
		return 404
	}
	return 400
}

func (s *slack) Test(ctx context.Context) (string, error) {
	var who struct {
		Team string `json:"team"`
		User string `json:"user"`
		URL  string `json:"url"`
	}
	if err := s.call(ctx, "auth.test", nil, &who); err != nil {
		return "", err
	}
	return fmt.Sprintf("connected to %s (%s) as %s", who.Team, who.URL, who.User), nil
}

type slackCursor struct {
	Last map[string]string `json:"last"` // channel → newest ts seen
}

// maxSlackPages bounds the pages of one listing.
const maxSlackPages = 100_000

// pages calls a cursor-paginated method until the end, handing each
// answer to fn. A cursor that comes back twice, or the page cap, is an
// error: stopping there would look like the end of the list.
func (s *slack) pages(ctx context.Context, method string, q url.Values, fn func(raw json.RawMessage) error) error {
	q.Set("limit", strconv.Itoa(s.pageSize))
	used := map[string]bool{}
	for page := 0; page < maxSlackPages; page++ {
		var raw json.RawMessage
		if err := s.call(ctx, method, q, &raw); err != nil {
			return err
		}
		if err := fn(raw); err != nil {
			return err
		}
		var env slackEnvelope
		json.Unmarshal(raw, &env)
		next := env.Metadata.NextCursor
		if next == "" {
			return nil
		}
		if used[next] {
			return fmt.Errorf("%s: %w", method, errCursorStuck)
		}
		used[next] = true
		q.Set("cursor", next)
	}
	return fmt.Errorf("%s: more than %d pages", method, maxSlackPages)
}

func (s *slack) Crawl(ctx context.Context, cursorText string, full bool, emit func(Batch) error) (string, error) {
	cur := slackCursor{Last: map[string]string{}}
	if cursorText != "" && json.Unmarshal([]byte(cursorText), &cur) != nil || cur.Last == nil {
		cur.Last = map[string]string{}
	}
	save := func() string { return encodeCursor(cur) }
	users := map[string]*slackUser{}
	err := s.pages(ctx, "users.list", url.Values{}, func(raw json.RawMessage) error {
		var page struct {
			Members []slackUser `json:"members"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		for i := range page.Members {
			u := &page.Members[i]
			u.bound()
			users[u.ID] = u
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	var convs []slackConv
	err = s.pages(ctx, "conversations.list", url.Values{"types": {"public_channel,private_channel"}}, func(raw json.RawMessage) error {
		var page struct {
			Channels []slackConv `json:"channels"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		convs = append(convs, page.Channels...)
		return nil
	})
	if err != nil {
		return "", err
	}
	names, unnamed := map[string]string{}, map[string]bool{}
	for _, c := range convs {
		if c.private() {
			unnamed[c.ID] = true
		} else {
			names[c.ID] = textcut.Prefix(c.Name, maxSlackName)
		}
	}
	for _, c := range convs {
		if s.channels != nil && !s.channels[c.ID] || checkID(c.ID, record.MaxIDBytes-32) != nil {
			continue
		}
		oldest := ""
		if last, ok := slackTime(cur.Last[c.ID]); ok && !full {
			oldest = strconv.FormatFloat(float64(last.Add(-slackLookback).UnixMicro())/1e6, 'f', 6, 64)
		}
		newest, err := s.crawlChannel(ctx, c, oldest, users, names, unnamed, full, emit)
		if err != nil {
			if ctx.Err() != nil {
				return save(), err
			}
			if isAuthError(err) || isNotFound(err) {
				emit(Batch{Failed: []string{fmt.Sprintf("#%s (%s): %v", c.Name, c.ID, err)}})
				continue
			}
			return save(), err
		}
		if t, ok := slackTime(newest); ok {
			if old, ok := slackTime(cur.Last[c.ID]); !ok || t.After(old) {
				cur.Last[c.ID] = newest
			}
		}
	}
	return save(), nil
}

// crawlChannel reads one channel's history (from oldest on, if given) and
// the replies of its threads, emitting each page as it comes. It returns
// the newest ts.
func (s *slack) crawlChannel(ctx context.Context, c slackConv, oldest string, users map[string]*slackUser, names map[string]string,
	unnamed map[string]bool, full bool, emit func(Batch) error) (string, error) {
	p := &slackParser{source: "", users: users, chanNames: names, unnamed: unnamed, private: map[string]bool{c.ID: c.private()},
		seen: map[string]int{}, threads: map[string]*slackThread{}}
	topic := cmp.Or(c.Topic.Value, c.Purpose.Value)
	channel := []record.Channel{{ID: c.ID, Kind: "channel", Private: c.private(), Name: visibleName(c.Name, 200, c.ID),
		Topic: textcut.Prefix(p.render(topic), 4*record.MaxNameBytes)}}
	emitted := 0 // p.msgs[:emitted] are stored
	flush := func(chans ...record.Channel) error {
		b := Batch{Channels: chans, Messages: p.msgs[emitted:]}
		emitted = len(p.msgs)
		if len(b.Channels)+len(b.Messages) == 0 {
			return nil
		}
		return emit(b)
	}
	newest := ""
	var parents []string
	q := url.Values{"channel": {c.ID}}
	if oldest != "" {
		q.Set("oldest", oldest)
	}
	err := s.pages(ctx, "conversations.history", q, func(raw json.RawMessage) error {
		var page struct {
			Messages []slackMessage `json:"messages"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		for i := range page.Messages {
			m := &page.Messages[i]
			if m.ThreadTS != "" && m.ThreadTS != m.TS {
				continue // a broadcast reply: it comes with its thread
			}
			if err := p.add(c.ID, m, "conversations.history", i); err != nil {
				continue // a message the importer would refuse: skipped
			}
			if newer(m.TS, newest) {
				newest = m.TS
			}
			if m.ThreadTS != "" && m.ThreadTS == m.TS {
				parents = append(parents, m.TS)
			}
		}
		err := flush(channel...) // the channel with its first page, once it is readable
		channel = nil
		return err
	})
	if err != nil {
		return "", err
	}
	complete := []string{c.ID}
	for _, ts := range parents {
		err := s.pages(ctx, "conversations.replies", url.Values{"channel": {c.ID}, "ts": {ts}}, func(raw json.RawMessage) error {
			var page struct {
				Messages []slackMessage `json:"messages"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				return err
			}
			for i := range page.Messages {
				if m := &page.Messages[i]; m.TS != ts {
					p.add(c.ID, m, "conversations.replies", i)
				}
			}
			return nil
		})
		tid := c.ID + "-" + ts
		t := p.threads[tid]
		switch {
		case isNotFound(err):
			// The thread went away during the crawl: skipped, not completed.
			emit(Batch{Failed: []string{fmt.Sprintf("#%s thread %s: %v", c.Name, ts, err)}})
			continue
		case err != nil:
			return "", err
		case t == nil:
			continue // no replies after all
		}
		if err := flush(p.threadChannel(t)); err != nil {
			return "", err
		}
		complete = append(complete, tid)
	}
	if full {
		if err := emit(Batch{CompleteChannels: complete}); err != nil {
			return "", err
		}
	}
	return newest, nil
}

// newer reports whether Slack timestamp a is after b ("" is before all).
func newer(a, b string) bool {
	ta, ok := slackTime(a)
	if !ok {
		return false
	}
	tb, ok := slackTime(b)
	return !ok || ta.After(tb)
}
