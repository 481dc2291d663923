package index

import (
	"encoding/binary"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
)

const (
	// smallMax is the length at which a postings list moves from a plain
	// sorted slice to a roaring bitmap: most terms are rare, and a roaring
	// bitmap of a few ids costs more than the ids.
	smallMax = 32
	// skipEvery is the spacing of the position-offset skip index.
	skipEvery = 32
)

// plist is the postings list of one term: the ids of the documents holding
// it, in increasing order, with a parallel weighted term frequency and the
// term's positions in each.
type plist struct {
	small []uint32        // ids while the list is short
	docs  *roaring.Bitmap // ids once it has grown past smallMax
	tfs   []uint8         // weighted term frequency per posting, capped at 255
	pos   []byte          // per posting: uvarint count, then uvarint position deltas
	skip  []uint32        // offset in pos of postings 0, skipEvery, 2*skipEvery, …
	n     uint32
}

// add appends a posting; id must exceed every id already in the list.
func (p *plist) add(id uint32, tf uint32, positions []uint32) {
	p.push(id, uint8(min(tf, 255)))
	p.pos = binary.AppendUvarint(p.pos, uint64(len(positions)))
	prev := uint32(0)
	for _, x := range positions {
		p.pos = binary.AppendUvarint(p.pos, uint64(x-prev))
		prev = x
	}
}

// addRaw appends a posting whose positions are already encoded.
func (p *plist) addRaw(id uint32, tf uint8, pos []byte) {
	p.push(id, tf)
	p.pos = append(p.pos, pos...)
}

// push appends the id and frequency of a posting whose positions the caller
// appends next.
func (p *plist) push(id uint32, tf uint8) {
	if p.n%skipEvery == 0 {
		p.skip = append(p.skip, uint32(len(p.pos)))
	}
	switch {
	case p.docs != nil:
		p.docs.Add(id)
	case len(p.small) < smallMax:
		p.small = append(p.small, id)
	default:
		p.docs = roaring.BitmapOf(p.small...)
		p.docs.Add(id)
		p.small = nil
	}
	p.tfs = append(p.tfs, tf)
	p.n++
}

// bitmap returns the ids as a bitmap; for a short list it is a new one.
func (p *plist) bitmap() *roaring.Bitmap {
	if p.docs != nil {
		return p.docs
	}
	return roaring.BitmapOf(p.small...)
}

// rank returns the index of posting id, or -1 when id is absent. O(log n).
func (p *plist) rank(id uint32) int {
	if p.docs == nil {
		i := sort.Search(len(p.small), func(i int) bool { return p.small[i] >= id })
		if i < len(p.small) && p.small[i] == id {
			return i
		}
		return -1
	}
	if !p.docs.Contains(id) {
		return -1
	}
	return int(p.docs.Rank(id)) - 1
}

// positions appends the positions of posting r to dst.
func (p *plist) positions(r int, dst []uint32) []uint32 {
	off := int(p.skip[r/skipEvery])
	for i := r - r%skipEvery; i < r; i++ {
		n, w := binary.Uvarint(p.pos[off:])
		off += w
		for ; n > 0; n-- {
			_, w = binary.Uvarint(p.pos[off:])
			off += w
		}
	}
	n, w := binary.Uvarint(p.pos[off:])
	off += w
	prev := uint32(0)
	for ; n > 0; n-- {
		d, w := binary.Uvarint(p.pos[off:])
		off += w
		prev += uint32(d)
		dst = append(dst, prev)
	}
	return dst
}

// iter walks a postings list in id order, a batch at a time.
type iter struct {
	p    *plist
	many roaring.ManyIntIterable
	i    int // postings consumed
}

func (p *plist) iter() iter {
	it := iter{p: p}
	if p.docs != nil {
		it.many = p.docs.ManyIterator()
	}
	return it
}

// next fills buf with the next ids and returns how many, 0 at the end, and
// the index of the first of them (for tfs).
func (it *iter) next(buf []uint32) (n, first int) {
	first = it.i
	if it.many != nil {
		n = it.many.NextMany(buf)
	} else {
		n = copy(buf, it.p.small[it.i:])
	}
	it.i += n
	return n, first
}
