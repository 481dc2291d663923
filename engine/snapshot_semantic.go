package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/engine/internal/bin"
)

// The semantic part of a snapshot (docs/format.md): chunk records (after
// the documents), the chunk index (after the document index), then a frame
// of indexer state — the dirty sets and the current space's name, pending
// chunks and kind — the built-in model if the space is the built-in
// embedder's, and the vectors. A space being filled for a new embedder is
// not saved: it is started again after a restart.

// buildChannelOrders sorts every channel's messages by time (at load).
func (st *state) buildChannelOrders() {
	for i := range st.msgs {
		if r := &st.msgs[i]; r.id != "" {
			st.chanOrder[r.channel] = append(st.chanOrder[r.channel], uint32(i))
		}
	}
	for _, o := range st.chanOrder {
		slices.SortFunc(o, st.msgCmp)
	}
}

// markAllDirty queues every document and channel for chunking: the state
// was read from a snapshot written before the semantic index existed.
func (st *state) markAllDirty() {
	for i, d := range st.docs {
		if d != nil {
			st.dirtyDocs.Add(uint32(i))
		}
	}
	for i, c := range st.chans {
		if c != nil {
			st.dirtyChans.Add(uint32(i))
		}
	}
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
func (st *state) readChunks(fr *frameReader, n int) error {
	st.chunks = make([]chunkRec, 0, min(n, 1<<16))
	return fr.readBlocks(frameChunks, n, func(d *bin.Dec) error {
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
				if int(c.owner) >= len(st.docs) || c.start < 0 || c.start > c.end ||
					st.docs[c.owner] != nil && int(c.end) > len(st.docs[c.owner].Content) {
					return fmt.Errorf("chunk %d: bad document span", slot)
				}
				st.docChunks[c.owner] = append(st.docChunks[c.owner], slot)
			}
		case chunkChat:
			c.owner = uint32(d.Uvarint())
			c.msgs = make([]uint32, d.Count(1))
			for i := range c.msgs {
				c.msgs[i] = uint32(d.Uvarint())
				if d.Err == nil && int(c.msgs[i]) >= len(st.msgs) {
					return fmt.Errorf("chunk %d: bad message", slot)
				}
			}
			if d.Err == nil {
				if int(c.owner) >= len(st.chans) || len(c.msgs) == 0 {
					return fmt.Errorf("chunk %d: bad channel", slot)
				}
				st.chanChunks[c.owner] = append(st.chanChunks[c.owner], slot)
			}
		default:
			return fmt.Errorf("chunk %d: unknown kind %d", slot, c.kind)
		}
		st.chunks = append(st.chunks, c)
		return nil
	})
}

func appendBitmap(e *bin.Enc, bm *roaring.Bitmap) error {
	b, err := bm.ToBytes()
	if err != nil {
		return err
	}
	e.Bytes(b)
	return nil
}

// writeSemantic writes the chunk index and the indexer's state.
func (st *state) writeSemantic(fw *frameWriter) error {
	if err := st.chunkIdx.Encode(func(b []byte) error { return fw.frame(frameChunkIdx, b) }); err != nil {
		return err
	}
	var e bin.Enc
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
	if err := fw.frame(frameSemantic, e.B); err != nil {
		return err
	}
	if sp == nil {
		return nil
	}
	if sp.model != nil {
		if err := sp.model.Encode(func(b []byte) error { return fw.frame(frameModel, b) }); err != nil {
			return err
		}
	}
	if sp.vecs != nil {
		return ann.Encode(sp.vecs, func(b []byte) error { return fw.frame(frameVectors, b) })
	}
	return nil
}

func readBitmap(d *bin.Dec, limit int) (*roaring.Bitmap, error) {
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
	if !bm.IsEmpty() && int(bm.Maximum()) >= limit {
		return nil, errors.New("bitmap value out of range")
	}
	return bm, nil
}

// readSemantic reads the indexer's state written by writeSemantic. The
// space's embedder is attached by the engine (see attachSpaces).
func (st *state) readSemantic(fr *frameReader) error {
	p, err := fr.take(frameSemantic)
	if err != nil {
		return err
	}
	d := &bin.Dec{B: p}
	if st.dirtyDocs, err = readBitmap(d, len(st.docs)); err != nil {
		return fmt.Errorf("dirty documents: %w", err)
	}
	if st.dirtyChans, err = readBitmap(d, len(st.chans)); err != nil {
		return fmt.Errorf("dirty channels: %w", err)
	}
	if !d.Bool() {
		return d.Done()
	}
	sp := &space{name: d.String()}
	builtin, hasVecs := d.Bool(), d.Bool()
	if sp.pending, err = readBitmap(d, len(st.chunks)); err != nil {
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
		if sp.model, err = embed.DecodeModel(func() ([]byte, error) { return fr.take(frameModel) }); err != nil {
			return err
		}
		if sp.model.Name() != sp.name {
			return fmt.Errorf("model %q saved for space %q", sp.model.Name(), sp.name)
		}
		sp.emb, sp.usable = sp.model, true
	}
	if hasVecs {
		if sp.vecs, err = ann.Decode(func() ([]byte, error) { return fr.take(frameVectors) }); err != nil {
			return err
		}
		if builtin && sp.vecs.Dims() != embed.Dims {
			return fmt.Errorf("%d-dimensional vectors for the built-in embedder", sp.vecs.Dims())
		}
		var bad error
		sp.vecs.Each(func(id uint32, _ []float32) bool {
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
