package ann

import "github.com/RoaringBitmap/roaring/v2"

// Index is what Flat and IVF both are.
type Index interface {
	Dims() int
	Len() int
	Add(id uint32, v []float32)
	Delete(id uint32) bool
	Vector(id uint32) []float32
	Each(fn func(id uint32, v []float32) bool)
	EachID(fn func(id uint32) bool)
	Search(q []float32, k int, allowed *roaring.Bitmap, dst []Result) []Result
}

var (
	_ Index = (*Flat)(nil)
	_ Index = (*IVF)(nil)
)
