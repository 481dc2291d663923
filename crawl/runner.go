package crawl

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
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

// ImportResult is the outcome of one import.
type ImportResult struct {
	JobID  string
	File   string // the file's name, if given
	Format string // discord, slack, telegram
	record.ImportCounts
	Changed    int // Stored + Updated; 0 when the file was imported before
	StartedAt  time.Time
	FinishedAt time.Time
}

// ImportFile is an export file to import.
type ImportFile struct {
	Name string      // as its owner named it (a path's last element is kept); may be empty
	R    io.ReaderAt // the file
	Size int64
}

// skipKeptOut counts the messages an operator keeps out of the source.
const skipKeptOut = "kept out by an operator (excluded channel or opted-out author)"

// TestResult is a connector's verdict on its source.
type TestResult struct {
	OK      bool
	Latency time.Duration
	Detail  string
	Error   string
}

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

type job struct {
	id        string
	kind      string // crawl, import, delete
	scheduled bool
	cancel    context.CancelFunc
	done      chan struct{}
}

// NewRunner returns a runner writing to sink. A crawl that a crash or kill
// left "running" is marked as interrupted.
func NewRunner(sink Sink, opts RunnerOptions) *Runner {
	opts.Tick = cmp.Or(opts.Tick, 15*time.Second)
	opts.MaxScheduled = cmp.Or(opts.MaxScheduled, 2)
	r := &Runner{sink: sink, opts: opts, log: opts.Logger, jobs: map[string]*job{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	for _, s := range sink.Sources() {
		crawl := s.LastCrawl != nil && s.LastCrawl.Status == "running"
		imp := s.LastImport != nil && s.LastImport.Status == "running"
		if !crawl && !imp {
			continue
		}
		_, err := sink.UpdateSource(s.ID, func(s *record.Source) error {
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
	return r
}

// Close cancels running jobs and waits for them.
func (r *Runner) Close() {
	r.cancel()
	r.wg.Wait()
}

// claim reserves the source for one job.
func (r *Runner) claim(sourceID, kind string, scheduled bool) (*job, context.Context, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return nil, nil, errors.New("the crawl runner is shutting down")
	}
	if j, ok := r.jobs[sourceID]; ok {
		return nil, nil, fmt.Errorf("%w (job %s, %s)", ErrBusy, j.id, j.kind)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	j := &job{id: newJobID(), kind: kind, scheduled: scheduled, cancel: cancel, done: make(chan struct{})}
	r.jobs[sourceID] = j
	r.wg.Add(1)
	return j, ctx, nil
}

func (r *Runner) release(sourceID string, j *job) {
	r.mu.Lock()
	delete(r.jobs, sourceID)
	r.mu.Unlock()
	j.cancel()
	close(j.done)
	r.wg.Done()
}

func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return "j_" + hex.EncodeToString(b[:])
}

// Running reports the job running for a source, if any: its id and kind.
func (r *Runner) Running(sourceID string) (id, kind string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[sourceID]
	if !ok {
		return "", "", false
	}
	return j.id, j.kind, true
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

// Delete removes a source with everything it produced. A crawl or import
// running for it is cancelled first, so nothing of it is written after.
func (r *Runner) Delete(sourceID string) error {
	var j *job
	for {
		var err error
		if j, _, err = r.claim(sourceID, "delete", false); err == nil {
			break
		}
		if !errors.Is(err, ErrBusy) {
			return err
		}
		r.mu.Lock()
		running := r.jobs[sourceID]
		r.mu.Unlock()
		if running != nil {
			running.cancel()
			<-running.done
		}
	}
	defer r.release(sourceID, j)
	if err := r.sink.DeleteSource(sourceID); err != nil {
		return err
	}
	r.log.Info("source deleted", "source", sourceID)
	return nil
}

// Import reads an export file (DiscordChatExporter JSON, Slack export zip,
// Telegram result.json) into a source whose type takes that format. The
// whole file is parsed and checked before anything is written, so a
// malformed file, or a DiscordChatExporter file of another server than the
// source's guildId, is refused and changes nothing; importing the same
// file again changes nothing but the record. An import that gets to
// writing is a job, recorded on the source as its LastImport, whether it
// ends well or not.
func (r *Runner) Import(sourceID string, f ImportFile) (ImportResult, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return ImportResult{}, record.ErrNotFound
	}
	want := ImportFormat(src.Type)
	if want == "" {
		return ImportResult{}, invalidConfig("sources of type %s do not take imports (discord, slack and telegram sources do)", src.Type)
	}
	format, err := DetectFile(f.R)
	if err != nil {
		return ImportResult{}, err
	}
	if format != want {
		return ImportResult{}, invalidConfig("this file is a %s export; source %s has type %s and imports %s exports", format, sourceID, src.Type, want)
	}
	return r.runImport(sourceID, f.Name, format, func() (*Export, error) {
		return ParseExport(format, f.R, f.Size, sourceID)
	})
}

// ImportExport imports an export read by ReadExport, as Import does.
func (r *Runner) ImportExport(sourceID, fileName string, x *Export) (ImportResult, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return ImportResult{}, record.ErrNotFound
	}
	if want := ImportFormat(src.Type); want != x.Format {
		return ImportResult{}, invalidConfig("this file is a %s export; source %s has type %s", x.Format, sourceID, src.Type)
	}
	return r.runImport(sourceID, fileName, x.Format, func() (*Export, error) { return x, nil })
}

// DetectFile names the export format of a file (see DetectFormat); a file
// of no format Sift reads is an ErrFormat.
func DetectFile(file io.ReaderAt) (string, error) {
	head := make([]byte, DetectBytes)
	n, err := file.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", err
	}
	format := DetectFormat(head[:n])
	if format == "" {
		return "", formatErr("not a DiscordChatExporter JSON file, a Slack export zip or a Telegram result.json")
	}
	return format, nil
}

// ReadExport detects the format of an export file and parses all of it,
// for sourceID.
func ReadExport(file io.ReaderAt, size int64, sourceID string) (*Export, error) {
	format, err := DetectFile(file)
	if err != nil {
		return nil, err
	}
	return ParseExport(format, file, size, sourceID)
}

// runImport runs one import job: it parses the file, checks it against the
// source, stores it and records the outcome on the source.
func (r *Runner) runImport(sourceID, fileName, format string, parse func() (*Export, error)) (out ImportResult, err error) {
	j, _, err := r.claim(sourceID, "import", false)
	if err != nil {
		return ImportResult{}, err
	}
	defer r.release(sourceID, j)
	if r.opts.OnImport != nil {
		defer func() { r.opts.OnImport(sourceID, out, err) }()
	}
	fileName = visibleName(path.Base(strings.ReplaceAll(fileName, `\`, "/")), 200, "")
	if fileName == "." || fileName == "/" {
		fileName = ""
	}
	out = ImportResult{JobID: j.id, File: fileName, Format: format, StartedAt: time.Now().UTC()}
	// A file refused (malformed, of another guild) changes nothing, not
	// even the record: what was refused is said to the one who sent it.
	x, err := parse()
	if err != nil {
		return out, err
	}
	guild, err := r.checkGuild(sourceID, x) // the file's, to record on a discord source without one
	if err != nil {
		return out, err
	}
	_, err = r.sink.UpdateSource(sourceID, func(s *record.Source) error {
		s.LastImport = &record.ImportInfo{JobID: j.id, Status: "running", StartedAt: out.StartedAt, File: fileName, Format: format}
		return nil
	})
	if err != nil {
		return out, err
	}
	r.log.Info("import started", "source", sourceID, "job", j.id, "format", format, "file", fileName)

	err = r.store(sourceID, x, &out)
	out.FinishedAt = time.Now().UTC()
	info := &record.ImportInfo{
		JobID: j.id, Status: "ok", StartedAt: out.StartedAt, FinishedAt: out.FinishedAt, File: fileName, Format: format,
		ImportCounts: out.ImportCounts,
	}
	if err != nil {
		info.Status, info.Error = "error", err.Error()
		for _, e := range []error{ErrInvalid, record.ErrInvalid, record.ErrConflict} {
			info.Error = strings.TrimPrefix(info.Error, e.Error()+": ")
		}
	}
	_, uerr := r.sink.UpdateSource(sourceID, func(s *record.Source) error {
		s.LastImport = info
		if err == nil && guild != "" {
			if _, set := s.Config["guildId"]; !set {
				s.Config["guildId"] = guild
			}
		}
		return nil
	})
	if uerr != nil && !errors.Is(uerr, record.ErrNotFound) {
		r.log.Error("could not record an import", "source", sourceID, "job", j.id, "err", uerr)
	}
	if err != nil {
		r.log.Warn("import failed", "source", sourceID, "job", j.id, "format", format, "file", fileName, "err", err)
		return out, err
	}
	r.log.Info("import finished", "source", sourceID, "job", j.id, "format", format, "channels", out.Channels,
		"messages", out.Messages, "stored", out.Stored, "updated", out.Updated, "unchanged", out.Unchanged,
		"skipped", out.SkippedTotal(), "duration", out.FinishedAt.Sub(out.StartedAt).Round(time.Millisecond))
	return out, nil
}

// checkGuild refuses a DiscordChatExporter file of another server than
// the discord source's guildId. Direct messages (the "Direct Messages"
// pseudo-guild, id 0) are of no server and go into any discord source.
// For a source without a guildId, it returns the file's guild id, to be
// recorded once the import succeeds.
func (r *Runner) checkGuild(sourceID string, x *Export) (string, error) {
	src, ok := r.sink.Source(sourceID)
	if !ok {
		return "", record.ErrNotFound
	}
	if src.Type != "discord" || x.GuildID == "" {
		return "", nil
	}
	want, _ := src.Config["guildId"].(string)
	switch {
	case want == "" && x.GuildID != "0" && snowflake.MatchString(x.GuildID):
		return x.GuildID, nil
	case want == "" || want == x.GuildID || x.GuildID == "0":
		return "", nil
	}
	return "", fmt.Errorf("%w: this export is of Discord guild %s, but source %s is for guild %s (config.guildId); import it into a source for guild %s",
		record.ErrConflict, x.GuildID, sourceID, want, x.GuildID)
}

// store writes an export to the engine and counts what became of each of
// its messages. A message id the file holds twice is stored once.
func (r *Runner) store(sourceID string, x *Export, out *ImportResult) error {
	skipped := maps.Clone(x.Skipped)
	if skipped == nil {
		skipped = map[string]int{}
	}
	seen := make(map[string]bool, len(x.Messages))
	msgs := x.Messages[:0:0]
	for _, m := range x.Messages {
		if seen[m.ID] {
			skipped[skipDuplicate]++
			continue
		}
		seen[m.ID] = true
		m.SourceID = sourceID
		msgs = append(msgs, m)
	}
	chans := slices.Clone(x.Channels)
	for i := range chans {
		chans[i].SourceID = sourceID
	}
	out.Channels, out.Messages = len(x.Channels), x.InFile()
	c, err := importCounted(r.sink, &Export{Channels: chans, Messages: msgs})
	if c.KeptOut > 0 {
		skipped[skipKeptOut] += c.KeptOut
	}
	out.Stored, out.Updated, out.Unchanged, out.Changed = c.New, c.Updated, c.Unchanged, c.New+c.Updated
	if len(skipped) > 0 {
		out.Skipped = skipped
	}
	return err
}

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
		r.mu.Lock()
		scheduled := 0
		for _, j := range r.jobs {
			if j.scheduled {
				scheduled++
			}
		}
		r.mu.Unlock()
		if scheduled >= r.opts.MaxScheduled {
			return
		}
		if _, err := r.start(s.ID, false, true); err != nil && !errors.Is(err, ErrBusy) {
			r.log.Warn("scheduled crawl not started", "source", s.ID, "err", err)
		}
	}
}
