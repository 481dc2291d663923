package semantic

import (
	"unsafe"

	"github.com/sift-search/sift/ann"
	"github.com/sift-search/sift/embed"
	"github.com/sift-search/sift/index"
)

// Footprint is the memory the semantic index holds, by structure, in
// bytes (estimated for maps), as engine.Footprint is for the store.
type Footprint struct {
	Chunks     int64           // chunk records and the per-owner chunk lists
	ChunkIndex index.Footprint // the lexical index of chunks
	Vectors    int64           // the current space's vectors (and a space being filled)
	Model      int64           // the built-in embedder's term vectors
}

// Footprint measures the index. O(chunks + terms).
func (x *Index) Footprint() Footprint {
	x.mu.RLock()
	defer x.mu.RUnlock()
	st := x.st
	var f Footprint
	f.Chunks = int64(cap(st.chunks)) * int64(unsafe.Sizeof(chunkRec{}))
	for i := range st.chunks {
		f.Chunks += int64(cap(st.chunks[i].msgs))*4 + int64(len(st.chunks[i].heading))
	}
	for _, m := range []map[uint32][]uint32{st.docChunks, st.chanChunks} {
		for _, l := range m {
			f.Chunks += int64(cap(l))*4 + 24 + 4 + 16
		}
	}
	f.ChunkIndex = st.chunkIdx.Footprint()
	for _, sp := range []*space{st.space, st.next} {
		if sp == nil {
			continue
		}
		f.Vectors += vectorBytes(sp.vecs)
		if sp.model != nil {
			f.Model += int64(sp.model.Vocab()) * embed.Dims * 2 // bfloat16
		}
	}
	return f
}

// vectorBytes estimates what an ann index holds: vectors (floats, or
// int8 codes) and ids.
func vectorBytes(v ann.Index) int64 {
	if v == nil {
		return 0
	}
	per := int64(v.Dims()) * 4
	if x, ok := v.(*ann.IVF); ok && x.Quantized() {
		per = int64(v.Dims())
	}
	return int64(v.Len()) * (per + 4 + 16) // + id and its map entry
}
