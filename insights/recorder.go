// Package insights records what people search and ask, and what the
// content cannot answer: per day, endpoint and kind of caller, each
// normalized query or question with its count, how often a search found
// nothing and how often an answer found no source. It keeps no client
// address, user agent, credential or answer.
//
// Recording costs a request constant work and takes no lock: Record sends
// a small event on a buffered channel without waiting (an event that does
// not fit is dropped and counted), and one goroutine aggregates them. Every
// FlushEvery it hands the entries changed since to the Store as rows of
// absolute values, which a replayed log applies idempotently, and at Close
// the rest. Insights are not acknowledged writes: a crash (kill -9) loses
// the events of the last FlushEvery at most. At most MaxEntries texts are
// kept (the least recent dropped in batches) for Retention days.
package insights

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// Endpoint is where a query came in.
type Endpoint uint8

const (
	Page     Endpoint = iota + 1 // the HTML search page
	API                          // GET /api/search
	Semantic                     // GET /api/semantic-search
	Ask                          // POST /api/ask, /api/v1/ask and the search page's ask box
	MCP                          // the MCP tools search, semantic_search and ask
)

var endpointNames = [...]string{Page: "page", API: "api", Semantic: "semantic", Ask: "ask", MCP: "mcp"}

func (e Endpoint) String() string {
	if int(e) < len(endpointNames) && endpointNames[e] != "" {
		return endpointNames[e]
	}
	return "other"
}

// Event is one search or question, as a handler saw it.
type Event struct {
	Endpoint      Endpoint
	Ask           bool // a question; else a search
	Authenticated bool // the caller had admin Basic Auth or the Bearer token
	NoResults     bool // a search that found nothing the caller may see
	Unanswered    bool // a question whose answer found no source
	Text          string
}

// Store keeps the rows of the aggregate: a store (its Insights and
// PutInsights).
type Store interface {
	Insights() []record.Insight
	PutInsights(rows []record.Insight) error
}

// Options configure a Recorder.
type Options struct {
	// Store persists the aggregate; nil keeps it in memory only (a
	// cluster's servers each keep their own).
	Store Store
	// Retention is how long entries are kept, in whole days (rounded up);
	// default DefaultRetention.
	Retention time.Duration
	// MaxEntries bounds the texts kept (entries of a day, endpoint and
	// kind of caller each); default 100,000.
	MaxEntries int
	// FlushEvery is how often changed entries are written to Store;
	// default 30 s.
	FlushEvery time.Duration
	// Buffer is how many events wait for the aggregating goroutine; more
	// are dropped. Default 8192.
	Buffer int
	Logger *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// DefaultRetention is how long insights are kept unless told otherwise.
const DefaultRetention = 90 * 24 * time.Hour

// DefaultOptions returns the options sift serve uses, without a Store.
func DefaultOptions() Options {
	return Options{Retention: DefaultRetention, MaxEntries: 100_000, FlushEvery: 30 * time.Second, Buffer: 8192}
}

// preCut bounds the text an event carries to the aggregating goroutine,
// which normalizes it: enough for MaxRunes characters of any text but one
// padded with spaces.
const preCut = 4 * MaxRunes * 4

// Recorder records events and reports on them. Its methods are safe for
// concurrent use.
type Recorder struct {
	opts    Options
	log     *slog.Logger
	events  chan Event
	syncs   chan chan struct{}
	stop    chan struct{}
	done    chan struct{}
	closed  atomic.Bool
	dropped atomic.Int64

	mu sync.RWMutex // guards tab; the aggregating goroutine writes, reports read
	// tab is the aggregate.
	tab *table
	// flushing holds a token while rows are being written to the store:
	// one write at a time, in order.
	flushing chan struct{}
	// Of the aggregating goroutine: the day it last pruned, and its
	// buffer of normalized texts.
	pruned int32
	texts  []string

	closeOnce sync.Once
	closeErr  error
}

// Open loads the aggregate from opts.Store, drops what the retention and
// the bound no longer allow (written back at the first flush) and starts
// the aggregating goroutine.
func Open(opts Options) (*Recorder, error) {
	def := DefaultOptions()
	if opts.Retention <= 0 {
		opts.Retention = def.Retention
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = def.MaxEntries
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = def.FlushEvery
	}
	if opts.Buffer <= 0 {
		opts.Buffer = def.Buffer
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Recorder{opts: opts, log: opts.Logger, events: make(chan Event, opts.Buffer), syncs: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), flushing: make(chan struct{}, 1),
		tab: newTable(opts.MaxEntries, int32(RetentionDays(opts.Retention)))}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if opts.Store != nil {
		for _, row := range opts.Store.Insights() {
			r.tab.put(keyOf(&row), counts{n: row.Count, none: row.NoResults, unanswered: row.Unanswered})
		}
	}
	r.pruned = r.today()
	r.tab.prune(r.pruned)
	if r.tab.texts > r.tab.max {
		r.tab.evict()
	}
	go r.run()
	return r, nil
}

// RetentionDays is a retention in whole days, rounded up, at least 1.
func RetentionDays(d time.Duration) int {
	const day = 24 * time.Hour
	return max(1, int((d+day-1)/day))
}

// RetentionDays is the number of days the recorder keeps.
func (r *Recorder) RetentionDays() int { return int(r.tab.keep) }

// dayOf is t's day number, UTC.
func dayOf(t time.Time) int32 { return int32(t.Unix() / 86400) }

func (r *Recorder) today() int32 { return dayOf(r.opts.Now()) }

// Record counts ev. It never waits: when the buffer is full the event is
// dropped (Dropped counts them). A text over a bound is cut (and copied,
// so the event does not keep a large string alive).
func (r *Recorder) Record(ev Event) {
	if r.closed.Load() {
		return
	}
	if len(ev.Text) > preCut {
		ev.Text = strings.Clone(textcut.Prefix(ev.Text, preCut))
	}
	select {
	case r.events <- ev:
	default:
		r.dropped.Add(1)
	}
}

// Dropped counts the events Record dropped because the buffer was full.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// run aggregates events until Close, flushing every FlushEvery.
func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(r.opts.FlushEvery)
	defer tick.Stop()
	batch := make([]Event, 0, 256)
	for {
		select {
		case ev := <-r.events:
			batch = append(batch[:0], ev)
			for len(batch) < cap(batch) && len(r.events) > 0 {
				batch = append(batch, <-r.events)
			}
			r.apply(batch)
		case ack := <-r.syncs:
			r.drain(batch)
			close(ack)
		case <-tick.C:
			if today := r.today(); today != r.pruned {
				r.mu.Lock()
				r.tab.prune(today)
				r.mu.Unlock()
				r.pruned = today
			}
			r.flush(false)
		case <-r.stop:
			r.drain(batch)
			return
		}
	}
}

// drain applies the events waiting now (not those that keep arriving).
func (r *Recorder) drain(batch []Event) {
	for n := len(r.events); n > 0; {
		batch = batch[:0]
		for ; n > 0 && len(batch) < cap(batch); n-- {
			batch = append(batch, <-r.events)
		}
		r.apply(batch)
	}
}

// apply counts a batch of events under one hold of the lock; normalizing
// happens before it.
func (r *Recorder) apply(batch []Event) {
	r.texts = r.texts[:0]
	for i := range batch {
		r.texts = append(r.texts, Normalize(batch[i].Text))
	}
	day := r.today()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range batch {
		r.tab.add(day, &batch[i], r.texts[i])
	}
}

// flush writes the changed entries to the store: in the background, or
// when wait, before it returns (and after any write in progress). A
// write in progress when the next is due delays that one to the next
// tick; a failed write marks its entries changed again.
func (r *Recorder) flush(wait bool) error {
	if r.opts.Store == nil {
		r.mu.Lock()
		clear(r.tab.dirty)
		r.mu.Unlock()
		return nil
	}
	if wait {
		r.flushing <- struct{}{}
	} else {
		select {
		case r.flushing <- struct{}{}:
		default:
			return nil
		}
	}
	r.mu.Lock()
	rows := r.tab.takeDirty()
	r.mu.Unlock()
	write := func() error {
		defer func() { <-r.flushing }()
		if len(rows) == 0 {
			return nil
		}
		err := r.opts.Store.PutInsights(rows)
		if err != nil {
			r.log.Warn("insights not written; they are tried again at the next flush", "rows", len(rows), "err", err)
			r.mu.Lock()
			r.tab.markDirty(rows)
			r.mu.Unlock()
		}
		return err
	}
	if wait {
		return write()
	}
	go write()
	return nil
}

// sync returns once the events recorded before the call are counted (or
// the recorder is closed).
func (r *Recorder) sync() {
	ack := make(chan struct{})
	select {
	case r.syncs <- ack:
		<-ack
	case <-r.done:
	}
}

// errClosed is Flush's error after Close.
var errClosed = errors.New("insights: the recorder is closed")

// Flush counts the events recorded before it and writes every changed
// entry to the store, waiting for it.
func (r *Recorder) Flush() error {
	if r.closed.Load() {
		return errClosed
	}
	r.sync()
	return r.flush(true)
}

// Close stops recording, counts the events still waiting and writes what
// changed to the store. Reports still answer after it.
func (r *Recorder) Close() error {
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		close(r.stop)
		<-r.done
		r.closeErr = r.flush(true)
	})
	return r.closeErr
}
