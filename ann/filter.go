package ann

import (
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// filter answers "is this id allowed" in O(1) from a dense copy of the
// allowed bitmap, pooled between searches.
type filter struct{ bits []uint64 }

var filterPool = sync.Pool{New: func() any { return new(filter) }}

// newFilter returns nil when every id is allowed.
func newFilter(allowed *roaring.Bitmap) *filter {
	if allowed == nil {
		return nil
	}
	f := filterPool.Get().(*filter)
	n := int(allowed.DenseSize())
	if cap(f.bits) < n {
		f.bits = make([]uint64, n)
	} else {
		f.bits = f.bits[:n]
		clear(f.bits)
	}
	allowed.WriteDenseTo(f.bits)
	return f
}

func (f *filter) ok(id uint32) bool {
	if f == nil {
		return true
	}
	w := int(id >> 6)
	return w < len(f.bits) && f.bits[w]&(1<<(id&63)) != 0
}

func (f *filter) release() {
	if f != nil {
		filterPool.Put(f)
	}
}

// sparse reports whether a filter admits so few ids that looking each one
// up beats scanning n vectors.
func sparse(allowed *roaring.Bitmap, n int) bool {
	return allowed != nil && allowed.GetCardinality() < uint64(n/16)
}
