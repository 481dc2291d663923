package index

import (
	"encoding/binary"
	"slices"

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
// it, in increasing order, each with the term's weighted frequency, the
// document's length and the term's positions in it.
//
// The postings are kept in blocks of blockLen (data), each posting as the
// uvarint gap from the previous id, then the uvarint length<<1 | (tf ≠ 1)
// and, when that bit is set, the frequency byte: a chat message's posting
// takes two or three bytes, and scoring it reads nothing outside its block
// (a document's length looked up by id is a cache miss per posting in a
// large index). The ids are also a roaring bitmap (or a short slice) for
// set operations: totals, phrases, exclusions.
type plist struct {
	small  []uint32        // ids while the list is short
	docs   *roaring.Bitmap // ids once it has grown past smallMax
	pos    []byte          // per posting: uvarint count, then uvarint position deltas
	skip   []uint32        // offset in pos of postings 0, skipEvery, 2*skipEvery, …
	n      uint32
	data   []byte
	blocks []block
	front  []impact // each block's impacts, from its fr to the next one's
	top    []impact // the impacts of the whole list
}

// blockLen is the number of postings per block of a list's blocked ids.
const blockLen = 128

// block describes blockLen postings (fewer in a list's last block): enough
// to skip it whole, and to bound what any of its documents scores for the
// term.
type block struct {
	last uint32 // the largest id in the block
	off  uint32 // offset in data of its first posting
	fr   uint32 // offset in front of its impacts
}

// impact is a posting's term frequency (low 8 bits) and its document's
// length (capped). BM25 grows with the frequency and falls with the
// length, so of a set of postings only those no other beats on both — a
// few, one per distinct frequency at most — can score highest, whatever
// the collection's statistics: the exact bound of the set.
type impact uint32

func impactOf(tf uint8, length uint32) impact { return impact(min(length, 1<<24-1)<<8 | uint32(tf)) }
func (x impact) tf() uint8                    { return uint8(x) }
func (x impact) length() uint32               { return uint32(x) >> 8 }

// addImpact adds x to the set s[from:], dropping what x beats, unless a
// member beats it; s[:from] is left alone. The set is kept in increasing
// frequency, hence increasing length (of two members, the one with the
// higher frequency must be the longer, or it would beat the other): the
// first member of frequency at least x's is the only one that may beat
// it, which for the usual posting (frequency 1) is the first member.
func addImpact(s []impact, from int, x impact) []impact {
	set := s[from:]
	i := 0
	for i < len(set) && set[i].tf() < x.tf() {
		i++
	}
	if i < len(set) && set[i].length() <= x.length() {
		return s
	}
	// x goes at i; before it, those of lower frequency it outlasts go.
	j := i
	for j > 0 && set[j-1].length() >= x.length() {
		j--
	}
	k := i // from k on, those x does not beat stay
	if k < len(set) && set[k].tf() == x.tf() {
		k++ // same frequency, longer: beaten
	}
	if j+1 == k {
		set[j] = x
		return s
	}
	s = slices.Insert(slices.Delete(s, from+j, from+k), from+j, x)
	return s
}

// add appends a posting of a document of the given length; id must exceed
// every id already in the list.
func (p *plist) add(id uint32, tf uint32, length uint32, positions []uint32) {
	p.push(id, uint8(min(tf, 255)), length)
	p.pos = binary.AppendUvarint(p.pos, uint64(len(positions)))
	prev := uint32(0)
	for _, x := range positions {
		p.pos = binary.AppendUvarint(p.pos, uint64(x-prev))
		prev = x
	}
}

// addRaw appends a posting whose positions are already encoded.
func (p *plist) addRaw(id uint32, tf uint8, length uint32, pos []byte) {
	p.push(id, tf, length)
	p.pos = append(p.pos, pos...)
}

// push appends the id and frequency of a posting whose positions the caller
// appends next; length is its document's.
func (p *plist) push(id uint32, tf uint8, length uint32) {
	if p.n%skipEvery == 0 {
		p.skip = append(p.skip, uint32(len(p.pos)))
	}
	p.block(p.n, id, tf, length)
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
	p.n++
}

// block appends posting i to the blocks.
func (p *plist) block(i, id uint32, tf uint8, length uint32) {
	prev := uint32(0)
	if len(p.blocks) > 0 {
		prev = p.blocks[len(p.blocks)-1].last
	}
	if i%blockLen == 0 {
		p.blocks = append(p.blocks, block{off: uint32(len(p.data)), fr: uint32(len(p.front))})
	}
	b := &p.blocks[len(p.blocks)-1]
	p.data = binary.AppendUvarint(p.data, uint64(id-prev))
	if tf == 1 {
		p.data = binary.AppendUvarint(p.data, uint64(length)<<1)
	} else {
		p.data = append(binary.AppendUvarint(p.data, uint64(length)<<1|1), tf)
	}
	b.last = id
	x := impactOf(tf, length)
	p.front = addImpact(p.front, int(b.fr), x)
	p.top = addImpact(p.top, 0, x)
}

// buildBlocks builds the blocks of a list decoded with its ids and their
// frequencies tfs (an older format), its documents' lengths from lens.
func (p *plist) buildBlocks(tfs []uint8, lens []uint32) {
	p.data, p.blocks = make([]byte, 0, 3*p.n), make([]block, 0, (p.n+blockLen-1)/blockLen)
	p.front, p.top = nil, nil
	it := p.iter()
	var buf [256]uint32
	for {
		m, first := it.next(buf[:])
		if m == 0 {
			return
		}
		for j, id := range buf[:m] {
			p.block(uint32(first+j), id, tfs[first+j], lens[id])
		}
	}
}

// postings calls fn with every posting of the list in id order.
func (p *plist) postings(fn func(id uint32, tf uint8, length uint32)) {
	var c pcur
	for c.reset(p, 0); c.doc != noMore; c.next() {
		fn(c.doc, c.tfs[c.i], c.lens[c.i])
	}
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
// the index of the first of them.
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
// skipping the blocks between them: a phrase check seeks each candidate in
// every list.
type cursor struct {
	pc pcur
	pr int // posting index whose positions start at byte po
	po int
}

func (c *cursor) reset(p *plist) {
	c.pc.reset(p, 0)
	c.pr, c.po = 0, 0
}

// seek returns the posting index of id, which must be in the list and no
// smaller than the id of the previous seek.
func (c *cursor) seek(id uint32) int {
	c.pc.advance(id)
	return c.pc.blk*blockLen + c.pc.i
}

// positions appends the positions of posting r to dst, walking on from the
// previous call when r is near, through the skip index when it is far.
func (c *cursor) positions(r int, dst []uint32) []uint32 {
	p := c.pc.p
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
