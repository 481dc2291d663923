package crawl

import (
	"context"
	"errors"
	"time"
)

// Schedule starts the crawls that are due until ctx ends: an enabled
// source with a schedule is due when its last crawl started at least that
// long ago (or never ran).
func (r *Runner) Schedule(ctx context.Context) {
	t := time.NewTicker(r.opts.Tick)
	defer t.Stop()
	for {
		r.startDue(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Runner) startDue(now time.Time) {
	for _, s := range r.sink.Sources() {
		if !s.Enabled || s.Schedule == "" || CanCrawl(s) != nil {
			continue
		}
		every, err := time.ParseDuration(s.Schedule)
		if err != nil || every <= 0 {
			continue
		}
		if s.LastCrawl != nil && now.Sub(s.LastCrawl.StartedAt) < every {
			continue
		}
		if r.scheduledJobs() >= r.opts.MaxScheduled {
			return
		}
		if _, err := r.start(s.ID, false, true); err != nil && !errors.Is(err, ErrBusy) {
			r.log.Warn("scheduled crawl not started", "source", s.ID, "err", err)
		}
	}
}
