package engine

import (
	"context"
	"errors"
	"time"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine/index"
)

// The semantic indexer runs in the background. Writes mark the documents
// and channels they change; the indexer re-chunks them, keeps the chunk
// index current, trains the built-in embedder as the corpus grows,
// embeds new chunks, fills a new space when the embedder changes, and
// moves the vectors from an exact to an IVF index as they grow. Each step is
// short and takes the writer lock only to apply its result, so writes and
// searches go on meanwhile.

const (
	docsPerStep     = 64     // documents chunked per step
	msgsPerStep     = 4096   // messages re-windowed per step (at least one channel)
	embedBatch      = 128    // chunks embedded per step
	minTrainChunks  = 64     // the built-in embedder trains from this many chunks on
	eagerTraining   = 20_000 // below this many, it retrains at each quarter of growth; above, at each doubling
	embedErrorPause = 5 * time.Second
)

// wakeIndexer tells the indexer there is work, without waiting.
func (e *Engine) wakeIndexer() {
	select {
	case e.semWake <- struct{}{}:
	default:
	}
}

func (e *Engine) indexerLoop() {
	defer close(e.semDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		for !e.closed.Load() {
			more, err := e.indexStep()
			if err != nil {
				e.semErr.Store(err.Error())
				e.log.Warn("semantic indexer", "err", err)
				select {
				case <-e.stop:
					return
				case <-time.After(embedErrorPause):
				}
				break
			}
			e.semErr.Store("")
			if !more {
				break
			}
			e.semEdits.Add(1)
		}
		select {
		case <-e.stop:
			return
		case <-e.semWake:
		case <-tick.C:
		}
	}
}

// indexStep does one bounded piece of work and reports whether it did any.
func (e *Engine) indexStep() (bool, error) {
	if e.chunkDocuments() || e.windowChannels() || e.ensureSpace() || e.trainIfDue() {
		return true, nil
	}
	for _, next := range []bool{false, true} {
		if did, err := e.embedPending(next); did || err != nil {
			return did, err
		}
	}
	return e.swapSpace() || e.maintainVectors(), nil
}

// appendChunk adds a chunk and indexes it; the caller holds both locks.
func (st *state) appendChunk(c chunkRec, d *index.Doc) uint32 {
	slot := uint32(len(st.chunks))
	st.chunks = append(st.chunks, c)
	st.chunkIdx.Add(slot, d, []string{sourceFacet(st.chunkSource(&c))})
	if st.chunkHidden(&c) {
		st.hid.chunks.Add(slot)
	}
	st.space.addChunk(slot)
	st.next.addChunk(slot)
	return slot
}

// dropChunk deletes a chunk; the caller holds both locks.
func (st *state) dropChunk(slot uint32) {
	st.chunkIdx.Delete(slot)
	st.hid.chunks.Remove(slot)
	st.chunks[slot] = chunkRec{}
	st.space.dropChunk(slot)
	st.next.dropChunk(slot)
}

// analyzeChunk fills d from a chunk's text: its title words weighted like a
// document title's, then its body.
func (e *Engine) analyzeChunk(a *analyzer, d *index.Doc, c *chunkRec) {
	title, body := e.st.chunkText(c)
	a.analyzeDocument(d, &Document{Title: title, Content: body}, e.opts.TitleWeight)
}

type pendingChunk struct {
	rec chunkRec
	doc index.Doc
}

// chunkDocuments (re-)chunks up to docsPerStep marked documents.
func (e *Engine) chunkDocuments() bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	st := e.st
	if st.dirtyDocs.IsEmpty() {
		return false
	}
	var slots []uint32
	it := st.dirtyDocs.Iterator()
	for it.HasNext() && len(slots) < docsPerStep {
		slots = append(slots, it.Next())
	}
	a := e.writeAnalyzer()
	made := make([][]pendingChunk, len(slots))
	for i, s := range slots {
		d := st.docs[s]
		if d == nil {
			continue
		}
		for _, sp := range splitDocument(d.Content) {
			pc := pendingChunk{rec: chunkRec{kind: chunkDoc, owner: s, start: int32(sp.start), end: int32(sp.end), heading: sp.heading}}
			e.analyzeChunk(a, &pc.doc, &pc.rec)
			made[i] = append(made[i], pc)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, s := range slots {
		for _, c := range st.docChunks[s] {
			st.dropChunk(c)
		}
		delete(st.docChunks, s)
		for j := range made[i] {
			st.docChunks[s] = append(st.docChunks[s], st.appendChunk(made[i][j].rec, &made[i][j].doc))
		}
		st.dirtyDocs.Remove(s)
	}
	return true
}

// windowChannels recomputes the conversation windows of marked channels,
// keeping the chunks of windows that did not change.
func (e *Engine) windowChannels() bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	st := e.st
	if st.dirtyChans.IsEmpty() {
		return false
	}
	a := e.writeAnalyzer()
	type plan struct {
		ch   uint32
		keep map[uint32]bool // old chunks reused
		wins []uint32        // chunk slot per window, once applied
		made []*pendingChunk // per window: a new chunk, or nil for a reused one
	}
	var plans []plan
	budget := msgsPerStep
	it := st.dirtyChans.Iterator()
	for it.HasNext() && (len(plans) == 0 || budget > 0) {
		ch := it.Next()
		p := plan{ch: ch, keep: map[uint32]bool{}}
		var wins [][]uint32
		if st.chans[ch] != nil {
			wins = st.windows(st.chanOrder[ch])
			budget -= len(st.chanOrder[ch])
		}
		old := map[uint32]uint32{} // first message -> chunk
		for _, c := range st.chanChunks[ch] {
			old[st.chunks[c].msgs[0]] = c
		}
		for _, msgs := range wins {
			if c, ok := old[msgs[0]]; ok && slicesEqual(st.chunks[c].msgs, msgs) {
				p.keep[c] = true
				p.wins = append(p.wins, c)
				p.made = append(p.made, nil)
				continue
			}
			pc := &pendingChunk{rec: chunkRec{kind: chunkChat, owner: ch, msgs: msgs}}
			e.analyzeChunk(a, &pc.doc, &pc.rec)
			p.wins = append(p.wins, 0)
			p.made = append(p.made, pc)
		}
		plans = append(plans, p)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range plans {
		for _, c := range st.chanChunks[p.ch] {
			if !p.keep[c] {
				st.dropChunk(c)
			}
		}
		for w, pc := range p.made {
			if pc != nil {
				p.wins[w] = st.appendChunk(pc.rec, &pc.doc)
			}
		}
		if len(p.wins) == 0 {
			delete(st.chanChunks, p.ch)
		} else {
			st.chanChunks[p.ch] = p.wins
		}
		st.dirtyChans.Remove(p.ch)
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
func (e *Engine) configuredEmbedder() embed.Embedder {
	if e.opts.Embedder != nil {
		return e.opts.Embedder
	}
	return embed.Untrained()
}

// ensureSpace creates the first space, or a next one when the configured
// embedder is not the current space's.
func (e *Engine) ensureSpace() bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	st := e.st
	if st.space != nil && !e.needsNewSpace() {
		return false
	}
	sp := newSpace(e.configuredEmbedder())
	e.mu.Lock()
	if st.space == nil {
		st.space = sp
	} else {
		st.next = sp // the vectors were made by another embedder than the configured one
	}
	e.markAllPending(sp)
	e.mu.Unlock()
	return true
}

// needsNewSpace reports whether the current vectors were made by another
// embedder than the configured one and none is being filled for it. The
// caller holds writeMu.
func (e *Engine) needsNewSpace() bool {
	st := e.st
	if emb := e.opts.Embedder; emb != nil {
		return !st.space.holds(emb) && !st.next.holds(emb)
	}
	return st.space.model == nil && (st.next == nil || st.next.model == nil)
}

// markAllPending queues every live chunk for embedding in sp.
func (e *Engine) markAllPending(sp *space) {
	for i := range e.st.chunks {
		if e.st.chunks[i].kind != chunkNone {
			sp.pending.Add(uint32(i))
		}
	}
}

// trainIfDue trains the built-in embedder when the corpus is large enough
// or has grown enough since the last training, and starts filling a next
// space with the new model.
func (e *Engine) trainIfDue() bool {
	if e.opts.Embedder != nil {
		return false
	}
	e.mu.RLock()
	live, trained := e.st.chunkIdx.Len(), 0
	if sp := e.st.next; sp != nil && sp.model != nil {
		trained = sp.model.Trained()
	} else if sp := e.st.space; sp != nil && sp.model != nil {
		trained = sp.model.Trained()
	}
	e.mu.RUnlock()
	if !trainDue(live, trained) || e.trainingWaits(live, trained) {
		return false
	}
	start := time.Now()
	model := embed.Train(e.eachChunkText)
	e.writeMu.Lock()
	e.mu.Lock()
	e.st.next = newSpace(model)
	e.markAllPending(e.st.next)
	e.mu.Unlock()
	e.writeMu.Unlock()
	e.log.Info("trained the built-in embedder", "chunks", model.Trained(), "vocabulary", model.Vocab(), "took", time.Since(start))
	return true
}

// trainDue reports whether the built-in embedder, trained on trained
// chunks, should train again with live ones: while the corpus is small,
// training is cheap and each quarter of growth changes the model; a large
// one retrains when it has doubled.
func trainDue(live, trained int) bool {
	switch {
	case live < minTrainChunks:
		return false
	case trained == 0:
		return true
	case trained < eagerTraining:
		return live-trained >= max(trained/4, minTrainChunks)
	}
	return live >= 2*trained
}

// trainQuiet is how long writes must pause before a due training starts:
// during a bulk import the model would be outdated at once.
const trainQuiet = time.Second

// trainingWaits reports whether a due training should wait for writes to
// pause — unless the model is far behind the corpus.
func (e *Engine) trainingWaits(live, trained int) bool {
	if time.Since(time.Unix(0, e.lastWrite.Load())) >= trainQuiet {
		return false
	}
	if trained == 0 {
		return live < 8*minTrainChunks
	}
	return live < 4*trained
}

// eachChunkText calls fn with the text of every live chunk, reading the
// state a batch at a time under the read lock.
func (e *Engine) eachChunkText(fn func(string)) {
	var texts []string
	for start := 0; ; start += 512 {
		texts = texts[:0]
		e.mu.RLock()
		n := len(e.st.chunks)
		for i := start; i < min(start+512, n); i++ {
			if c := &e.st.chunks[i]; c.kind != chunkNone {
				title, body := e.st.chunkText(c)
				texts = append(texts, title+"\n"+body)
			}
		}
		e.mu.RUnlock()
		for _, t := range texts {
			fn(t)
		}
		if start+512 >= n {
			return
		}
	}
}

// embedPending embeds up to embedBatch chunks still without a vector in the
// current space (or, with next, in the space being filled).
func (e *Engine) embedPending(next bool) (bool, error) {
	e.mu.RLock()
	sp := e.st.space
	if next {
		sp = e.st.next
	}
	if sp == nil || sp.pending.IsEmpty() || !sp.usable {
		e.mu.RUnlock()
		return false, nil
	}
	var ids []uint32
	var texts []string
	it := sp.pending.Iterator()
	for it.HasNext() && len(ids) < embedBatch {
		id := it.Next()
		title, body := e.st.chunkText(&e.st.chunks[id])
		ids = append(ids, id)
		texts = append(texts, title+"\n"+body)
	}
	e.mu.RUnlock()

	vecs, err := e.embed(sp.emb, texts)
	if err != nil {
		return false, err
	}
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if sp != e.st.space && sp != e.st.next {
		return true, nil // replaced meanwhile
	}
	for i, id := range ids {
		if !sp.pending.Contains(id) {
			continue // deleted meanwhile
		}
		sp.pending.Remove(id)
		if e.st.chunks[id].kind == chunkNone || vecs[i] == nil {
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
			e.log.Warn("the embedder's vectors changed size: re-embedding everything", "was", sp.vecs.Dims(), "now", len(vecs[i]))
			return true, nil
		}
		sp.vecs.Add(id, vecs[i])
	}
	return true, nil
}

// embed embeds texts in one call; if that fails, text by text, so a text
// the embedder refuses (say, too long for a small model) does not hold up
// the others: its vector is left nil when a probe text still embeds, which
// shows the server is up. Otherwise it returns the error.
func (e *Engine) embed(emb embed.Embedder, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(e.bg, 2*time.Minute)
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
				e.skipText(err)
				return [][]float32{nil}, nil
			}
		}
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, err := e.embed(emb, []string{t})
		if err != nil {
			return nil, err
		}
		out[i] = v[0]
	}
	return out, nil
}

func (e *Engine) skipText(err error) {
	e.skipped.Add(1)
	e.log.Warn("the embedder refused a chunk; it is searchable by its words only", "err", err)
}

// swapSpace makes a completely filled next space the current one.
func (e *Engine) swapSpace() bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	if next := e.st.next; next == nil || !next.pending.IsEmpty() {
		return false
	}
	e.mu.Lock()
	e.st.space, e.st.next = e.st.next, nil
	e.mu.Unlock()
	e.log.Info("semantic vectors now from a new embedder", "embedder", e.st.space.name)
	return true
}

// maintainVectors moves the current vectors to an IVF index when they pass
// ivfMin, rebuilds an IVF index whose clusters drifted, and goes back to an
// exact index below ivfMin/2.
func (e *Engine) maintainVectors() bool {
	e.writeMu.Lock()
	sp := e.st.space
	if sp == nil || sp.vecs == nil {
		e.writeMu.Unlock()
		return false
	}
	switch v := sp.vecs.(type) {
	case *ann.Flat:
		if v.Len() < ivfMin {
			e.writeMu.Unlock()
			return false
		}
	case *ann.IVF:
		if v.Len() < ivfMin/2 {
			// Small: copy under the locks.
			f := ann.NewFlat(v.Dims())
			v.Each(func(id uint32, vec []float32) bool { f.Add(id, vec); return true })
			e.mu.Lock()
			sp.vecs = f
			e.mu.Unlock()
			e.writeMu.Unlock()
			return true
		}
		if !v.Drifted() {
			e.writeMu.Unlock()
			return false
		}
	}
	e.writeMu.Unlock()
	return e.buildIVF(sp)
}

// testHookIVFBuild, when set, runs while buildIVF trains.
var testHookIVFBuild func()

// buildIVF replaces sp's vectors with a newly trained IVF index without
// holding writers back. Only this goroutine (the indexer) adds or drops
// chunks and vectors, so the old index does not change during the build
// and searches keep reading it; only the swap takes the locks.
func (e *Engine) buildIVF(sp *space) bool {
	e.mu.RLock()
	old := sp.vecs
	e.mu.RUnlock()
	if testHookIVFBuild != nil {
		testHookIVFBuild()
	}
	x := ann.BuildIVF(old, ann.IVFOptions{})
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.space != sp || sp.vecs != old {
		return false // cannot happen while only the indexer changes spaces
	}
	sp.vecs = x
	return true
}

// semanticIdle reports whether the indexer has nothing left to do.
func (e *Engine) semanticIdle() bool {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	st := e.st
	if !st.dirtyDocs.IsEmpty() || !st.dirtyChans.IsEmpty() || st.space == nil || st.next != nil ||
		(st.space.usable && !st.space.pending.IsEmpty()) || e.needsNewSpace() {
		return false
	}
	if e.opts.Embedder == nil {
		live, trained := st.chunkIdx.Len(), 0
		if st.space.model != nil {
			trained = st.space.model.Trained()
		}
		if trainDue(live, trained) {
			return false
		}
	}
	if v, ok := st.space.vecs.(*ann.Flat); ok && v.Len() >= ivfMin {
		return false
	}
	return true
}

// WaitSemantic blocks until the semantic indexer has caught up with every
// write (chunked, embedded, indexed), or ctx ends.
func (e *Engine) WaitSemantic(ctx context.Context) error {
	if e.opts.NoSemantic {
		return nil
	}
	for {
		e.wakeIndexer()
		if e.semanticIdle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// SemanticStatus describes the semantic index.
type SemanticStatus struct {
	Embedder string // name of the embedder of the current vectors
	Chunks   int    // live chunks
	Vectors  int    // chunks with a vector
	Pending  int    // chunks waiting for one
	Index    string // "flat" or "ivf"
	Building string // embedder of vectors being filled, if any
	Skipped  int    // chunks the embedder refused since start-up (searchable by words only)
	Error    string // the indexer's last error, if its last step failed
}

// SemanticStatus reports the state of the semantic index.
func (e *Engine) SemanticStatus() SemanticStatus {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := SemanticStatus{Chunks: e.st.chunkIdx.Len()}
	if sp := e.st.space; sp != nil {
		s.Embedder, s.Pending = sp.name, int(sp.pending.GetCardinality())
		switch v := sp.vecs.(type) {
		case *ann.Flat:
			s.Vectors, s.Index = v.Len(), "flat"
		case *ann.IVF:
			s.Vectors, s.Index = v.Len(), "ivf"
		}
	}
	if sp := e.st.next; sp != nil {
		s.Building = sp.name
	}
	s.Skipped = int(e.skipped.Load())
	s.Error, _ = e.semErr.Load().(string)
	return s
}
