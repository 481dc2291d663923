package ann

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// Flat is an exact index: a search scores every vector. Vectors are stored
// contiguously, so a scan streams memory at close to its bandwidth.
// Not safe for concurrent use with writes; concurrent searches are fine.
type Flat struct {
	dims int
	vecs []float32         // slot-major: vector of slot i at [i*dims, (i+1)*dims)
	ids  []uint32          // id of each slot
	pos  map[uint32]uint32 // id -> slot
}

// NewFlat returns an empty Flat index of dims-dimensional vectors.
func NewFlat(dims int) *Flat {
	return &Flat{dims: dims, pos: make(map[uint32]uint32)}
}

func (f *Flat) Dims() int { return f.dims }
func (f *Flat) Len() int  { return len(f.ids) }

func (f *Flat) slot(i uint32) []float32 {
	return f.vecs[int(i)*f.dims : (int(i)+1)*f.dims : (int(i)+1)*f.dims]
}

// Add stores v (copied) under id, replacing any vector id had. O(dims).
func (f *Flat) Add(id uint32, v []float32) {
	if len(v) != f.dims {
		panic(fmt.Sprintf("BUG: ann: %d-dimensional vector added to a %d-dimensional index", len(v), f.dims))
	}
	if s, ok := f.pos[id]; ok {
		copy(f.slot(s), v)
		return
	}
	f.pos[id] = uint32(len(f.ids))
	f.ids = append(f.ids, id)
	f.vecs = append(f.vecs, v...)
}

// Delete removes id's vector, moving the last vector into its slot. O(dims).
func (f *Flat) Delete(id uint32) bool {
	s, ok := f.pos[id]
	if !ok {
		return false
	}
	last := uint32(len(f.ids) - 1)
	if s != last {
		copy(f.slot(s), f.slot(last))
		f.ids[s] = f.ids[last]
		f.pos[f.ids[s]] = s
	}
	f.ids = f.ids[:last]
	f.vecs = f.vecs[:int(last)*f.dims]
	delete(f.pos, id)
	return true
}

// Vector returns id's vector, or nil. The slice is the index's own: read it
// before the next write.
func (f *Flat) Vector(id uint32) []float32 {
	if s, ok := f.pos[id]; ok {
		return f.slot(s)
	}
	return nil
}

// Each calls fn for every vector until fn returns false.
func (f *Flat) Each(fn func(id uint32, v []float32) bool) {
	for s, id := range f.ids {
		if !fn(id, f.slot(uint32(s))) {
			return
		}
	}
}

// EachID calls fn for every id until fn returns false.
func (f *Flat) EachID(fn func(id uint32) bool) {
	for _, id := range f.ids {
		if !fn(id) {
			return
		}
	}
}

// Search fills dst with the k vectors of the highest inner product with q,
// best first, among the ids allowed (all when allowed is nil). O(n·dims),
// or O(|allowed|·dims) when allowed is small.
func (f *Flat) Search(q []float32, k int, allowed *roaring.Bitmap, dst []Result) []Result {
	if k <= 0 || len(q) != f.dims {
		return dst[:0]
	}
	top := newTopK(dst, k)
	if sparse(allowed, len(f.ids)) {
		allowed.Iterate(func(id uint32) bool {
			if s, ok := f.pos[id]; ok {
				top.push(id, Dot(q, f.slot(s)))
			}
			return true
		})
		return top.sorted()
	}
	flt := newFilter(allowed)
	defer flt.release()
	scan(q, f.ids, f.vecs, f.dims, flt, &top)
	return top.sorted()
}
