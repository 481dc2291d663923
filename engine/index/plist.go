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

// cursor finds the posting index of increasing ids of a postings list,
// walking it once: a phrase check seeks each candidate in every list.
type cursor struct {
	p    *plist
	it   roaring.ManyIntIterable
	buf  [256]uint32
	n, i int // ids in buf, and the next one to look at
	base int // posting index of buf[0]
	pr   int // posting index whose positions start at byte po
	po   int
}

func newCursor(p *plist) cursor {
	c := cursor{p: p}
	if p.docs != nil {
		c.it = p.docs.ManyIterator()
	}
	return c
}

// seek returns the posting index of id, which must be in the list and no
// smaller than the id of the previous seek.
func (c *cursor) seek(id uint32) int {
	if c.p.docs == nil {
		s := c.p.small
		c.i += sort.Search(len(s)-c.i, func(k int) bool { return s[c.i+k] >= id })
		return c.i
	}
	for {
		if c.i < c.n && c.buf[c.n-1] >= id {
			c.i += sort.Search(c.n-c.i, func(k int) bool { return c.buf[c.i+k] >= id })
			return c.base + c.i
		}
		c.base += c.n
		c.n, c.i = c.it.NextMany(c.buf[:]), 0
		if c.n == 0 {
			return int(c.p.n) - 1 // not reached for ids of the list
		}
	}
}

// positions appends the positions of posting r to dst, walking on from the
// previous call when r is near, through the skip index when it is far.
func (c *cursor) positions(r int, dst []uint32) []uint32 {
	p := c.p
	if r < c.pr || r/skipEvery != c.pr/skipEvery {
		c.pr, c.po = r-r%skipEvery, int(p.skip[r/skipEvery])
	}
	for ; c.pr < r; c.pr++ {
		n, w := binary.Uvarint(p.pos[c.po:])
		c.po += w
		for ; n > 0; c.po++ {
			if p.pos[c.po] < 0x80 {
				n--
			}
		}
	}
	n, w := binary.Uvarint(p.pos[c.po:])
	c.po += w
	prev := uint32(0)
	for ; n > 0; n-- {
		d, w := binary.Uvarint(p.pos[c.po:])
		c.po += w
		prev += uint32(d)
		dst = append(dst, prev)
	}
	c.pr++
	return dst
}
