package semantic

import (
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/analysis"
	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/follow"
	"github.com/sift-search/sift/index"
	"github.com/sift-search/sift/internal/bin"
)

// The index's section of a snapshot (docs/format.md), as payloads in this
// order: a header (format, analyzer, title weight, sequence number, chunk
// count), chunk records in blocks, the chunk index, the indexer's state —
// the dirty sets and the current space's name, pending chunks and kind —
// then the built-in model if the space is the built-in embedder's, and the
// vectors. A space being filled for a new embedder is not saved: it is
// started again after a restart. The hidden set is not saved either: it is
// the store's visibility, recomputed when the index follows the store.
const (
	sectionFormat  = 1
	chunksPerBlock = 1024
	blockBytes     = 4 << 20
)

// WriteSection writes the index as of seq. The store holds its writers off,
// so the feed holds every change up to seq: they are taken in first (as
// dirty documents and channels, which the section saves), and the section
// is then exactly the state at seq.
func (x *Index) WriteSection(seq uint64, put func([]byte) error) error {
	x.stepMu.Lock()
	defer x.stepMu.Unlock()
	x.indexer.takeChanges()
	x.indexer.mergePending()
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := x.st
	var e bin.Enc
	e.U8(sectionFormat)
	e.String(analysis.Version)
	e.U8(x.opts.TitleWeight)
	e.U64(seq)
	e.Uvarint(uint64(len(st.chunks)))
	if err := put(e.B); err != nil {
		return err
	}
	for start := 0; start < len(st.chunks); {
		e.B = e.B[:0]
		end := start
		var body bin.Enc
		for ; end < len(st.chunks) && end-start < chunksPerBlock && len(body.B) < blockBytes; end++ {
			encodeChunk(&body, &st.chunks[end])
		}
		e.Uvarint(uint64(end - start))
		e.B = append(e.B, body.B...)
		if err := put(e.B); err != nil {
			return err
		}
		start = end
	}
	if err := st.chunkIdx.Encode(put); err != nil {
		return err
	}
	e.B = e.B[:0]
	for _, bm := range []*roaring.Bitmap{st.dirtyDocs, st.dirtyChans} {
		if err := appendBitmap(&e, bm); err != nil {
			return err
		}
	}
	sp := st.space
	e.Bool(sp != nil)
	if sp != nil {
		e.String(sp.name)
		e.Bool(sp.model != nil)
		e.Bool(sp.vecs != nil)
		if err := appendBitmap(&e, sp.pending); err != nil {
			return err
		}
	}
	if err := put(e.B); err != nil {
		return err
	}
	if sp == nil {
		return nil
	}
	if sp.model != nil {
		if err := sp.model.Encode(put); err != nil {
			return err
		}
	}
	if sp.vecs != nil {
		return ann.Encode(sp.vecs, put)
	}
	return nil
}

// ReadSection reads what WriteSection wrote, checking it against the
// records in v; the state is installed by the returned commit.
func (x *Index) ReadSection(seq uint64, v follow.View, next func() ([]byte, error)) (func(), error) {
	p, err := next()
	if err != nil {
		return nil, err
	}
	d := &bin.Dec{B: p}
	format, analyzer, titleWeight, at, count := d.U8(), d.String(), d.U8(), d.U64(), d.Uvarint()
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if count > 1<<31 {
		return nil, fmt.Errorf("header: %d chunks", count)
	}
	n := int(count)
	if format != sectionFormat {
		return nil, fmt.Errorf("section format %d (this build reads %d)", format, sectionFormat)
	}
	if at != seq {
		return nil, fmt.Errorf("section of sequence number %d in a snapshot of %d", at, seq)
	}
	st := newState(x.opts.Index)
	if err := st.readChunks(v, next, n); err != nil {
		return nil, fmt.Errorf("chunks: %w", err)
	}
	if st.chunkIdx, err = index.Decode(chunkIndexOptions(x.opts.Index), next); err != nil {
		return nil, fmt.Errorf("chunk index: %w", err)
	}
	if analyzer != analysis.Version || titleWeight != x.opts.TitleWeight {
		st.reindex(v, x.opts.Index, x.opts.TitleWeight)
	} else if err := st.checkIndex(); err != nil {
		return nil, err
	}
	if err := st.readState(v, next); err != nil {
		return nil, err
	}
	return func() {
		x.stepMu.Lock()
		x.feedMu.Lock()
		x.mu.Lock()
		x.st, x.pos, x.loaded = st, seq, true
		x.mu.Unlock()
		x.feedMu.Unlock()
		x.stepMu.Unlock()
	}, nil
}

func encodeChunk(e *bin.Enc, c *chunkRec) {
	e.U8(uint8(c.kind))
	switch c.kind {
	case chunkDoc:
		e.Uvarint(uint64(c.owner))
		e.Varint(int64(c.start))
		e.Varint(int64(c.end))
		e.String(c.heading)
	case chunkChat:
		e.Uvarint(uint64(c.owner))
		e.Uvarint(uint64(len(c.msgs)))
		for _, m := range c.msgs {
			e.Uvarint(uint64(m))
		}
	}
}

// readChunks reads n chunk records, checking each against the records.
func (st *state) readChunks(v follow.View, next func() ([]byte, error), n int) error {
	st.chunks = make([]chunkRec, 0, min(n, 1<<16)) // the count is untrusted until read
	for len(st.chunks) < n {
		p, err := next()
		if err != nil {
			return err
		}
		d := &bin.Dec{B: p}
		c := d.Count(1)
		if c == 0 || c > n-len(st.chunks) {
			return fmt.Errorf("bad record count %d", c)
		}
		for ; c > 0; c-- {
			if err := st.readChunk(v, d); err != nil {
				return err
			}
			if d.Err != nil {
				return d.Err
			}
		}
		if err := d.Done(); err != nil {
			return err
		}
	}
	return nil
}

func (st *state) readChunk(v follow.View, d *bin.Dec) error {
	slot := uint32(len(st.chunks))
	c := chunkRec{kind: chunkKind(d.U8())}
	switch c.kind {
	case chunkNone:
	case chunkDoc:
		c.owner = uint32(d.Uvarint())
		c.start, c.end = int32(d.Varint()), int32(d.Varint())
		c.heading = d.String()
		if d.Err == nil {
			// A chunk may outlive its document until the indexer runs:
			// its span is checked only against a live document.
			doc := v.Document(c.owner)
			if c.owner >= v.Documents() || c.start < 0 || c.start > c.end || doc != nil && int(c.end) > len(doc.Content) {
				return fmt.Errorf("chunk %d: bad document span", slot)
			}
			st.docChunks[c.owner] = append(st.docChunks[c.owner], slot)
		}
	case chunkChat:
		c.owner = uint32(d.Uvarint())
		c.msgs = make([]uint32, d.Count(1))
		for i := range c.msgs {
			c.msgs[i] = uint32(d.Uvarint())
			if d.Err == nil && c.msgs[i] >= v.Messages() {
				return fmt.Errorf("chunk %d: bad message", slot)
			}
		}
		if d.Err == nil {
			if c.owner >= v.Channels() || len(c.msgs) == 0 {
				return fmt.Errorf("chunk %d: bad channel", slot)
			}
			st.chanChunks[c.owner] = append(st.chanChunks[c.owner], slot)
		}
	default:
		return fmt.Errorf("chunk %d: unknown kind %d", slot, c.kind)
	}
	st.chunks = append(st.chunks, c)
	return nil
}

// checkIndex checks the chunk index against the chunk records.
func (st *state) checkIndex() error {
	if int(st.chunkIdx.NextID()) > len(st.chunks) {
		return errors.New("chunk index refers to chunks the snapshot lacks")
	}
	for i := range st.chunks {
		if (st.chunks[i].kind != chunkNone) != st.chunkIdx.Contains(uint32(i)) {
			return fmt.Errorf("chunk slot %d: index and records disagree", i)
		}
	}
	return nil
}

// reindex rebuilds the chunk index from the records: the section was
// written by another analyzer or title weight.
func (st *state) reindex(v follow.View, opts index.Options, titleWeight uint8) {
	st.chunkIdx = index.New(chunkIndexOptions(opts))
	a := analysis.New(0)
	var d index.Doc
	for i := range st.chunks {
		c := &st.chunks[i]
		if c.kind == chunkNone {
			continue
		}
		title, body := chunkText(v, c)
		a.Document(&d, title, body, titleWeight)
		st.chunkIdx.Add(uint32(i), &d, []string{sourceFacet(chunkSource(v, c))})
	}
}

func appendBitmap(e *bin.Enc, bm *roaring.Bitmap) error {
	b, err := bm.ToBytes()
	if err != nil {
		return err
	}
	e.Bytes(b)
	return nil
}

func readBitmap(d *bin.Dec, limit uint32) (*roaring.Bitmap, error) {
	b := d.Bytes()
	if d.Err != nil {
		return nil, d.Err
	}
	bm := roaring.New()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil { // third-party decoding of untrusted bytes
				err = fmt.Errorf("bitmap: %v", r)
			}
		}()
		if err := bm.UnmarshalBinary(b); err != nil {
			return err
		}
		return bm.Validate()
	}()
	if err != nil {
		return nil, err
	}
	if !bm.IsEmpty() && bm.Maximum() >= limit {
		return nil, errors.New("bitmap value out of range")
	}
	return bm, nil
}

// readState reads the indexer's state, the model and the vectors. The
// space's embedder is attached when the index follows the store
// (attachEmbedder).
func (st *state) readState(v follow.View, next func() ([]byte, error)) error {
	p, err := next()
	if err != nil {
		return err
	}
	d := &bin.Dec{B: p}
	if st.dirtyDocs, err = readBitmap(d, v.Documents()); err != nil {
		return fmt.Errorf("dirty documents: %w", err)
	}
	if st.dirtyChans, err = readBitmap(d, v.Channels()); err != nil {
		return fmt.Errorf("dirty channels: %w", err)
	}
	if !d.Bool() {
		return d.Done()
	}
	sp := &space{name: d.String()}
	builtin, hasVecs := d.Bool(), d.Bool()
	if sp.pending, err = readBitmap(d, uint32(len(st.chunks))); err != nil {
		return fmt.Errorf("pending chunks: %w", err)
	}
	for i := range st.chunks {
		if st.chunks[i].kind == chunkNone {
			sp.pending.Remove(uint32(i))
		}
	}
	if err := d.Done(); err != nil {
		return err
	}
	if builtin {
		if sp.model, err = embed.DecodeModel(next); err != nil {
			return err
		}
		if sp.model.Name() != sp.name {
			return fmt.Errorf("model %q saved for space %q", sp.model.Name(), sp.name)
		}
		sp.emb, sp.usable = sp.model, true
	}
	if hasVecs {
		if sp.vecs, err = ann.Decode(next); err != nil {
			return err
		}
		if builtin && sp.vecs.Dims() != embed.Dims {
			return fmt.Errorf("%d-dimensional vectors for the built-in embedder", sp.vecs.Dims())
		}
		if x, ok := sp.vecs.(*ann.IVF); ok {
			x.Quantize() // written by a version that kept floats
		}
		var bad error
		sp.vecs.EachID(func(id uint32) bool {
			if int(id) >= len(st.chunks) || st.chunks[id].kind == chunkNone {
				bad = fmt.Errorf("vector of chunk %d, which does not exist", id)
			}
			return bad == nil
		})
		if bad != nil {
			return bad
		}
	}
	st.space = sp
	return nil
}
