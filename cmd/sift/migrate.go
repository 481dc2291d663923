package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sift-search/sift/engine"
	"github.com/sift-search/sift/record"
	"github.com/sift-search/sift/wvstore"
)

// migrateCmd copies an offline data dir into a Weaviate cluster, for a
// service that moves to STORE=weaviate. It resumes: records are written
// with deterministic object ids, so writing one again changes nothing, and
// each stage records in the cluster how far it got, so running the command
// again after an interruption goes on from there.
func migrateCmd(args []string) error {
	var m migration
	b := &binder{fs: flag.NewFlagSet("migrate", flag.ContinueOnError)}
	b.str(&m.dir, "data-dir", "DATA_DIR", "./data", "data dir to copy (no server may be running on it)")
	to := b.fs.String("to", "", "where to copy it: weaviate")
	clusterFlags(b, &m.wv, "collection-name prefix; must hold nothing yet, or this migration")
	if err := b.fs.Parse(args); err != nil {
		return err
	}
	const use = "usage: sift migrate --data-dir DIR --to weaviate --weaviate-url URL [--weaviate-namespace NS]"
	bad := checkCluster(b, &m.wv)
	if *to != "weaviate" || b.fs.NArg() > 0 {
		bad = append(bad, use)
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "\n"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m.out = os.Stdout
	return m.run(ctx)
}

// migration is one run of sift migrate.
type migration struct {
	dir string
	wv  wvstore.Options
	out io.Writer
	// batch is how many messages one write carries (default 1000).
	batch int
	// afterBatch, when set, is called after each batch of messages is
	// written and recorded, with how many this run wrote (tests stop a
	// run there).
	afterBatch func(written int)

	eng   *engine.Engine
	st    *wvstore.Store
	chans []record.Channel // the data dir's, in the order the stages copy them
}

// reportEvery is how many messages pass between progress lines (a
// variable for tests).
var reportEvery = 10000

func (m *migration) run(ctx context.Context) error {
	start := time.Now()
	dir, err := filepath.Abs(m.dir)
	if err != nil {
		return fmt.Errorf("data dir %s: %w", m.dir, err)
	}
	if m.eng, err = engine.Open(engine.Options{DataDir: dir, ReadOnly: true}); err != nil {
		return fmt.Errorf("open %s read-only: %w (stop the server on it first)", dir, err)
	}
	defer m.eng.Close()
	octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	m.st, err = wvstore.Open(octx, m.wv)
	cancel()
	if err != nil {
		return fmt.Errorf("open the cluster at %s: %w", m.wv.URL, err)
	}
	// The data dir's identity: a later run resumes only the same data, unchanged.
	seq := m.eng.Seq()
	resumed, err := m.st.BeginMigration(fmt.Sprintf("%s at sequence %d", dir, seq))
	if errors.Is(err, wvstore.ErrNamespaceInUse) {
		return fmt.Errorf("%w; migrate into an empty namespace (--weaviate-namespace)", err)
	}
	if err != nil {
		return err
	}
	verb := "migrating"
	if resumed {
		verb = "resuming the migration of"
	}
	fmt.Fprintf(m.out, "%s %s (sequence %d) into namespace %s at %s\n", verb, dir, seq, m.wv.Namespace, m.wv.URL)
	m.chans = m.eng.Channels("", true)
	slices.SortFunc(m.chans, func(a, b record.Channel) int {
		return cmp.Or(cmp.Compare(a.SourceID, b.SourceID), cmp.Compare(a.ID, b.ID))
	})
	for _, s := range []struct {
		name string
		run  func(ctx context.Context, from string) (int, error)
	}{
		{"sources", m.sources}, {"settings", m.settings}, {"channels", m.channels},
		{"messages", m.messages}, {"documents", m.documents},
	} {
		if err := m.stage(ctx, s.name, s.run); err != nil {
			return err
		}
	}
	return m.finish(start)
}

// stage runs one stage unless an earlier run finished it; run gets what
// the stage recorded of an unfinished run ("" for none) and returns how
// many records it copied.
func (m *migration) stage(ctx context.Context, name string, run func(ctx context.Context, from string) (int, error)) error {
	from, err := m.st.Progress(name)
	if err != nil {
		return err
	}
	if from == "done" {
		fmt.Fprintf(m.out, "%s: copied by an earlier run\n", name)
		return nil
	}
	start := time.Now()
	n, err := run(ctx, from)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	if err := m.st.SetProgress(name, "done"); err != nil {
		return err
	}
	took := time.Since(start)
	if n == 0 {
		fmt.Fprintf(m.out, "%s: nothing to copy\n", name)
		return nil
	}
	fmt.Fprintf(m.out, "%s: %d copied in %s (%s/s)\n", name, n, took.Round(time.Millisecond), perSecond(n, took))
	return nil
}

func (m *migration) sources(context.Context, string) (int, error) {
	srcs := m.eng.Sources()
	for _, src := range srcs {
		if _, err := m.st.PutSourceKeepingCreated(src); err != nil {
			return 0, fmt.Errorf("source %q: %w", src.ID, err)
		}
	}
	return len(srcs), nil
}

func (m *migration) settings(context.Context, string) (int, error) {
	set := m.eng.Settings()
	if len(set) == 0 {
		return 0, nil
	}
	if _, err := m.st.UpdateSettings(set); err != nil {
		return 0, err
	}
	return len(set), nil
}

// chanBatch is how many channels one write carries.
const chanBatch = 500

func (m *migration) channels(context.Context, string) (int, error) {
	for start := 0; start < len(m.chans); start += chanBatch {
		part := m.chans[start:min(start+chanBatch, len(m.chans))]
		out, err := m.st.PutChannels(part)
		if err != nil {
			return 0, err
		}
		for i := range out {
			if out[i].Slug != part[i].Slug {
				fmt.Fprintf(m.out, "channel %s of %s: slug %q is taken in the cluster; its pages move to %q\n",
					part[i].ID, part[i].SourceID, part[i].Slug, out[i].Slug)
			}
		}
		if done := start + len(part); done < len(m.chans) {
			fmt.Fprintf(m.out, "channels: %d of %d\n", done, len(m.chans))
		}
	}
	return len(m.chans), nil
}

// messages copies every channel's messages in time order, batches across
// channels. Its progress is "channel/offset": the position in m.chans and
// in that channel's messages up to which every message is written.
func (m *migration) messages(ctx context.Context, from string) (int, error) {
	ci, off := 0, 0
	if from != "" {
		a, b, ok := strings.Cut(from, "/")
		var err1, err2 error
		ci, err1 = strconv.Atoi(a)
		off, err2 = strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || ci < 0 || ci > len(m.chans) || off < 0 {
			return 0, fmt.Errorf("the recorded progress %q is not a position", from)
		}
	}
	total := m.eng.Counts(true).Messages
	done := off
	for _, c := range m.chans[:ci] {
		_, n, _ := m.eng.ChannelMessages(c.Slug, 0, 0)
		done += n
	}
	size := cmp.Or(m.batch, 1000)
	batch := make([]record.Message, 0, size)
	written, next := 0, reportEvery
	start := time.Now()
	for ci < len(m.chans) {
		if err := ctx.Err(); err != nil {
			return written, fmt.Errorf("interrupted after %d of %d messages (run the same command again to resume): %w", done, total, err)
		}
		msgs, n, err := m.eng.ChannelMessages(m.chans[ci].Slug, off, size-len(batch))
		if err != nil {
			return written, fmt.Errorf("read channel %s: %w", m.chans[ci].Slug, err)
		}
		batch = append(batch, msgs...)
		if off += len(msgs); off >= n {
			ci, off = ci+1, 0
		}
		if len(batch) < size && ci < len(m.chans) {
			continue
		}
		if len(batch) > 0 {
			if _, err := m.st.PutMessagesCounted(batch); err != nil {
				return written, fmt.Errorf("write %d messages: %w", len(batch), err)
			}
		}
		if err := m.st.SetProgress("messages", fmt.Sprintf("%d/%d", ci, off)); err != nil {
			return written, err
		}
		written, done = written+len(batch), done+len(batch)
		batch = batch[:0]
		if written >= next {
			took := time.Since(start)
			fmt.Fprintf(m.out, "messages: %d of %d (%.0f%%), %s/s\n", done, total, 100*float64(done)/float64(max(total, 1)), perSecond(written, took))
			next += reportEvery
		}
		if m.afterBatch != nil {
			m.afterBatch(written)
		}
	}
	return written, nil
}

// docBatch is how many documents one write carries (they may be large).
const docBatch = 50

// documents copies the documents in the data dir's list order; its
// progress is how many of them are written.
func (m *migration) documents(ctx context.Context, from string) (int, error) {
	off := 0
	if from != "" {
		var err error
		if off, err = strconv.Atoi(from); err != nil || off < 0 {
			return 0, fmt.Errorf("the recorded progress %q is not a count", from)
		}
	}
	written := 0
	for {
		if err := ctx.Err(); err != nil {
			return written, fmt.Errorf("interrupted after %d documents (run the same command again to resume): %w", off, err)
		}
		docs, _ := m.eng.Documents(off, docBatch, true)
		if len(docs) == 0 {
			return written, nil
		}
		out, err := m.st.PutDocuments(docs)
		if err != nil {
			return written, fmt.Errorf("write %d documents: %w", len(docs), err)
		}
		for i := range out {
			if out[i].Slug != docs[i].Slug {
				fmt.Fprintf(m.out, "document %q: slug %q is taken in the cluster; its page moves to %q\n", docs[i].Title, docs[i].Slug, out[i].Slug)
			}
		}
		off, written = off+len(docs), written+len(docs)
		if err := m.st.SetProgress("documents", strconv.Itoa(off)); err != nil {
			return written, err
		}
	}
}

// finish checks the cluster holds what the data dir holds and says how to
// serve from it.
func (m *migration) finish(start time.Time) error {
	want, got := m.eng.Counts(true), m.st.Counts(true)
	want.MessageTerms, want.DocumentTerms = 0, 0 // the memory store's only
	if got != want {
		return fmt.Errorf("the cluster holds %d sources, %d channels, %d threads, %d messages, %d documents; the data dir %d, %d, %d, %d, %d",
			got.Sources, got.Channels, got.Threads, got.Messages, got.Documents,
			want.Sources, want.Channels, want.Threads, want.Messages, want.Documents)
	}
	fmt.Fprintf(m.out, "done in %s: the cluster holds %d sources, %d channels, %d threads, %d messages, %d documents, as the data dir does\n",
		time.Since(start).Round(time.Millisecond), got.Sources, got.Channels, got.Threads, got.Messages, got.Documents)
	env := "STORE=weaviate WEAVIATE_URL=" + m.wv.URL + " WEAVIATE_NAMESPACE=" + m.wv.Namespace
	if m.wv.Replication > 1 {
		env += " WEAVIATE_REPLICATION=" + strconv.Itoa(m.wv.Replication)
	}
	if m.wv.Shards > 1 {
		env += " WEAVIATE_SHARDS=" + strconv.Itoa(m.wv.Shards)
	}
	fmt.Fprintf(m.out, "serve from the cluster (with your other settings; the semantic index is not copied, the server builds it):\n  %s sift serve\n", env)
	return nil
}

// perSecond formats n per duration d.
func perSecond(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(n)/d.Seconds(), 'f', 0, 64)
}

// clusterFlags registers the flags (and environment variables) naming a
// cluster, as sift serve reads them with STORE=weaviate.
func clusterFlags(b *binder, o *wvstore.Options, namespaceUsage string) {
	b.str(&o.URL, "weaviate-url", "WEAVIATE_URL", "", "REST address of a Weaviate node, e.g. http://10.0.0.5:8080")
	b.str(&o.GRPCAddr, "weaviate-grpc-addr", "WEAVIATE_GRPC_ADDR", "", "gRPC host:port of that node; when set, batches go over gRPC")
	b.str(&o.APIKey, "weaviate-api-key", "WEAVIATE_API_KEY", "", "API key of the cluster, if it requires one (prefer the env var)")
	b.str(&o.Namespace, "weaviate-namespace", "WEAVIATE_NAMESPACE", "Sift", namespaceUsage)
	b.int(&o.Replication, "weaviate-replication", "WEAVIATE_REPLICATION", 1, "replication factor of Sift's collections (3 survives a node down)")
	b.int(&o.Shards, "weaviate-shards", "WEAVIATE_SHARDS", 1, "shards per collection")
	b.notBool(&o.NoPhrasePairs, "weaviate-phrase-pairs", "WEAVIATE_PHRASE_PAIRS", true, phrasePairsUsage)
}

// phrasePairsUsage describes WEAVIATE_PHRASE_PAIRS.
const phrasePairsUsage = "a new cluster keeps the pairs of words that make phrase searches fast, at a fifth to a third of import speed (set when the collections are created)"

// checkCluster returns what is wrong with the flags clusterFlags read.
func checkCluster(b *binder, o *wvstore.Options) []string {
	bad := slices.Clone(b.errs)
	if o.URL == "" {
		bad = append(bad, "--weaviate-url (WEAVIATE_URL) is required")
	}
	if !validNamespace(o.Namespace) {
		bad = append(bad, fmt.Sprintf("weaviate namespace %q must be a capital letter then letters and digits, at most 32", o.Namespace))
	}
	if o.Replication < 1 || o.Replication > 16 || o.Shards < 1 || o.Shards > 1024 {
		bad = append(bad, "replication must be 1..16 and shards 1..1024")
	}
	return bad
}
