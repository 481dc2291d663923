package semantic

import (
	"context"
	"time"

	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
)

// Read-your-writes. The indexer follows the store in the background, so a
// search arriving right after a write could miss it — the agent that
// uploads a document and asks about it at once. A search therefore first
// catches up: it takes the change feed in, so that every write the store
// acknowledged before it is known, up to sequence number seq, and waits
// until no document or channel changed at or before seq is left to
// chunk — helping meanwhile by doing the indexer's chunking steps itself,
// so a waiting search makes progress even when the indexer's goroutine
// gets no CPU. Changes after seq are not waited for: a channel written to
// all the time holds a search up for one re-windowing, not forever. When
// nothing is pending (the usual case) this costs one look at the feed and
// four bitmap tests. A backlog from before the feed was followed (the
// first indexing of a data dir, say) is not waited for, only reported. A
// chunk is searchable by its words as soon as it is
// indexed; its vector follows (until then BM25 alone ranks it). After
// FreshWait the search goes on with what is indexed, and says so
// (Result.Stale).
//
// The bookkeeping: each pending ref (pendSince, while taken in but not
// yet marked dirty) and each dirty ref (state.dirtySince) keeps the
// sequence number of its first change its chunks do not reflect. A step
// reads the records after the changes it marked were taken in, so once it
// applies a ref's chunks and unmarks it, every change taken in before is
// reflected; one taken in meanwhile left the ref pending again, with its
// own number.

// DefaultFreshWait is how long a search waits at most for the index to
// reach the writes acknowledged before it.
const DefaultFreshWait = 2 * time.Second

// freshPoll is how long a waiting search sleeps when the step it tried
// found nothing to do (the indexer held the work).
const freshPoll = 2 * time.Millisecond

// sinceKey keys a ref of a kind (DocumentChanged, ChannelChanged) in the
// since maps.
func sinceKey(kind follow.ChangeKind, ref uint32) uint64 { return uint64(kind)<<32 | uint64(ref) }

// notePending records a change of a document or channel taken in; the
// caller holds feedMu.
func (x *Index) notePending(c follow.Change) {
	k := sinceKey(c.Kind, c.Ref)
	if _, ok := x.pendSince[k]; !ok {
		x.pendSince[k] = c.Seq
	}
}

// markSince carries the pending refs' first changes over to the dirty
// ones as they are marked dirty; a ref dirty already keeps its earlier
// number (or none: dirty since before). The caller holds mu.
func (st *state) markSince(pend map[uint64]uint64) {
	if st.dirtySince == nil {
		st.dirtySince = make(map[uint64]uint64, len(pend))
	}
	for k, seq := range pend {
		dirty := st.dirtyDocs
		if follow.ChangeKind(k>>32) == follow.ChannelChanged {
			dirty = st.dirtyChans
		}
		if old, ok := st.dirtySince[k]; ok && old <= seq || !ok && dirty.Contains(uint32(k)) {
			continue
		}
		st.dirtySince[k] = seq
	}
}

// catchUp makes the chunk index reflect every write the store
// acknowledged before the call, or gives up after wait or when ctx ends.
// It reports whether the index is fresh: caught up, and with no backlog
// from before the feed was followed (which it does not wait for: after a
// start-up without the index's snapshot section, every search would).
func (x *Index) catchUp(ctx context.Context, wait time.Duration) bool {
	if x.indexer.takeChanges() == nil {
		return true // following nothing: nothing to wait for
	}
	x.feedMu.Lock()
	seq := x.pos
	x.feedMu.Unlock()
	deadline := time.Now().Add(wait)
	for {
		done, backlog := x.reached(seq)
		if done {
			return !backlog
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		x.wakeIndexer()
		x.indexer.takeChanges()
		x.stepMu.Lock()
		x.indexer.mergePending()
		x.stepMu.Unlock()
		if !x.indexer.chunkDocuments() && !x.indexer.windowChannels() {
			time.Sleep(freshPoll)
		}
	}
}

// reached reports whether no document or channel changed at or before
// seq is waiting to be chunked, and whether refs dirty since before the
// feed was followed are. It costs a look at the pending and dirty refs
// whose first change is known, not at the whole backlog.
func (x *Index) reached(seq uint64) (done, backlog bool) {
	x.feedMu.Lock()
	defer x.feedMu.Unlock()
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := x.st
	dirty := st.dirtyDocs.GetCardinality() + st.dirtyChans.GetCardinality()
	backlog = uint64(len(st.dirtySince)) < dirty // every entry is of a dirty ref
	for _, m := range []map[uint64]uint64{x.pendSince, st.dirtySince} {
		for _, since := range m {
			if since <= seq {
				return false, backlog
			}
		}
	}
	return true, backlog
}

// A chunk just indexed is searchable by its words at once, but its vector
// comes later (the indexer embeds in batches, a model server may take a
// while): meanwhile a fused ranking would give it no similarity and put
// it below older chunks that match the words less. A search therefore
// embeds the best of its lexical candidates that have no vector yet
// itself, with the query's embedder, and ranks them with those vectors;
// the indexer stores its own as usual.

// freshEmbedMax bounds the candidates without a vector a search embeds.
const freshEmbedMax = 16

// pendingTexts are lexical candidates without a vector yet, their texts,
// and once embedded their vectors.
type pendingTexts struct {
	ids   []uint32
	texts []string
	vecs  map[uint32][]float32
}

// pendingTexts returns the texts of the best lexical hits whose chunks
// wait for a vector in sp. The caller holds mu.RLock.
func (st *state) pendingTexts(store Store, sp *space, hits []index.Hit) pendingTexts {
	var p pendingTexts
	for _, h := range hits[:min(len(hits), freshEmbedMax)] {
		if sp.pending.Contains(h.ID) {
			p.ids = append(p.ids, h.ID)
		}
	}
	if len(p.ids) == 0 {
		return p
	}
	store.Read(func(v follow.View) {
		for _, id := range p.ids {
			title, body := chunkText(v, &st.chunks[id])
			p.texts = append(p.texts, title+"\n"+body)
		}
	})
	return p
}

// embed embeds the texts with sp's embedder, as the indexer would; on
// failure the chunks stay without a vector for this search.
func (p *pendingTexts) embed(ctx context.Context, sp *space) {
	if len(p.texts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	vecs, err := sp.emb.Embed(ctx, p.texts)
	if err != nil || len(vecs) != len(p.ids) {
		return
	}
	p.vecs = make(map[uint32][]float32, len(vecs))
	for i, id := range p.ids {
		p.vecs[id] = vecs[i]
	}
}

// vector returns the vector a search made for chunk id, or nil.
func (p *pendingTexts) vector(id uint32) []float32 { return p.vecs[id] }
