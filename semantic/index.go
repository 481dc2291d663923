// Package semantic is semantic search layered on the store of record: it
// cuts documents into passages and channels into conversation windows
// (chunks), indexes their words, trains the built-in embedder, keeps the
// vectors of every chunk (an exact index, IVF when large), expands queries
// (HyDE or pseudo-relevance feedback) and ranks by fusing BM25 with cosine
// similarity.
//
// It follows the store: writes never wait on it. It learns what changed
// from the store's change feed, reads records through the store's view,
// and keeps its own state in the store's snapshots as a section of its own
// (follow.Follower). The store imports nothing of it, and it imports no
// store: cmd/sift opens the memory store with it (Open).
package semantic

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
)

// Options configure an Index.
type Options struct {
	// Embedder makes the vectors; nil selects the built-in embedder,
	// trained on the indexed content.
	Embedder embed.Embedder
	// Hypothesize, when set, writes a short hypothetical answer to a query
	// (HyDE); a search embeds it with the query. Without it, searches use
	// pseudo-relevance feedback from the top lexical hits.
	Hypothesize func(ctx context.Context, query string) (string, error)
	// Index holds the BM25 parameters of the chunk index; zero selects the
	// store's defaults.
	Index index.Options
	// TitleWeight is how much a title word counts; 0 selects the store's
	// default.
	TitleWeight uint8
	// FreshWait is how long a search waits at most for the index to take
	// in the writes the store acknowledged before it (fresh.go); 0 selects
	// DefaultFreshWait, a negative value never waits.
	FreshWait time.Duration
	Logger    *slog.Logger
}

// Store is what the semantic layer reads of the store of record: the
// change feed, the records by number, and when it was last written (a
// training waits for a bulk import to pause). The memory store
// (*engine.Engine) implements it.
type Store interface {
	Changes(after uint64, dst []follow.Change) []follow.Change
	Read(fn func(v follow.View))
	LastWrite() time.Time
}

// Index is the semantic index. Its methods are safe for concurrent use.
type Index struct {
	opts Options
	log  *slog.Logger

	// stepMu serialises the indexer's steps and snapshots of the section:
	// whoever holds it may change st (taking mu too). mu guards st against
	// them for searches. A step reads the store (Store.Read) under them.
	// feedMu guards taking in the change feed, which searches do too, so
	// that a change of visibility counts at once, and store, set once by
	// Follow. Lock order: stepMu, feedMu, mu, then the store's (Store.Read)
	// — never the store's before mu.
	stepMu    sync.Mutex
	mu        sync.RWMutex
	st        *state
	feedMu    sync.Mutex
	pos       uint64 // the feed is taken in up to here; guarded by feedMu
	feed      []follow.Change
	pendDocs  *roaring.Bitmap    // changed documents not yet marked dirty; guarded by feedMu
	pendChans *roaring.Bitmap    // changed channels likewise
	pendSince map[uint64]uint64  // pending ref (sinceKey) -> its first change taken in; guarded by feedMu
	loaded    bool               // a snapshot's section was read; guarded by stepMu
	an        *analysis.Analyzer // the indexer's; guarded by stepMu

	store   Store
	started atomic.Bool
	stopped atomic.Bool
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	bg      context.Context // background work's context, cancelled by Stop
	cancel  context.CancelFunc

	edits     atomic.Uint64 // changes to st, for the store's snapshots
	skipped   atomic.Int64  // chunks the embedder refused, left without a vector
	semErr    atomic.Value  // string: the indexer's last error, "" when fine
	hyde      *hydeCache
	hydeSlots chan struct{} // bounds concurrent hypothetical answers
	hydeDown  breaker       // pauses HyDE after a failure
	embedDown breaker       // pauses query embedding after a failure
	indexer   *indexer      // the background side (semindex.go)
}

// state is the semantic index's data.
type state struct {
	chunks     []chunkRec          // by chunk slot, its id in chunkIdx and the vector indexes
	chunkIdx   *index.Index        // lexical index of chunks, without positions
	docChunks  map[uint32][]uint32 // document ref -> its chunks
	chanChunks map[uint32][]uint32 // channel ref -> its conversation windows, in order
	dirtyDocs  *roaring.Bitmap     // document refs to (re)chunk
	dirtyChans *roaring.Bitmap     // channel refs to (re)window
	// dirtySince holds, per dirty ref (sinceKey), the sequence number of
	// its first change the chunks do not reflect; a dirty ref without an
	// entry has been dirty since before the feed was followed (fresh.go).
	dirtySince map[uint64]uint64
	hidden     *roaring.Bitmap // chunks whose owner callers without credentials must not see
	space      *space          // the vectors searches use; nil before the first
	next       *space          // vectors being built for a new embedder, or nil
}

func newState(opts index.Options) *state {
	return &state{
		chunkIdx:   index.New(chunkIndexOptions(opts)),
		docChunks:  make(map[uint32][]uint32),
		chanChunks: make(map[uint32][]uint32),
		dirtyDocs:  roaring.New(),
		dirtyChans: roaring.New(),
		hidden:     roaring.New(),
	}
}

// New returns an empty index, to give the store as its follower
// (engine.Options.Follower) and then to Follow it.
func New(opts Options) *Index {
	if opts.Index == (index.Options{}) {
		opts.Index = index.DefaultOptions()
	}
	if opts.TitleWeight == 0 {
		opts.TitleWeight = analysis.DefaultTitleWeight
	}
	if opts.FreshWait == 0 {
		opts.FreshWait = DefaultFreshWait
	}
	x := &Index{opts: opts, log: opts.Logger, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		hyde: newHydeCache(hydeCacheSize), hydeSlots: make(chan struct{}, hydeConcurrent)}
	if x.log == nil {
		x.log = slog.New(slog.DiscardHandler)
	}
	x.bg, x.cancel = context.WithCancel(context.Background())
	x.st = newState(opts.Index)
	x.pendDocs, x.pendChans = roaring.New(), roaring.New()
	x.pendSince = map[uint64]uint64{}
	x.semErr.Store("")
	x.indexer = &indexer{x}
	return x
}

// Open opens a store with a new index following it: open opens the store
// with the follower it is given (engine.Options.OpenWith), and the index
// then follows it. That is what sift serve and the tests run; closing the
// store stops the index. The caller fills so from the store's options
// (logger, index parameters, title weight) when they are not the defaults.
func Open[S Store](open func(follow.Follower) (S, error), so Options) (S, *Index, error) {
	x := New(so)
	s, err := open(x)
	if err != nil {
		var none S
		return none, nil, err
	}
	x.Follow(s)
	return s, x, nil
}

// Follow starts following store, whose Options.Follower x is: with no
// section read from a snapshot, every document and channel is chunked.
func (x *Index) Follow(store Store) {
	if x.started.Swap(true) {
		panic("semantic: Follow called twice")
	}
	x.feedMu.Lock()
	x.store = store
	x.feedMu.Unlock()
	x.attachEmbedder()
	x.stepMu.Lock()
	x.mu.Lock()
	store.Read(func(v follow.View) {
		if !x.loaded {
			// Nothing saved (a new store, a snapshot written before this
			// section existed, or with the semantic index off).
			for ref := range v.Documents() {
				if v.Document(ref) != nil {
					x.st.dirtyDocs.Add(ref)
				}
			}
			for ref := range v.Channels() {
				if v.Channel(ref) != nil {
					x.st.dirtyChans.Add(ref)
				}
			}
		}
		x.st.refreshHidden(v)
	})
	x.mu.Unlock()
	x.stepMu.Unlock()
	go x.indexer.loop()
}

// Section names the index's section in snapshots.
func (x *Index) Section() string { return "semantic" }

// Edits counts the index's changes, for the store's snapshots.
func (x *Index) Edits() uint64 { return x.edits.Load() }

// Changed wakes the indexer: the store's feed grew.
func (x *Index) Changed() { x.wakeIndexer() }

// Stop ends the indexer; searches keep working on what is indexed.
func (x *Index) Stop() {
	if x.stopped.Swap(true) {
		return
	}
	close(x.stop)
	x.cancel()
	if x.started.Load() {
		<-x.done
	}
}

// wakeIndexer tells the indexer there is work, without waiting.
func (x *Index) wakeIndexer() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// attachEmbedder gives a restored space of a model server's vectors the
// configured client of that server, unless its vectors have another size
// now; with another server configured, or another size, the space stays
// unusable until the indexer has refilled it.
func (x *Index) attachEmbedder() {
	x.mu.Lock()
	defer x.mu.Unlock()
	sp, emb := x.st.space, x.opts.Embedder
	if sp == nil || sp.model != nil || emb == nil || emb.Name() != sp.name {
		return
	}
	if d := emb.Dims(); d != 0 && sp.vecs != nil && sp.vecs.Dims() != d {
		x.log.Warn("the embeddings server's vectors changed size: re-embedding everything", "was", sp.vecs.Dims(), "now", d)
		return
	}
	sp.emb, sp.usable = emb, true
}
