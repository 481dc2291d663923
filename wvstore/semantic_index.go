package wvstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sift-search/sift/semantic"
)

// The indexer follows the change log (changes.go): one object per channel
// or document whose content changed, holding when it last did. Its
// watermark in Meta is when its last complete pass started; a pass reads
// the changes from the watermark less changeOverlap (the clocks of the
// nodes that wrote them may lag this one's, and a change is written after
// the time it holds), a page at a time in the order of their times,
// re-chunks each owner from the records as they are now, embeds the
// chunks that are new or changed, writes them, deletes the owner's others
// (all of them when the owner is gone), and at the end stores its start as
// the watermark. A change made while a pass runs is at least as late as
// its start, so the next pass reads it. What a pass re-reads from the
// overlap and this process indexed already (the same owner and time) is
// skipped.
//
// Between passes the indexer trains the built-in embedder when due
// (semantic_model.go), embeds again the chunks whose vectors another
// embedder made, and deletes the chunks of deleted sources (DeleteSource
// deletes them too; this catches those a pass wrote meanwhile).

const (
	changeOverlap   = 30 * time.Second
	indexerIdle     = time.Second     // between steps with nothing to do
	indexerErrPause = 5 * time.Second // after a step that failed
	watermarkKey    = "semantic:watermark"
)

// changesPerPage is how many changes a step takes in (more when the last
// time is shared); a variable for tests.
var changesPerPage = 100

// indexer is the indexer's state in this process.
type indexer struct {
	mu       sync.Mutex // one step at a time
	pass     *pass
	memo     map[string]int64 // owner -> the change this process indexed
	swept    string           // the catalog token of the last sweep
	reported *string          // the error last stored in Meta
	emb      atomic.Pointer[semantic.Embedding]
}

// embedding returns the indexer's chunk embedding, which the end of Run
// cancels.
func (ix *indexer) embedding(x *Semantic) *semantic.Embedding {
	if e := ix.emb.Load(); e != nil {
		return e
	}
	ix.emb.CompareAndSwap(nil, semantic.NewEmbedding(semantic.Options{Logger: x.log}))
	return ix.emb.Load()
}

// pass is a pass over the change log.
type pass struct {
	start int64 // unix micros; the watermark once done
	after int64 // the changes up to this time are done
	seen  bool
}

// change is a Change object: its owner and time.
type change struct {
	owner string
	at    int64
}

// Run indexes until ctx ends: the server runs it while it holds the
// cluster's lease "indexer".
func (x *Semantic) Run(ctx context.Context) {
	// An embedding under way ends with ctx.
	stop := context.AfterFunc(ctx, func() {
		if e := x.ix.emb.Swap(nil); e != nil {
			e.Close()
		}
	})
	defer stop()
	for ctx.Err() == nil {
		worked, err := x.Step(ctx)
		wait := time.Duration(0)
		switch {
		case err != nil && ctx.Err() == nil:
			x.log.Warn("semantic indexer", "err", err)
			wait = indexerErrPause
		case !worked:
			wait = indexerIdle
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			case <-x.wake: // a search waits for the chunks
			}
		}
	}
}

// Step does one bounded piece of the indexer's work — a page of changes,
// a training, a batch of chunks embedded again, or the deletion of a
// deleted source's chunks — and reports whether it did any.
func (x *Semantic) Step(ctx context.Context) (bool, error) {
	x.ix.mu.Lock()
	defer x.ix.mu.Unlock()
	worked, err := x.step(ctx)
	x.report(ctx, err)
	return worked, err
}

func (x *Semantic) step(ctx context.Context) (bool, error) {
	cat, err := x.s.cat(ctx)
	if err != nil {
		return false, err
	}
	swept, err := x.sweep(ctx, cat)
	if err != nil {
		return false, fmt.Errorf("delete the chunks of deleted sources: %w", err)
	}
	for _, do := range []func() (bool, error){
		func() (bool, error) { return x.followChanges(ctx) },
		func() (bool, error) { return x.trainIfDue(ctx) },
		func() (bool, error) { return x.reembed(ctx) },
	} {
		if worked, err := do(); worked || err != nil {
			return worked || swept, err
		}
	}
	return swept, nil
}

// followChanges indexes the next page of changes of the pass under way,
// or of a new one.
func (x *Semantic) followChanges(ctx context.Context) (bool, error) {
	ix := &x.ix
	if ix.pass == nil {
		w, err := x.s.watermark(ctx)
		if err != nil {
			return false, err
		}
		ix.pass = &pass{start: time.Now().UnixMicro(), after: w - changeOverlap.Microseconds() - 1}
	}
	p := ix.pass
	page, next, full, err := x.s.changesAfter(ctx, p.after)
	if err != nil {
		return false, err
	}
	// The catalog as of after the changes were read: a channel or source
	// written before a change of its content is in it.
	cat, err := x.s.cat(ctx)
	if err != nil {
		return false, err
	}
	worked, err := x.indexOwners(ctx, cat, page)
	if err != nil {
		return worked, err
	}
	p.seen = p.seen || len(page) > 0
	if x.testHookPage != nil {
		x.testHookPage()
	}
	if full {
		p.after = next
		return true, nil
	}
	if p.seen {
		if err := x.s.setWatermark(ctx, p.start); err != nil {
			return worked, err
		}
	}
	ix.pass = nil
	for owner, at := range ix.memo {
		if at < p.start-2*changeOverlap.Microseconds() {
			delete(ix.memo, owner) // older than the next pass reads
		}
	}
	return worked, nil
}

// indexOwners re-chunks the owners of changes this process has not
// indexed: a document's passages, a channel's conversation windows, or
// nothing for an owner that is gone.
func (x *Semantic) indexOwners(ctx context.Context, cat *catalog, changes []change) (bool, error) {
	var todo []change
	var docIDs []string
	for _, c := range changes {
		if at, ok := x.ix.memo[c.owner]; ok && at == c.at {
			continue
		}
		todo = append(todo, c)
		if kind, _, doc, _ := parseOwner(c.owner); kind == kindDocument {
			docIDs = append(docIDs, doc)
		}
	}
	if len(todo) == 0 {
		return false, nil
	}
	docs, err := x.s.storedDocuments(ctx, cat, uniq(docIDs))
	if err != nil {
		return false, err
	}
	made := map[string][]*chunkObj{}
	var gone []string
	for _, c := range todo {
		kind, k, doc, ok := parseOwner(c.owner)
		switch {
		case !ok:
			x.log.Warn("semantic indexer: a change of an unknown owner", "owner", c.owner)
		case kind == kindDocument:
			if d, ok := docs[doc]; ok && cat.sources[d.SourceID] != nil {
				made[c.owner] = x.s.docChunks(&d)
			} else {
				gone = append(gone, c.owner)
			}
		case cat.chans[k] == nil:
			gone = append(gone, c.owner)
		default:
			ch := cat.chans[k]
			msgs, err := x.s.keysetAll(ctx, getQuery{class: x.s.class("Message"), fields: msgFields, where: channelWhere(k), sort: timeOrder}, dateKey)
			if err != nil {
				return false, fmt.Errorf("read channel %s: %w", ch.Slug, err)
			}
			if made[c.owner], err = x.s.windowChunks(ch, msgs); err != nil {
				return false, fmt.Errorf("read channel %s: %w", ch.Slug, err)
			}
		}
	}
	if x.testHookChunked != nil {
		x.testHookChunked()
	}
	worked, err := x.writeChunks(ctx, made)
	if err != nil {
		return worked, err
	}
	for start := 0; start < len(gone); start += 100 {
		n, err := x.s.deleteWhere(ctx, x.s.class("Chunk"), anyText("owner", ownerProps(gone[start:min(start+100, len(gone))])))
		if err != nil {
			return worked, err
		}
		worked = worked || n > 0
	}
	for _, c := range todo {
		x.ix.memo[c.owner] = c.at
	}
	return worked, nil
}

// sweep deletes the chunks of sources the catalog no longer has, when the
// catalog changed since the last sweep.
func (x *Semantic) sweep(ctx context.Context, cat *catalog) (bool, error) {
	if cat.token != "" && cat.token == x.ix.swept {
		return false, nil
	}
	counts, err := x.s.countBy(ctx, x.s.class("Chunk"), "sourceId", nil)
	if err != nil {
		return false, err
	}
	worked := false
	for src, n := range counts {
		if cat.sources[src] == nil && n > 0 {
			if _, err := x.s.deleteWhere(ctx, x.s.class("Chunk"), eqText("sourceId", src)); err != nil {
				return worked, err
			}
			worked = true
		}
	}
	x.ix.swept = cat.token
	return worked, nil
}
