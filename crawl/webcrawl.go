package crawl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sift-search/sift/internal/textcut"
	"github.com/sift-search/sift/record"
)

// task is one page to fetch.
type task struct {
	u     *url.URL
	known *pageState // from the last crawl; nil for a new page
	start bool       // a configured start page: its redirect target's host joins the scope
	tries int
}

// outcome is what fetching a task gave.
type outcome struct {
	t   task
	res *response
	err error
}

// Crawl visits the start pages, the sitemap's pages and the pages of the
// last crawl, following links within scope up to maxPages. Incrementally,
// an unchanged page costs a conditional request, or none when the
// sitemap's lastmod says so; a full crawl fetches everything whole. Either
// way a page is removed only on its own verdict — 404 or 410, noindex,
// disallowed by robots.txt, out of scope — never because a fetch failed or
// the crawl stopped before reaching it.
func (w *web) Crawl(ctx context.Context, cursorText string, full bool, emit func(Batch) error) (string, error) {
	var old webCursor
	if cursorText != "" {
		if err := json.Unmarshal([]byte(cursorText), &old); err != nil {
			old = webCursor{} // an unreadable cursor costs a full fetch, nothing else
		}
	}
	if old.Pages == nil {
		old.Pages = map[string]pageState{}
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &crawlRun{
		w: w, ctx: ctx, fctx: fctx, stopFetches: cancel, full: full, old: old, emit: emit,
		next:     webCursor{Pages: map[string]pageState{}},
		queued:   map[string]bool{},
		keys:     map[string]bool{},
		hashes:   map[string]string{},
		gone:     map[string]bool{},
		lastmods: map[string]time.Time{},
	}
	return c.run()
}

// crawlRun is the state of one crawl, owned by the goroutine that runs it;
// fetches happen in workers.
type crawlRun struct {
	w           *web
	ctx         context.Context
	fctx        context.Context // the workers' fetches; cancelled when the crawl fails
	stopFetches context.CancelFunc
	full        bool
	old         webCursor
	next        webCursor
	emit        func(Batch) error

	queue    []task
	queued   map[string]bool      // addresses queued or done
	keys     map[string]bool      // document keys produced or confirmed
	hashes   map[string]string    // content hash → key, for duplicates under other addresses
	gone     map[string]bool      // keys whose page is gone or refuses indexing
	lastmods map[string]time.Time // from the sitemaps
	fetched  int                  // pages requested (or confirmed by lastmod), against maxPages
	okPages  int                  // pages that answered (200, 304)
	failures int                  // pages or sitemaps that could not be read
	batch    Batch
	pending  []string // addresses whose documents are in batch
}

func (c *crawlRun) run() (string, error) {
	for _, u := range c.w.cfg.starts {
		c.enqueue(u, true)
	}
	if err := c.readSitemaps(); err != nil {
		return "", err
	}
	// Known pages are asked again even if nothing links to them now: each
	// keeps its document until its own answer says otherwise.
	for addr := range c.old.Pages {
		if u, err := url.Parse(addr); err == nil {
			c.enqueue(u, false)
		}
	}
	tasks := make(chan task)
	results := make(chan outcome)
	workers := min(perHostConcurrency*len(c.w.cfg.hosts), 8)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range tasks {
				res, err := c.fetch(t)
				results <- outcome{t, res, err}
			}
		}()
	}
	inflight := 0
	var err error
	for err == nil && (len(c.queue) > 0 || inflight > 0) {
		var send chan task
		var head task
		if len(c.queue) > 0 && c.ctx.Err() == nil {
			send, head = tasks, c.queue[0]
		}
		select {
		case send <- head:
			c.queue = c.queue[1:]
			inflight++
		case o := <-results:
			inflight--
			if err = c.handle(o); err != nil {
				c.stopFetches() // the fetches in flight are of no use now
			}
		case <-c.ctx.Done():
			if inflight == 0 {
				err = c.ctx.Err()
			} else {
				o := <-results
				inflight--
				c.handle(o)
			}
		}
	}
	close(tasks)
	for inflight > 0 {
		<-results
		inflight--
	}
	wg.Wait()
	if err == nil {
		err = c.ctx.Err()
	}
	if err == nil && c.okPages == 0 {
		err = c.w.robotsError() // the likely reason nothing was fetched
	}
	if err == nil {
		c.finish() // removals only when the crawl went through
	}
	// What this crawl did not visit (maxPages, a cut crawl) stays as it was.
	for addr, p := range c.old.Pages {
		if _, ok := c.next.Pages[addr]; !ok && !c.gone[p.Key] {
			c.next.Pages[addr] = p
		}
	}
	if err != nil {
		c.batch.DeleteDocuments = nil
	}
	if ferr := c.flush(); err == nil {
		err = ferr
	}
	b, merr := json.Marshal(c.next)
	if merr != nil || len(b) > record.MaxCursorBytes {
		return "", errors.Join(err, fmt.Errorf("web cursor: %d pages do not fit", len(c.next.Pages)))
	}
	return string(b), err
}

// enqueue adds a page if it is in scope, new to this crawl, and within
// maxPages. A known page out of scope now (the config changed) is dropped.
func (c *crawlRun) enqueue(u *url.URL, start bool) {
	u = normalizeURL(u)
	addr := u.String()
	if c.queued[addr] || len(addr) > maxURLBytes {
		return
	}
	if !c.w.cfg.inScope(u) {
		c.drop(addr)
		return
	}
	if c.fetched >= c.w.cfg.maxPages {
		return
	}
	c.queued[addr] = true
	t := task{u: u, start: start}
	if p, ok := c.old.Pages[addr]; ok {
		t.known = &p
		// The sitemap says it has not changed since we fetched it.
		if lm, ok := c.lastmods[addr]; ok && !c.full && !lm.IsZero() && lm.Unix() <= p.Fetched && p.Hash != "" {
			c.next.Pages[addr] = p
			c.keys[p.key(addr)] = true
			c.fetched++
			c.okPages++
			return
		}
	}
	c.fetched++
	c.queue = append(c.queue, t)
}

// drop forgets a known page that is gone or may no longer be crawled.
func (c *crawlRun) drop(addr string) {
	if p, ok := c.old.Pages[addr]; ok {
		c.gone[p.key(addr)] = true
	}
}

// readSitemaps reads the configured sitemap, or those robots.txt names for
// the start pages' hosts, following indexes.
func (c *crawlRun) readSitemaps() error {
	var roots []*url.URL
	if c.w.cfg.sitemap != nil {
		roots = append(roots, c.w.cfg.sitemap)
	} else {
		seen := map[string]bool{}
		for _, s := range c.w.cfg.starts {
			if seen[s.Host] {
				continue
			}
			seen[s.Host] = true
			for _, sm := range c.w.robotsFor(c.ctx, s).sitemaps {
				if u, err := url.Parse(sm); err == nil && c.w.cfg.hosts[strings.ToLower(u.Host)] {
					roots = append(roots, u)
				}
			}
		}
	}
	files := 0
	var read func(u *url.URL, depth int) error
	read = func(u *url.URL, depth int) error {
		if files >= maxSitemapFiles || depth > maxSitemapDepth {
			return nil
		}
		files++
		if !c.w.robotsFor(c.ctx, u).allowed(requestPath(u)) {
			c.fail(u.String() + ": sitemap disallowed by robots.txt")
			return nil
		}
		res, err := c.w.polite(c.ctx, u.Host, func() (*response, error) {
			return c.w.f.get(c.ctx, u.String(), "", "", maxSitemapBytes, false)
		})
		if err == nil && res.status != http.StatusOK {
			err = fmt.Errorf("answered %d %s", res.status, http.StatusText(res.status))
		}
		var sm *sitemap
		if err == nil {
			sm, err = parseSitemap(res.body)
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return c.ctx.Err()
			}
			if depth == 0 && len(c.w.cfg.starts) == 0 {
				return fmt.Errorf("sitemap %s: %w", u, err) // nothing else to crawl
			}
			c.fail(fmt.Sprintf("sitemap %s: %v", u, err))
			return nil
		}
		for _, e := range sm.pages {
			p, err := url.Parse(e.loc)
			if err != nil {
				continue
			}
			p = normalizeURL(p)
			if !e.lastmod.IsZero() && c.w.cfg.inScope(p) && len(c.lastmods) < 2*c.w.cfg.maxPages {
				c.lastmods[p.String()] = e.lastmod
			}
			c.enqueue(p, false)
		}
		for _, e := range sm.children {
			if child, err := url.Parse(e.loc); err == nil && c.w.cfg.hosts[strings.ToLower(child.Host)] {
				if err := read(normalizeURL(child), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := read(normalizeURL(r), 0); err != nil {
			return err
		}
	}
	return nil
}

// fetch runs in a worker: robots.txt, then the page, retried after a 429
// or 503 as long as Retry-After asks for a reasonable wait.
func (c *crawlRun) fetch(t task) (*response, error) {
	rb := c.w.robotsFor(c.fctx, t.u)
	if rb.disallowAll {
		return nil, errRobotsUnavailable
	}
	if !rb.allowed(requestPath(t.u)) {
		return nil, errRobots
	}
	etag, lm := "", ""
	if t.known != nil && !c.full {
		etag, lm = t.known.ETag, t.known.LastModified
	}
	for {
		res, err := c.w.polite(c.fctx, t.u.Host, func() (*response, error) {
			return c.w.f.get(c.fctx, t.u.String(), etag, lm, maxPageBytes, false)
		})
		if err != nil || (res.status != http.StatusTooManyRequests && res.status != http.StatusServiceUnavailable) ||
			t.tries >= maxRetries || res.retryAfter > maxRetryWait {
			return res, err
		}
		t.tries++ // polite() has pushed the host's next start past Retry-After
	}
}

var (
	errRobots            = errors.New("disallowed by robots.txt")
	errRobotsUnavailable = errors.New("robots.txt could not be read, so the page may not be fetched now")
)

// maxURLBytes bounds the addresses the crawler follows (and the document
// keys they become).
const maxURLBytes = 2048

// fail records an item the crawl skipped.
func (c *crawlRun) fail(why string) {
	c.failures++
	c.batch.Failed = append(c.batch.Failed, why)
}

// handle takes one fetched page into the crawl.
func (c *crawlRun) handle(o outcome) error {
	addr := o.t.u.String()
	keep := func() { // a failure keeps what the last crawl had
		if o.t.known != nil {
			c.next.Pages[addr] = *o.t.known
			c.keys[o.t.known.key(addr)] = true
		}
	}
	switch {
	case errors.Is(o.err, errRobots):
		c.drop(addr)
		return nil
	case o.err != nil && c.fctx.Err() != nil:
		keep()
		return nil
	case o.err != nil:
		keep()
		c.fail(fmt.Sprintf("%s: %v", addr, o.err))
		return c.maybeFlush()
	}
	res := o.res
	switch {
	case res.status == http.StatusNotModified && o.t.known != nil:
		keep()
		c.okPages++
		return nil
	case res.status == http.StatusNotFound || res.status == http.StatusGone:
		c.drop(addr)
		return nil
	case res.status != http.StatusOK:
		keep()
		c.fail(fmt.Sprintf("%s: answered %d %s", addr, res.status, http.StatusText(res.status)))
		return c.maybeFlush()
	}
	c.okPages++
	final, err := url.Parse(res.finalURL)
	if err != nil {
		keep()
		c.fail(fmt.Sprintf("%s: redirected to a bad address", addr))
		return c.maybeFlush()
	}
	final = normalizeURL(final)
	if o.t.start && !c.w.cfg.hosts[final.Host] && final.Host != "" {
		c.w.cfg.hosts[final.Host] = true // example.com → www.example.com
	}
	if !c.w.cfg.inScope(final) {
		c.drop(addr) // redirected out of scope
		return nil
	}
	if f := final.String(); f != addr {
		if rb := c.w.robotsFor(c.fctx, final); !rb.disallowAll && !rb.allowed(requestPath(final)) {
			c.drop(addr) // redirected to a disallowed page
			return nil
		}
		c.queued[f] = true // reached; no need to fetch it again
	}
	page, err := parsePage(res, final)
	if err != nil {
		keep()
		c.fail(fmt.Sprintf("%s: %v", addr, err))
		return c.maybeFlush()
	}
	if !page.nofollow {
		for _, l := range page.links {
			c.enqueue(l, false)
		}
	}
	key := final.String()
	if page.canonical != nil && c.w.cfg.inScope(page.canonical) && len(page.canonical.String()) <= maxURLBytes {
		key = page.canonical.String()
	}
	if page.noindex || page.text == "" {
		c.drop(addr)
		if !c.keys[key] {
			c.gone[key] = true
		}
		return nil
	}
	sum := sha256.Sum256([]byte(page.title + "\x00" + page.text))
	hash := hex.EncodeToString(sum[:8])
	if o.t.known != nil && o.t.known.Hash == hash && !c.keys[o.t.known.key(addr)] {
		key = o.t.known.key(addr) // unchanged content keeps its document, whichever address came first
	} else if other, ok := c.hashes[hash]; ok && other != key {
		key = other // the same content under another address
	}
	state := pageState{ETag: res.etag, LastModified: res.lastModified, Hash: hash, Fetched: time.Now().Unix()}
	state.setKey(key, addr)
	if c.keys[key] {
		// Another address of a page already taken: remembered, so the next
		// crawl asks it conditionally, but not stored twice.
		c.next.Pages[addr] = state
		return nil
	}
	c.hashes[hash] = key
	c.keys[key] = true
	delete(c.gone, key)
	c.next.Pages[addr] = state
	if c.full || o.t.known == nil || o.t.known.Hash != hash || o.t.known.key(addr) != key {
		title := page.title
		if title == "" {
			title = final.Host + final.Path
		}
		c.pending = append(c.pending, addr)
		c.batch.Documents = append(c.batch.Documents, record.Document{
			Key: key, URL: key, Title: textcut.Prefix(title, record.MaxNameBytes), Content: page.text, Format: page.format,
			Language: page.lang,
		})
		if o.t.known != nil && o.t.known.key(addr) != key {
			c.gone[o.t.known.key(addr)] = true
		}
	}
	return c.maybeFlush()
}

// finish lists the documents whose pages the crawl found gone.
func (c *crawlRun) finish() {
	for key := range c.gone {
		if !c.keys[key] {
			c.batch.DeleteDocuments = append(c.batch.DeleteDocuments, key)
		}
	}
}

func (c *crawlRun) maybeFlush() error {
	if len(c.batch.Documents) >= docBatch || len(c.batch.Failed) >= docBatch {
		return c.flush()
	}
	return nil
}

func (c *crawlRun) flush() error {
	b, pending := c.batch, c.pending
	c.batch, c.pending = Batch{}, nil
	if len(b.Documents)+len(b.DeleteDocuments)+len(b.Failed) == 0 {
		return nil
	}
	err := c.emit(b)
	if err != nil {
		// Not stored: the next crawl must fetch these pages whole again.
		for _, addr := range pending {
			st := c.next.Pages[addr]
			st.Hash, st.ETag, st.LastModified, st.Fetched = "", "", "", 0
			c.next.Pages[addr] = st
		}
	}
	return err
}
