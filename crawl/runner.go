package crawl

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sift-search/sift/record"
)

// Errors of the runner, besides record.ErrNotFound for an unknown source.
var (
	// ErrBusy: a crawl, import or deletion of the source is running.
	ErrBusy = errors.New("a crawl or import of this source is already running")
	// ErrNotCrawlable: the source's type has no crawler in this build.
	ErrNotCrawlable = errors.New("this source cannot be crawled")
	// ErrUpstream wraps the failure of a platform or site during a crawl.
	ErrUpstream = errors.New("crawl failed")
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	Env    Env
	Logger *slog.Logger
	// Tick is how often the scheduler looks for due crawls (default 15 s);
	// MaxScheduled bounds scheduled crawls at once (default 2).
	Tick         time.Duration
	MaxScheduled int
	// OnResult and OnImport, when set, learn how each crawl and each
	// import that got its source ended (metrics); they must not block.
	// A crawl refused because the source's settings leave its type's
	// crawler nothing to work with (CanCrawl) reaches OnResult as one that
	// failed, though nothing was attempted nor recorded on the source.
	OnResult func(sourceID string, r Result, err error)
	OnImport func(sourceID string, r ImportResult, err error)
}

// Runner runs the crawls and imports of a store's sources, one at a time
// per source, and the scheduled crawls. It writes through its Sink only;
// searches never wait for it.
type Runner struct {
	sink Sink
	opts RunnerOptions
	log  *slog.Logger

	mu   sync.Mutex
	jobs map[string]*job // by source id

	ctx    context.Context // parent of every job; Close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewRunner returns a runner writing to sink. A crawl or import that a
// crash or kill left "running" is marked as interrupted.
func NewRunner(sink Sink, opts RunnerOptions) *Runner {
	opts.Tick = cmp.Or(opts.Tick, 15*time.Second)
	opts.MaxScheduled = cmp.Or(opts.MaxScheduled, 2)
	r := &Runner{sink: sink, opts: opts, log: opts.Logger, jobs: map[string]*job{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.markInterrupted()
	return r
}

// markInterrupted records as failed the crawls and imports that a
// previous process left "running".
func (r *Runner) markInterrupted() {
	for _, s := range r.sink.Sources() {
		crawl := s.LastCrawl != nil && s.LastCrawl.Status == "running"
		imp := s.LastImport != nil && s.LastImport.Status == "running"
		if !crawl && !imp {
			continue
		}
		_, err := r.sink.UpdateSource(s.ID, func(s *record.Source) error {
			if crawl {
				s.LastCrawl.Status, s.LastCrawl.Error = "error", "interrupted: the server stopped during the crawl"
			}
			if imp {
				s.LastImport.Status, s.LastImport.Error = "error", "interrupted: the server stopped during the import"
			}
			return nil
		})
		if err != nil {
			r.log.Warn("could not mark an interrupted crawl or import", "source", s.ID, "err", err)
		}
	}
}

// Close cancels running jobs and waits for them.
func (r *Runner) Close() {
	r.cancel()
	r.wg.Wait()
}
