package index

import (
	"encoding/binary"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

const (
	// smallMax is the length up to which the snapshot format writes a
	// list's ids as gaps rather than as a roaring bitmap.
	smallMax = 32
	// skipEvery is the spacing of the position-offset skip index.
	skipEvery = 32
)

// plist is the postings list of one term: the ids of the documents holding
// it, in increasing order, each with the term's weighted frequency, the
// document's length and the term's positions in it.
//
// The postings are kept in blocks of blockLen (data), each posting as the
// uvarint gap from the previous id, then the uvarint length<<2 | (positions
// ≠ 1)<<1 | (tf ≠ 1) and, when the low bit is set, the frequency byte: a
// chat message's posting takes two or three bytes, and scoring it reads
// nothing outside its block (a document's length looked up by id is a
// cache miss per posting in a large index). The positions (pos) of a
// posting with one position are that position alone; of others, their
// count, then their deltas.
//
// Most terms are rare (half of them in one document), so a list of one
// block is the struct and its two byte slices alone: its block is implied,
// its bounds computed when asked, its ids decoded for a bitmap. A longer
// list has more: the blocks and their bounds, a skip index into the
// positions and its ids as a roaring bitmap for set operations (totals,
// phrases, exclusions).
type plist struct {
	n    uint32
	last uint32 // the largest id
	data []byte // the postings
	pos  []byte // per posting: a uvarint position, or (see data) a count and deltas
	more *more  // for a list of more than one block; nil else
}

// more is what a list of more than one block keeps besides its postings.
type more struct {
	docs   *roaring.Bitmap
	skip   []uint32 // offset in pos of postings 0, skipEvery, 2*skipEvery, …
	blocks []block
	front  []impact // each block's impacts, from its fr to the next one's
	top    []impact // the impacts of the whole list
}

// blockLen is the number of postings per block of a list.
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
	return slices.Insert(slices.Delete(s, from+j, from+k), from+j, x)
}

// add appends a posting of a document of the given length; id must exceed
// every id already in the list.
func (p *plist) add(id uint32, tf uint32, length uint32, positions []uint32) {
	p.push(id, uint8(min(tf, 255)), length, len(positions) != 1)
	if len(positions) != 1 {
		p.pos = binary.AppendUvarint(p.pos, uint64(len(positions)))
	}
	prev := uint32(0)
	for _, x := range positions {
		p.pos = binary.AppendUvarint(p.pos, uint64(x-prev))
		prev = x
	}
}

// push appends the id, frequency and length of a posting whose positions
// the caller appends next; multi says they are not one position (always
// false without positions).
func (p *plist) push(id uint32, tf uint8, length uint32, multi bool) {
	length = min(length, 1<<30-1) // as a block stores it (length<<2 in 32 bits)
	if p.n == blockLen {
		p.grow()
	}
	if m := p.more; m != nil {
		if p.n%skipEvery == 0 {
			m.skip = append(m.skip, uint32(len(p.pos)))
		}
		m.note(p.n, len(p.data), id, impactOf(tf, length))
		m.docs.Add(id)
	}
	p.data = appendPosting(p.data, id-p.last, tf, length, multi)
	p.last = id
	p.n++
}

// appendPosting appends a posting to a list's data: its id's gap from the
// previous one (or the id, first), then its length and flags and, unless
// 1, its frequency.
func appendPosting(data []byte, gap uint32, tf uint8, length uint32, multi bool) []byte {
	data = binary.AppendUvarint(data, uint64(gap))
	x := uint64(length) << 2
	if multi {
		x |= 2
	}
	if tf == 1 {
		return binary.AppendUvarint(data, x)
	}
	return append(binary.AppendUvarint(data, x|1), tf)
}

// note records posting r, at offset off in data, in the blocks and their
// impacts.
func (m *more) note(r uint32, off int, id uint32, x impact) {
	if r%blockLen == 0 {
		m.blocks = append(m.blocks, block{off: uint32(off), fr: uint32(len(m.front))})
	}
	b := &m.blocks[len(m.blocks)-1]
	b.last = id
	m.front = addImpact(m.front, int(b.fr), x)
	m.top = addImpact(m.top, 0, x)
}

// grow gives a list of one full block what a longer list keeps.
func (p *plist) grow() {
	m := &more{docs: roaring.New(), blocks: []block{{last: p.last}}}
	m.front = p.impacts(0)
	m.top = slices.Clone(m.front)
	off := 0
	var c pcur
	for c.reset(p, 0); c.doc != noMore; c.next() {
		if c.i%skipEvery == 0 {
			m.skip = append(m.skip, uint32(off))
		}
		if len(p.pos) > 0 {
			off = skipPositions(p.pos, off, c.multi(c.i))
		}
		m.docs.Add(c.doc)
	}
	p.more = m
}

// skipPositions returns the offset in pos after the positions of the
// posting at off (multi: not one position).
func skipPositions(pos []byte, off int, multi bool) int {
	n := uint64(1)
	if multi {
		var w int
		n, w = binary.Uvarint(pos[off:])
		off += w
	}
	for ; n > 0; off++ {
		if pos[off] < 0x80 {
			n--
		}
	}
	return off
}

// blocks is the number of blocks.
func (p *plist) blocks() int {
	if p.more != nil {
		return len(p.more.blocks)
	}
	if p.n == 0 {
		return 0
	}
	return 1
}

// block returns block b.
func (p *plist) block(b int) block {
	if p.more != nil {
		return p.more.blocks[b]
	}
	return block{last: p.last}
}

// impacts returns the impacts of block b: for a list of one block,
// computed from its postings.
func (p *plist) impacts(b int) []impact {
	if m := p.more; m != nil {
		end := len(m.front)
		if b+1 < len(m.blocks) {
			end = int(m.blocks[b+1].fr)
		}
		return m.front[m.blocks[b].fr:end]
	}
	var xs []impact
	var c pcur
	for c.reset(p, 0); c.doc != noMore; c.next() {
		xs = addImpact(xs, 0, impactOf(c.tfs[c.i], c.lens[c.i]))
	}
	return xs
}

// top returns the impacts of the whole list.
func (p *plist) top() []impact {
	if p.more != nil {
		return p.more.top
	}
	return p.impacts(0)
}

// postings calls fn with every posting of the list in id order.
func (p *plist) postings(fn func(id uint32, tf uint8, length uint32)) {
	var c pcur
	for c.reset(p, 0); c.doc != noMore; c.next() {
		fn(c.doc, c.tfs[c.i], c.lens[c.i])
	}
}

// bitmap returns the ids as a bitmap, the list's own for a list of more
// than one block (not to be changed), else a new one.
func (p *plist) bitmap() *roaring.Bitmap {
	if p.more != nil {
		return p.more.docs
	}
	var ids [blockLen]uint32
	var c pcur
	n := 0
	for c.reset(p, 0); c.doc != noMore; c.next() {
		ids[n] = c.doc
		n++
	}
	return roaring.BitmapOf(ids[:n]...)
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

// positions appends the positions of posting r, the one the last seek
// found, to dst, walking on from the previous call when r is near, through
// the skip index when it is far. The postings walked over are in r's
// block (skipEvery divides blockLen), whose flags the seek decoded.
func (c *cursor) positions(r int, dst []uint32) []uint32 {
	p, pc := c.pc.p, &c.pc
	if m := p.more; m != nil && (r < c.pr || r/skipEvery != c.pr/skipEvery) {
		c.pr, c.po = r-r%skipEvery, int(m.skip[r/skipEvery])
	} else if r < c.pr {
		c.pr, c.po = 0, 0
	}
	base := pc.blk * blockLen
	for ; c.pr < r; c.pr++ {
		c.po = skipPositions(p.pos, c.po, pc.multi(c.pr-base))
	}
	n := uint64(1)
	if pc.multi(r - base) {
		var w int
		n, w = binary.Uvarint(p.pos[c.po:])
		c.po += w
	}
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
