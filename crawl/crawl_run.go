package crawl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sift-search/sift/record"
)

// Result is the outcome of one crawl.
type Result struct {
	JobID      string
	Status     string // ok, error, cancelled
	Full       bool
	Channels   int // channels touched
	Messages   int // messages new or changed
	Documents  int // documents new or changed
	Deleted    int // documents and messages removed
	Failed     int // items the connector could not fetch; the crawl went on
	StartedAt  time.Time
	FinishedAt time.Time
	Error      string
}

// TestResult is a connector's verdict on its source.
type TestResult struct {
	OK      bool
	Latency time.Duration
	Detail  string
	Error   string
}

// Crawl crawls a source and returns when the crawl ends. It runs on the
// runner's context, not the caller's: a client that stops waiting does not
// stop the crawl. A source that cannot be crawled (CanCrawl) is an
// ErrNotCrawlable, and its record is left as it was: only a crawl that
// was attempted is recorded as its LastCrawl.
func (r *Runner) Crawl(sourceID string, full bool) (Result, error) {
	if err := r.crawlable(sourceID); err != nil {
		return Result{}, err
	}
	j, ctx, err := r.claim(sourceID, "crawl", false)
	if err != nil {
		return Result{}, err
	}
	defer r.release(sourceID, j)
	return r.crawl(ctx, j, sourceID, full)
}

// Start starts a crawl in the background and returns its job id.
func (r *Runner) Start(sourceID string, full bool) (string, error) {
	return r.start(sourceID, full, false)
}

func (r *Runner) start(sourceID string, full, scheduled bool) (string, error) {
	if err := r.crawlable(sourceID); err != nil {
		return "", err
	}
	j, ctx, err := r.claim(sourceID, "crawl", scheduled)
	if err != nil {
		return "", err
	}
	go func() {
		defer r.release(sourceID, j)
		r.crawl(ctx, j, sourceID, full)
	}()
	return j.id, nil
}

func (r *Runner) crawlable(sourceID string) error {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return record.ErrNotFound
	}
	err := CanCrawl(src)
	if err != nil && Crawlable(src.Type) && r.opts.OnResult != nil {
		r.opts.OnResult(sourceID, Result{}, err)
	}
	return err
}

// CanCrawl says why src cannot be crawled (nor its connection tested) as
// it stands, or nil when it can: its type must have a crawler, and its
// settings must give the crawler what it needs (a discord or slack source
// without a token takes imports only). The error wraps ErrNotCrawlable.
// It asks nothing of the platform.
func CanCrawl(src record.Source) error {
	_, err := connector(src, Env{})
	return err
}

// connector returns the connector of src; a source it cannot crawl is an
// ErrNotCrawlable that says why.
func connector(src record.Source, env Env) (Connector, error) {
	t, ok := types[src.Type]
	switch {
	case ok && t.newer != nil:
		conn, err := t.newer(src, env)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", ErrNotCrawlable, strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		}
		return conn, nil
	case src.Type == "upload" || src.Type == "telegram":
		return nil, fmt.Errorf("%w: sources of type %s have nothing to crawl (they are fed by upload or import)", ErrNotCrawlable, src.Type)
	case ImportFormat(src.Type) != "":
		return nil, fmt.Errorf("%w: this build has no %s crawler yet; import an export with POST /api/sources/%s/import", ErrNotCrawlable, src.Type, src.ID)
	default:
		return nil, fmt.Errorf("%w: this build has no %s crawler yet", ErrNotCrawlable, src.Type)
	}
}

func (r *Runner) crawl(ctx context.Context, j *job, sourceID string, full bool) (res Result, err error) {
	if r.opts.OnResult != nil {
		defer func() { r.opts.OnResult(sourceID, res, err) }()
	}
	res = Result{JobID: j.id, Full: full, StartedAt: time.Now().UTC()}
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return Result{}, record.ErrNotFound
	}
	// Settings changed since the caller's check may leave nothing to
	// crawl: then nothing was attempted, and the record stays as it was
	// (the scheduler skips such a source).
	conn, err := connector(src, r.opts.Env)
	if err != nil {
		return Result{}, err
	}
	_, err = r.sink.UpdateSource(sourceID, func(s *record.Source) error {
		s.LastCrawl = &record.CrawlInfo{JobID: j.id, Status: "running", StartedAt: res.StartedAt}
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	r.log.Info("crawl started", "source", sourceID, "job", j.id, "full", full, "scheduled", j.scheduled)

	touched := map[string]bool{}
	var seen map[string]map[string]bool // full crawls: message ids emitted per channel
	if full {
		seen = map[string]map[string]bool{}
	}
	emit := func(b Batch) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen != nil {
			for _, m := range b.Messages {
				if seen[m.ChannelID] == nil {
					seen[m.ChannelID] = map[string]bool{}
				}
				seen[m.ChannelID][m.ID] = true
			}
		}
		if err := r.write(sourceID, b, &res, touched); err != nil {
			return err
		}
		if seen != nil {
			for _, ch := range b.CompleteChannels {
				n, err := r.removeUnseen(sourceID, ch, seen[ch])
				res.Deleted += n
				if err != nil {
					return err
				}
				delete(seen, ch)
			}
		}
		return nil
	}
	start, err := r.sink.Cursor(sourceID)
	if err != nil {
		return Result{}, err
	}
	cursor, cerr := conn.Crawl(ctx, start, full, emit)
	res.Channels = len(touched)
	res.FinishedAt = time.Now().UTC()
	res.Status = "ok"
	switch {
	case cerr != nil && ctx.Err() != nil:
		res.Status, res.Error = "cancelled", "cancelled: the source was deleted or the server is stopping"
	case cerr != nil:
		res.Status, res.Error = "error", cerr.Error()
	}
	var uerr error
	if cursor != "" {
		uerr = r.sink.SetCursor(sourceID, cursor)
	}
	if uerr != nil && !errors.Is(uerr, record.ErrNotFound) {
		r.log.Error("could not record a crawl cursor", "source", sourceID, "job", j.id, "err", uerr)
	}
	_, uerr = r.sink.UpdateSource(sourceID, func(s *record.Source) error {
		s.LastCrawl = &record.CrawlInfo{
			JobID: j.id, Status: res.Status, StartedAt: res.StartedAt, FinishedAt: res.FinishedAt,
			Channels: res.Channels, Messages: res.Messages, Documents: res.Documents, Error: res.Error,
		}
		return nil
	})
	if uerr != nil && !errors.Is(uerr, record.ErrNotFound) {
		r.log.Error("could not record a crawl", "source", sourceID, "job", j.id, "err", uerr)
	}
	log := r.log.Info
	if res.Status != "ok" {
		log = r.log.Warn
	}
	log("crawl finished", "source", sourceID, "job", j.id, "status", res.Status, "channels", res.Channels,
		"messages", res.Messages, "documents", res.Documents, "deleted", res.Deleted, "failed", res.Failed,
		"duration", res.FinishedAt.Sub(res.StartedAt).Round(time.Millisecond), "err", res.Error)
	if cerr != nil {
		return res, fmt.Errorf("%w: %v", ErrUpstream, cerr)
	}
	return res, nil
}

// write stores one batch of a crawl.
func (r *Runner) write(sourceID string, b Batch, res *Result, touched map[string]bool) error {
	for _, f := range b.Failed {
		if res.Failed < 20 {
			r.log.Warn("crawl skipped an item", "source", sourceID, "job", res.JobID, "item", f)
		}
		res.Failed++
	}
	for i := range b.Channels {
		b.Channels[i].SourceID = sourceID
		touched[b.Channels[i].ID] = true
	}
	if len(b.Channels) > 0 {
		if _, err := r.sink.PutChannels(b.Channels); err != nil {
			return err
		}
	}
	if len(b.Messages) > 0 {
		for i := range b.Messages {
			b.Messages[i].SourceID = sourceID
		}
		n, err := r.sink.PutMessages(b.Messages)
		res.Messages += n
		if err != nil {
			return err
		}
		for _, m := range b.Messages {
			touched[m.ChannelID] = true
		}
	}
	if len(b.Documents) > 0 {
		for i := range b.Documents {
			b.Documents[i].SourceID = sourceID
		}
		_, err := r.sink.PutDocuments(b.Documents)
		if errors.Is(err, record.ErrInvalid) {
			// One page the engine refuses must not cost the others.
			err = nil
			for _, d := range b.Documents {
				if _, err1 := r.sink.PutDocuments([]record.Document{d}); errors.Is(err1, record.ErrInvalid) {
					r.log.Warn("crawl skipped a document", "source", sourceID, "job", res.JobID, "key", d.Key, "err", err1)
					res.Failed++
					res.Documents--
				} else if err1 != nil {
					return err1
				}
			}
		}
		if err != nil {
			return err
		}
		res.Documents += len(b.Documents)
	}
	for _, key := range b.DeleteDocuments {
		switch err := r.sink.DeleteDocument(record.DocumentID(sourceID, key)); {
		case err == nil:
			res.Deleted++
		case !errors.Is(err, record.ErrNotFound):
			return err
		}
	}
	if len(b.DeleteMessages) > 0 {
		n, err := r.sink.DeleteMessages(sourceID, b.DeleteMessages)
		res.Deleted += n
		if err != nil {
			return err
		}
	}
	return nil
}

// removeUnseen deletes the stored messages of a channel that a full crawl
// did not find upstream.
func (r *Runner) removeUnseen(sourceID, channelID string, seen map[string]bool) (int, error) {
	ids, err := r.sink.MessageIDs(sourceID, channelID)
	if err != nil {
		return 0, nil // no such channel: nothing stored to remove
	}
	var gone []string
	for _, id := range ids {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	return r.sink.DeleteMessages(sourceID, gone)
}

// Test asks the source's connector whether it can reach its platform. A
// source that cannot be crawled (CanCrawl) gets a failed verdict saying
// why; nothing is recorded either way.
func (r *Runner) Test(ctx context.Context, sourceID string) (TestResult, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return TestResult{}, record.ErrNotFound
	}
	conn, err := connector(src, r.opts.Env)
	if err != nil {
		return TestResult{Error: err.Error()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	detail, err := conn.Test(ctx)
	out := TestResult{OK: err == nil, Latency: time.Since(start), Detail: detail}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}
