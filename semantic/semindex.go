package semantic

import (
	"context"
	"errors"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/semantic/chunk"
	"github.com/sift-search/sift/semantic/training"
)

// The indexer runs in the background. It takes in the store's change feed,
// marking the documents and channels that changed, re-chunks them, keeps
// the chunk index current, trains the built-in embedder as the corpus
// grows, embeds new chunks, fills a new space when the embedder changes,
// and moves the vectors from an exact to an IVF index as they grow. Each
// step is short and takes the index's lock only to apply its result, so
// searches go on meanwhile; the store's writers never wait on it.

// indexer is the Index's indexing side: the background loop and its
// steps (taking in the change feed, chunking, training, embedding,
// compacting), which searches and snapshots also call to catch up.
type indexer struct{ *Index }

const (
	docsPerStep     = 64   // documents chunked per step
	msgsPerStep     = 4096 // messages re-windowed per step (at least one channel)
	EmbedBatch      = 128  // chunks embedded per step
	embedErrorPause = 5 * time.Second
)

func (x *indexer) loop() {
	defer close(x.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		for !x.stopped.Load() {
			more, err := x.indexStep()
			if err != nil {
				x.semErr.Store(err.Error())
				x.log.Warn("semantic indexer", "err", err)
				select {
				case <-x.stop:
					return
				case <-time.After(embedErrorPause):
				}
				break
			}
			x.semErr.Store("")
			if !more {
				break
			}
			x.edits.Add(1)
		}
		select {
		case <-x.stop:
			return
		case <-x.wake:
		case <-tick.C:
		}
	}
}

// indexStep does one bounded piece of work and reports whether it did any.
func (x *indexer) indexStep() (bool, error) {
	x.takeChanges()
	x.stepMu.Lock()
	x.mergePending()
	x.stepMu.Unlock()
	if x.chunkDocuments() || x.windowChannels() || x.ensureSpace() || x.trainIfDue() || x.swapSpace() {
		return true, nil
	}
	for _, next := range x.fillOrder() {
		// A space filling past ivfMin moves to int8 codes before more
		// vectors: over a long catch-up an exact index of every chunk's
		// floats holds four times the codes' memory.
		if sp := x.spaceOf(next); x.pack(sp) {
			return true, nil
		}
		if did, err := x.embedPending(next); did || err != nil {
			return did, err
		}
	}
	return x.maintainVectors(x.spaceOf(false)) || x.compactChunks(), nil
}

// fillOrder says which space gets vectors first: the current one (false),
// so searches see every chunk soon, unless it lacks most of them while a
// next one is being filled. Then the next one goes first: it replaces the
// current one once complete, and embedding the current one's chunks
// meanwhile would be work thrown away (on a first catch-up the untrained
// embedder's space is soon followed by the trained one's: at 10M
// messages, 2.66M embeddings).
func (x *indexer) fillOrder() []bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	cur, next := x.st.space, x.st.next
	if next != nil && next.usable && cur != nil && 2*cur.pending.GetCardinality() > uint64(x.st.chunkIdx.Len()) {
		return []bool{true, false}
	}
	return []bool{false, true}
}

// spaceOf returns the current space, or with next the one being filled.
func (x *indexer) spaceOf(next bool) *space {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if next {
		return x.st.next
	}
	return x.st.space
}

// testHookPack, when set, runs after pack has packed a space.
var testHookPack func()

// pack moves sp's exact index to int8 codes in a single list once it
// holds ivfMin vectors: no clustering yet (a search scans every code,
// still a quarter of the floats' memory to read), so a long catch-up
// does not train clusters at each doubling; maintainVectors trains them
// once the space is full. It reports whether it packed.
func (x *indexer) pack(sp *space) bool {
	if sp == nil {
		return false
	}
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	x.mu.RLock()
	f, ok := sp.vecs.(*ann.Flat)
	ok = ok && f.Len() >= ivfMin && (sp == x.st.space || sp == x.st.next)
	x.mu.RUnlock()
	if !ok {
		return false
	}
	packed := ann.BuildIVF(f, ann.IVFOptions{NList: 1, Sample: f.Len(), Quantize: true})
	x.mu.Lock()
	sp.vecs = packed
	x.mu.Unlock()
	if testHookPack != nil {
		testHookPack()
	}
	return true
}

// takeChanges takes in the store's change feed: visibility changes apply
// at once, changed documents and channels are kept for the indexer
// (mergePending). Searches call it too, so it never waits on a step. It
// returns the store followed, nil before Follow.
func (x *indexer) takeChanges() Store {
	x.feedMu.Lock()
	defer x.feedMu.Unlock()
	store := x.store
	if store == nil {
		return nil
	}
	x.feed = store.Changes(x.pos, x.feed[:0])
	if len(x.feed) == 0 {
		return store
	}
	type shown struct {
		change follow.Change
		hidden bool
	}
	var vis []shown
	for _, c := range x.feed {
		switch c.Kind {
		case follow.DocumentChanged:
			x.pendDocs.Add(c.Ref)
			x.notePending(c)
		case follow.ChannelChanged:
			x.pendChans.Add(c.Ref)
			x.notePending(c)
		case follow.DocumentShown, follow.ChannelShown:
			vis = append(vis, shown{change: c})
		}
	}
	x.pos = x.feed[len(x.feed)-1].Seq
	x.edits.Add(1)
	if len(vis) == 0 {
		return store
	}
	// Read how the store shows them now (a later change comes through the
	// feed again), then apply under mu: the store's lock is never taken
	// before mu.
	store.Read(func(v follow.View) {
		for i := range vis {
			if c := vis[i].change; c.Kind == follow.DocumentShown {
				vis[i].hidden = v.DocumentHidden(c.Ref)
			} else {
				vis[i].hidden = v.ChannelHidden(c.Ref)
			}
		}
	})
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.st
	for _, sh := range vis {
		chunks := st.chanChunks[sh.change.Ref]
		if sh.change.Kind == follow.DocumentShown {
			chunks = st.docChunks[sh.change.Ref]
		}
		for _, slot := range chunks {
			setBit(st.hidden, slot, sh.hidden)
			st.chunkIdx.Hide(slot, sh.hidden)
		}
	}
	return store
}

// mergePending marks the documents and channels taken in as the indexer's
// work; the caller holds stepMu.
func (x *indexer) mergePending() {
	x.feedMu.Lock()
	defer x.feedMu.Unlock()
	if x.pendDocs.IsEmpty() && x.pendChans.IsEmpty() {
		return
	}
	x.mu.Lock()
	x.st.markSince(x.pendSince)
	x.st.dirtyDocs.Or(x.pendDocs)
	x.st.dirtyChans.Or(x.pendChans)
	x.mu.Unlock()
	x.pendDocs.Clear()
	x.pendChans.Clear()
	clear(x.pendSince)
}

// appendChunk adds a chunk and indexes it; the caller holds stepMu and mu.
func (st *state) appendChunk(pc *pendingChunk) uint32 {
	slot := uint32(len(st.chunks))
	st.chunks = append(st.chunks, pc.rec)
	st.chunkIdx.Add(slot, &pc.doc, []string{sourceFacet(pc.source)})
	if pc.hidden {
		st.hidden.Add(slot)
		st.chunkIdx.Hide(slot, true)
	}
	st.space.addChunk(slot)
	st.next.addChunk(slot)
	return slot
}

// dropChunk deletes a chunk; the caller holds stepMu and mu.
func (st *state) dropChunk(slot uint32) {
	st.chunkIdx.Delete(slot)
	st.hidden.Remove(slot)
	st.chunks[slot] = chunkRec{}
	st.space.dropChunk(slot)
	st.next.dropChunk(slot)
}

// pendingChunk is a chunk made from the records, before it is applied.
type pendingChunk struct {
	rec    chunkRec
	doc    index.Doc
	source string
	hidden bool
}

// chunkDocuments (re-)chunks up to docsPerStep marked documents. The
// records are read under the store's read lock, analysed after it.
func (x *indexer) chunkDocuments() bool {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	st := x.st
	if st.dirtyDocs.IsEmpty() {
		return false
	}
	var refs []uint32
	it := st.dirtyDocs.Iterator()
	for it.HasNext() && len(refs) < docsPerStep {
		refs = append(refs, it.Next())
	}
	type docText struct {
		title, content, source string
		hidden                 bool
	}
	docs := make([]*docText, len(refs))
	x.store.Read(func(v follow.View) {
		for i, ref := range refs {
			if d := v.Document(ref); d != nil {
				docs[i] = &docText{d.Title, d.Content, d.SourceID, v.DocumentHidden(ref)}
			}
		}
	})
	a := x.analyzer()
	made := make([][]pendingChunk, len(refs))
	for i, ref := range refs {
		d := docs[i]
		if d == nil {
			continue
		}
		for _, sp := range chunk.SplitDocument(d.content) {
			pc := pendingChunk{rec: chunkRec{kind: chunkDoc, owner: ref, start: int32(sp.Start), end: int32(sp.End), heading: sp.Heading},
				source: d.source, hidden: d.hidden}
			title := d.title
			if sp.Heading != "" && sp.Heading != d.title {
				title += " — " + sp.Heading
			}
			a.Document(&pc.doc, title, d.content[sp.Start:sp.End], x.opts.TitleWeight)
			made[i] = append(made[i], pc)
		}
	}
	if testHookChunked != nil {
		testHookChunked()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var fresh []*pendingChunk
	for i := range made {
		for j := range made[i] {
			fresh = append(fresh, &made[i][j])
		}
	}
	x.freshHidden(fresh)
	for i, ref := range refs {
		for _, c := range st.docChunks[ref] {
			st.dropChunk(c)
		}
		delete(st.docChunks, ref)
		for j := range made[i] {
			st.docChunks[ref] = append(st.docChunks[ref], st.appendChunk(&made[i][j]))
		}
		st.dirtyDocs.Remove(ref)
		delete(st.dirtySince, sinceKey(follow.DocumentChanged, ref))
	}
	return true
}

// testHookChunked, when set, runs between making a step's document chunks
// and applying them.
var testHookChunked func()

// freshHidden sets whether new chunks are hidden as the store shows their
// document or channel now, just before they are applied: a change of
// visibility taken in while they were being made touched only the old
// chunks. The caller holds mu (then the store's lock is taken: the order).
func (x *indexer) freshHidden(pcs []*pendingChunk) {
	if len(pcs) == 0 {
		return
	}
	x.store.Read(func(v follow.View) {
		for _, pc := range pcs {
			pc.hidden = ownerHidden(v, &pc.rec)
		}
	})
}

// analyzer returns the indexer's analyzer; the caller holds stepMu.
func (x *indexer) analyzer() *analysis.Analyzer {
	if x.an == nil {
		x.an = analysis.New(0)
	}
	return x.an
}

// windowChannels recomputes the conversation windows of marked channels,
// keeping the chunks of windows that did not change.
func (x *indexer) windowChannels() bool {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	st := x.st
	if st.dirtyChans.IsEmpty() {
		return false
	}
	type channel struct {
		ref          uint32
		live         bool
		name, source string
		hidden       bool
		refs         []uint32
		texts        []follow.MessageText
	}
	var chans []channel
	x.store.Read(func(v follow.View) {
		budget := msgsPerStep
		it := st.dirtyChans.Iterator()
		for it.HasNext() && (len(chans) == 0 || budget > 0) {
			c := channel{ref: it.Next()}
			if ch := v.Channel(c.ref); ch != nil {
				c.live, c.name, c.source, c.hidden = true, ch.Name, ch.SourceID, v.ChannelHidden(c.ref)
				c.refs = append([]uint32(nil), v.ChannelMessages(c.ref)...)
				c.texts = make([]follow.MessageText, len(c.refs))
				for i, m := range c.refs {
					c.texts[i] = v.MessageText(m)
				}
				budget -= len(c.refs)
			}
			chans = append(chans, c)
		}
	})
	a := x.analyzer()
	type plan struct {
		ch   uint32
		keep map[uint32]bool // old chunks reused
		wins []uint32        // chunk slot per window, once applied
		made []*pendingChunk // per window: a new chunk, or nil for a reused one
	}
	var plans []plan
	var body []byte
	for _, c := range chans {
		p := plan{ch: c.ref, keep: map[uint32]bool{}}
		var wins [][]uint32
		if c.live {
			wins = chunk.Windows(c.refs, c.texts)
		}
		old := map[uint32]uint32{} // first message -> chunk
		for _, slot := range st.chanChunks[c.ref] {
			old[st.chunks[slot].msgs[0]] = slot
		}
		at := 0 // where the window starts in c.refs
		for _, msgs := range wins {
			texts := c.texts[at : at+len(msgs)]
			at += len(msgs)
			if slot, ok := old[msgs[0]]; ok && slicesEqual(st.chunks[slot].msgs, msgs) {
				p.keep[slot] = true
				p.wins = append(p.wins, slot)
				p.made = append(p.made, nil)
				continue
			}
			pc := &pendingChunk{rec: chunkRec{kind: chunkChat, owner: c.ref, msgs: msgs}, source: c.source, hidden: c.hidden}
			body = body[:0]
			for _, t := range texts {
				if len(body) > 0 {
					body = append(body, '\n')
				}
				body = append(body, t.Author...)
				body = append(body, ": "...)
				body = append(body, t.Content...)
			}
			a.Document(&pc.doc, c.name, string(body), x.opts.TitleWeight)
			p.wins = append(p.wins, 0)
			p.made = append(p.made, pc)
		}
		plans = append(plans, p)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var fresh []*pendingChunk
	for _, p := range plans {
		for _, pc := range p.made {
			if pc != nil {
				fresh = append(fresh, pc)
			}
		}
	}
	x.freshHidden(fresh)
	for _, p := range plans {
		for _, c := range st.chanChunks[p.ch] {
			if !p.keep[c] {
				st.dropChunk(c)
			}
		}
		for w, pc := range p.made {
			if pc != nil {
				p.wins[w] = st.appendChunk(pc)
			}
		}
		if len(p.wins) == 0 {
			delete(st.chanChunks, p.ch)
		} else {
			st.chanChunks[p.ch] = p.wins
		}
		st.dirtyChans.Remove(p.ch)
		delete(st.dirtySince, sinceKey(follow.ChannelChanged, p.ch))
	}
	return true
}

func slicesEqual(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// configuredEmbedder is the embedder the options name: a model server's, or
// the built-in one (untrained until trainIfDue trains it).
func (x *indexer) configuredEmbedder() embed.Embedder {
	if x.opts.Embedder != nil {
		return x.opts.Embedder
	}
	return embed.Untrained()
}

// ensureSpace creates the first space, or a next one when the configured
// embedder is not the current space's.
func (x *indexer) ensureSpace() bool {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	st := x.st
	if st.space != nil && !x.needsNewSpace() {
		return false
	}
	sp := newSpace(x.configuredEmbedder())
	x.mu.Lock()
	if st.space == nil {
		st.space = sp
	} else {
		st.next = sp // the vectors were made by another embedder than the configured one
	}
	x.markAllPending(sp)
	x.mu.Unlock()
	return true
}

// needsNewSpace reports whether the current vectors were made by another
// embedder than the configured one and none is being filled for it. The
// caller holds stepMu.
func (x *indexer) needsNewSpace() bool {
	st := x.st
	if emb := x.opts.Embedder; emb != nil {
		return !st.space.holds(emb) && !st.next.holds(emb)
	}
	return st.space.model == nil && (st.next == nil || st.next.model == nil)
}

// markAllPending queues every live chunk for embedding in sp.
func (x *indexer) markAllPending(sp *space) {
	for i := range x.st.chunks {
		if x.st.chunks[i].kind != chunkNone {
			sp.pending.Add(uint32(i))
		}
	}
}

// trainIfDue trains the built-in embedder when the corpus is large enough
// or has grown enough since the last training, and starts filling a next
// space with the new model.
func (x *indexer) trainIfDue() bool {
	if x.opts.Embedder != nil {
		return false
	}
	x.mu.RLock()
	live, trained := x.st.chunkIdx.Len(), 0
	if sp := x.st.next; sp != nil && sp.model != nil {
		trained = sp.model.Trained()
	} else if sp := x.st.space; sp != nil && sp.model != nil {
		trained = sp.model.Trained()
	}
	x.mu.RUnlock()
	if !training.Due(live, trained) || x.trainingWaits(live, trained) {
		return false
	}
	start := time.Now()
	model := embed.Train(x.eachChunkText)
	x.stepMu.Lock()
	x.mu.Lock()
	x.st.next = newSpace(model)
	x.markAllPending(x.st.next)
	x.mu.Unlock()
	x.stepMu.Unlock()
	x.log.Info("trained the built-in embedder", "chunks", model.Trained(), "vocabulary", model.Vocab(), "took", time.Since(start))
	return true
}

// trainingWaits reports whether a due training should wait for writes to
// pause (training.Waits).
func (x *indexer) trainingWaits(live, trained int) bool {
	return training.Waits(x.store.LastWrite(), live, trained)
}

// eachChunkText calls fn with the text of every live chunk, reading the
// state a batch at a time under the read lock.
func (x *indexer) eachChunkText(fn func(string)) {
	var texts []string
	for start := 0; ; start += 512 {
		texts = texts[:0]
		var n int
		x.mu.RLock()
		x.store.Read(func(v follow.View) {
			n = len(x.st.chunks)
			for i := start; i < min(start+512, n); i++ {
				if c := &x.st.chunks[i]; c.kind != chunkNone {
					title, body := chunkText(v, c)
					texts = append(texts, title+"\n"+body)
				}
			}
		})
		x.mu.RUnlock()
		for _, t := range texts {
			fn(t)
		}
		if start+512 >= n {
			return
		}
	}
}

// embedPending embeds up to EmbedBatch chunks still without a vector in the
// current space (or, with next, in the space being filled).
func (x *indexer) embedPending(next bool) (bool, error) {
	x.mu.RLock()
	sp := x.st.space
	if next {
		sp = x.st.next
	}
	if sp == nil || sp.pending.IsEmpty() || !sp.usable {
		x.mu.RUnlock()
		return false, nil
	}
	var ids []uint32
	var texts []string
	x.store.Read(func(v follow.View) {
		it := sp.pending.Iterator()
		for it.HasNext() && len(ids) < EmbedBatch {
			id := it.Next()
			title, body := chunkText(v, &x.st.chunks[id])
			ids = append(ids, id)
			texts = append(texts, title+"\n"+body)
		}
	})
	x.mu.RUnlock()

	vecs, err := x.embed(sp.emb, texts)
	if err != nil {
		return false, err
	}
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if sp != x.st.space && sp != x.st.next {
		return true, nil // replaced meanwhile
	}
	for i, id := range ids {
		if !sp.pending.Contains(id) {
			continue // deleted meanwhile
		}
		sp.pending.Remove(id)
		if x.st.chunks[id].kind == chunkNone || vecs[i] == nil {
			continue // deleted, or refused by the embedder
		}
		if sp.vecs == nil {
			sp.vecs = ann.NewFlat(len(vecs[i]))
		}
		if len(vecs[i]) != sp.vecs.Dims() {
			// The model server changed its vectors' size: these vectors
			// cannot be searched together; refill a new space.
			sp.pending.Add(id)
			sp.usable = false
			x.log.Warn("the embedder's vectors changed size: re-embedding everything", "was", sp.vecs.Dims(), "now", len(vecs[i]))
			return true, nil
		}
		sp.vecs.Add(id, vecs[i])
	}
	if testHookEmbedded != nil {
		testHookEmbedded(sp.name, len(ids))
	}
	return true, nil
}

// testHookEmbedded, when set, is told how many chunks embedPending
// embedded for a space, by the space's embedder name.
var testHookEmbedded func(space string, n int)

// embed embeds texts in one call; if that fails, text by text, so a text
// the embedder refuses (say, too long for a small model) does not hold up
// the others: its vector is left nil when a probe text still embeds, which
// shows the server is up. Otherwise it returns the error.
func (x *indexer) embed(emb embed.Embedder, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(x.bg, 2*time.Minute)
	defer cancel()
	vecs, err := emb.Embed(ctx, texts)
	if err == nil {
		if len(vecs) != len(texts) {
			return nil, errors.New("BUG: embedder returned a different number of vectors")
		}
		return vecs, nil
	}
	if len(texts) == 1 || ctx.Err() != nil {
		if len(texts) == 1 && ctx.Err() == nil {
			if _, perr := emb.Embed(ctx, []string{"probe"}); perr == nil {
				x.skipText(err)
				return [][]float32{nil}, nil
			}
		}
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, err := x.embed(emb, []string{t})
		if err != nil {
			return nil, err
		}
		out[i] = v[0]
	}
	return out, nil
}

func (x *indexer) skipText(err error) {
	x.skipped.Add(1)
	x.log.Warn("the embedder refused a chunk; it is searchable by its words only", "err", err)
}

// swapSpace makes a completely filled next space the current one.
func (x *indexer) swapSpace() bool {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	if next := x.st.next; next == nil || !next.pending.IsEmpty() {
		return false
	}
	x.mu.Lock()
	x.st.space, x.st.next = x.st.next, nil
	x.mu.Unlock()
	x.log.Info("semantic vectors now from a new embedder", "embedder", x.st.space.name)
	return true
}

// maintainVectors moves sp's vectors (the current space's, or the one
// being filled) to an IVF index when they pass ivfMin, trains the
// clusters of a packed index (see pack) or rebuilds an IVF index whose
// clusters drifted, and goes back to an exact index below ivfMin/2.
func (x *indexer) maintainVectors(sp *space) bool {
	x.stepMu.Lock()
	if sp == nil || (sp != x.st.space && sp != x.st.next) || sp.vecs == nil {
		x.stepMu.Unlock()
		return false
	}
	switch v := sp.vecs.(type) {
	case *ann.Flat:
		if v.Len() < ivfMin {
			x.stepMu.Unlock()
			return false
		}
	case *ann.IVF:
		if v.Len() < ivfMin/2 {
			// Small: copy under the locks.
			f := ann.NewFlat(v.Dims())
			v.Each(func(id uint32, vec []float32) bool { f.Add(id, vec); return true })
			x.mu.Lock()
			sp.vecs = f
			x.mu.Unlock()
			x.stepMu.Unlock()
			return true
		}
		if packed := v.NList() == 1; !v.Drifted() && !packed {
			x.stepMu.Unlock()
			return false
		}
	}
	x.stepMu.Unlock()
	return x.buildIVF(sp)
}

// testHookIVFBuild, when set, runs while buildIVF trains.
var testHookIVFBuild func()

// buildIVF replaces sp's vectors with a newly trained IVF index without
// holding writers back. Only this goroutine (the indexer) adds or drops
// chunks and vectors, so the old index does not change during the build
// and searches keep reading it; only the swap takes the locks.
func (x *indexer) buildIVF(sp *space) bool {
	x.mu.RLock()
	old := sp.vecs
	x.mu.RUnlock()
	if testHookIVFBuild != nil {
		testHookIVFBuild()
	}
	ivf := ann.BuildIVF(old, ann.IVFOptions{Quantize: true})
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if (x.st.space != sp && x.st.next != sp) || sp.vecs != old {
		return false // cannot happen while only the indexer changes spaces
	}
	sp.vecs = ivf
	return true
}

func setBit(b *roaring.Bitmap, i uint32, on bool) {
	if on {
		b.Add(i)
	} else {
		b.Remove(i)
	}
}

// compactChunks rebuilds the chunk index when it is untidy (index.Untidy:
// many deleted chunks), the indexer having nothing else to do. The copy is
// built beside running searches; only the swap takes the lock.
func (x *indexer) compactChunks() bool {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	ix := x.st.chunkIdx
	if !ix.Untidy() {
		return false
	}
	c := ix.Compacted()
	x.mu.Lock()
	x.st.chunkIdx = c
	x.mu.Unlock()
	return true
}

// idle reports whether the indexer has nothing left to do.
func (x *indexer) idle() bool {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	st := x.st
	x.takeChanges()
	x.mergePending()
	if !st.dirtyDocs.IsEmpty() || !st.dirtyChans.IsEmpty() || st.space == nil || st.next != nil ||
		(st.space.usable && !st.space.pending.IsEmpty()) || x.needsNewSpace() {
		return false
	}
	if x.opts.Embedder == nil {
		live, trained := st.chunkIdx.Len(), 0
		if st.space.model != nil {
			trained = st.space.model.Trained()
		}
		if training.Due(live, trained) {
			return false
		}
	}
	if st.chunkIdx.Untidy() {
		return false
	}
	switch v := st.space.vecs.(type) {
	case *ann.Flat:
		return v.Len() < ivfMin
	case *ann.IVF:
		return v.NList() > 1 && !v.Drifted() // else packed or drifted: clusters to train
	}
	return true
}

// Wait blocks until the indexer has caught up with every write the store
// acknowledged (chunked, embedded, indexed), or ctx ends.
func (x *Index) Wait(ctx context.Context) error {
	for {
		x.wakeIndexer()
		if x.indexer.idle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Status describes the semantic index.
type Status struct {
	Embedder string // name of the embedder of the current vectors
	Chunks   int    // live chunks
	Vectors  int    // chunks with a vector
	Pending  int    // chunks waiting for one
	Index    string // "flat", "ivf", or "packed" (codes in one list, clusters being trained)
	Building string // embedder of vectors being filled, if any
	Skipped  int    // chunks the embedder refused since start-up (searchable by words only)
	Error    string // the indexer's last error, if its last step failed
}

// Status reports the state of the semantic index.
func (x *Index) Status() Status {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := Status{Chunks: x.st.chunkIdx.Len()}
	if sp := x.st.space; sp != nil {
		s.Embedder, s.Pending = sp.name, int(sp.pending.GetCardinality())
		switch v := sp.vecs.(type) {
		case *ann.Flat:
			s.Vectors, s.Index = v.Len(), "flat"
		case *ann.IVF:
			s.Vectors, s.Index = v.Len(), "ivf"
			if v.NList() == 1 && v.Len() >= ivfMin/2 {
				s.Index = "packed"
			}
		}
	}
	if sp := x.st.next; sp != nil {
		s.Building = sp.name
	}
	s.Skipped = int(x.skipped.Load())
	s.Error, _ = x.semErr.Load().(string)
	return s
}
