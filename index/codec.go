package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/sift-search/sift/internal/bin"
)

// codecVersion is the version of the encoding written by Encode; see
// docs/format.md. Versions 1 (no positions flag, always positions) and 2
// (no written forms of stems) are read.
const codecVersion = 4

// termsPerBlock and blockBytes bound the blocks Encode emits (a single
// postings list may still make a bigger one).
const (
	termsPerBlock = 4096
	blockBytes    = 4 << 20
)

// ErrCorrupt wraps every decoding failure.
var ErrCorrupt = errors.New("corrupt index")

// Encode writes the index as a sequence of blocks, each handed to emit (which
// must not keep the slice). The output depends only on the order of the
// operations that built the index, so equal histories give equal bytes.
func (ix *Index) Encode(emit func(block []byte) error) error {
	var e bin.Enc
	e.Uvarint(codecVersion)
	e.Bool(ix.opts.NoPositions)
	e.Uvarint(uint64(ix.next))
	e.Uvarint(uint64(ix.dead))
	for _, l := range ix.lens[:ix.next] {
		e.Uvarint(uint64(l))
	}
	if err := appendBitmap(&e, ix.live); err != nil {
		return err
	}
	e.Uvarint(uint64(len(ix.lists)))
	if err := emit(e.B); err != nil {
		return err
	}
	var block bin.Enc
	for start := 0; start < len(ix.lists); {
		e.B = e.B[:0]
		end := start
		for ; end < len(ix.lists) && end-start < termsPerBlock && len(e.B) < blockBytes; end++ {
			if err := appendList(&e, ix.terms[end], ix.lex.words[uint32(end)], &ix.lists[end]); err != nil {
				return err
			}
		}
		block.B = block.B[:0]
		block.Uvarint(uint64(end - start))
		block.B = append(block.B, e.B...)
		if err := emit(block.B); err != nil {
			return err
		}
		start = end
	}
	e.B = e.B[:0]
	e.Uvarint(uint64(len(ix.facets)))
	for name, bm := range sortedFacets(ix.facets) {
		e.String(name)
		if err := appendBitmap(&e, bm); err != nil {
			return err
		}
	}
	return emit(e.B)
}

func appendList(e *bin.Enc, term, word string, p *plist) error {
	e.String(term)
	e.String(word)
	e.Uvarint(uint64(p.n))
	e.Bytes(p.data)
	e.Bytes(p.pos)
	return nil
}

func appendBitmap(e *bin.Enc, bm *roaring.Bitmap) error {
	b, err := bm.ToBytes()
	if err != nil {
		return fmt.Errorf("encode bitmap: %w", err)
	}
	e.Bytes(b)
	return nil
}

// Decode reads an index written by Encode, calling next for each block, and
// validates it fully: a decoded index never panics in use.
func Decode(opts Options, next func() ([]byte, error)) (*Index, error) {
	ix := New(opts)
	b, err := next()
	if err != nil {
		return nil, err
	}
	d := bin.Dec{B: b}
	v := d.Uvarint()
	if d.Err == nil && (v < 1 || v > codecVersion) {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorrupt, v)
	}
	if noPos := v >= 2 && d.Bool(); d.Err == nil && noPos != opts.NoPositions {
		return nil, fmt.Errorf("%w: positions stored %v, expected %v", ErrCorrupt, !noPos, !opts.NoPositions)
	}
	n := d.Uvarint()
	ix.dead = int(d.Uvarint())
	if d.Err != nil || n > uint64(d.Len()) || n > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d lengths in %d bytes", ErrCorrupt, n, d.Len())
	}
	ix.next = uint32(n)
	ix.lens = make([]uint32, n)
	for i := range ix.lens {
		ix.lens[i] = uint32(d.Uvarint())
	}
	if ix.live, err = decodeBitmap(&d, ix.next); err != nil {
		return nil, err
	}
	nterms := d.Uvarint()
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	dec := decoder{ix: ix, version: v}
	ix.live.Iterate(func(id uint32) bool {
		ix.total += uint64(ix.lens[id])
		if ix.lens[id] == 0 {
			err = fmt.Errorf("%w: live document %d has no length", ErrCorrupt, id)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	ix.lists = make([]plist, 0, min(nterms, 1<<20))
	ix.terms = make([]string, 0, min(nterms, 1<<20))
	for uint64(len(ix.lists)) < nterms {
		if b, err = next(); err != nil {
			return nil, err
		}
		d = bin.Dec{B: b}
		c := d.Count(1)
		if c == 0 || uint64(c) > nterms-uint64(len(ix.lists)) {
			return nil, fmt.Errorf("%w: term block of %d", ErrCorrupt, c)
		}
		for ; c > 0 && d.Err == nil; c-- {
			if err := dec.list(&d); err != nil {
				return nil, err
			}
		}
		if err := d.Done(); err != nil {
			return nil, fmt.Errorf("%w: terms: %v", ErrCorrupt, err)
		}
	}
	if b, err = next(); err != nil {
		return nil, err
	}
	d = bin.Dec{B: b}
	nfacets := d.Count(2)
	for i := 0; i < nfacets; i++ {
		name := d.String()
		bm, err := decodeBitmap(&d, ix.next)
		if err != nil {
			return nil, err
		}
		ix.facets[name] = bm
	}
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("%w: facets: %v", ErrCorrupt, err)
	}
	ix.veil.afterLoad(ix.live, ix.next, ix.dead)
	return ix, nil
}

// decoder fills an index from the term blocks of one encoding.
type decoder struct {
	ix      *Index
	version uint64 // the encoding's codecVersion
}

// afterLoad counts every deleted document whose postings remain (dead of
// them: the ids below next not live) as deleted while hidden: which ones
// were is not saved, and a public search must not count one that was (see
// Hide). So after a load, public document frequencies leave out every
// deleted document until Compact, as if compacted; hidden live documents
// are the caller's to Hide again.
func (v *veiled) afterLoad(live *roaring.Bitmap, next uint32, dead int) {
	if dead > 0 {
		v.gone = roaring.Flip(live, 0, uint64(next))
		v.gone.RunOptimize()
	}
}

// list decodes the postings list of one term.
func (dec decoder) list(d *bin.Dec) error {
	ix := dec.ix
	term := d.String()
	var word string
	if dec.version >= 3 {
		word = d.String()
	}
	n := d.Uvarint()
	if d.Err != nil || n == 0 || n > uint64(ix.next) {
		return fmt.Errorf("%w: term %q: %d postings", ErrCorrupt, term, n)
	}
	if _, dup := ix.dict[term]; dup {
		return fmt.Errorf("%w: term %q twice", ErrCorrupt, term)
	}
	if dec.version >= 4 {
		p, err := dec.blocked(d, uint32(n))
		if err != nil {
			return fmt.Errorf("%w: term %q: %v", ErrCorrupt, term, err)
		}
		dec.install(term, word, p)
		return nil
	}
	var ids []uint32
	if n <= smallMax {
		ids = make([]uint32, n)
		prev := uint64(0)
		for i := range ids {
			delta := d.Uvarint()
			if i > 0 && delta == 0 || prev+delta >= uint64(ix.next) {
				return fmt.Errorf("%w: term %q: ids out of order", ErrCorrupt, term)
			}
			prev += delta
			ids[i] = uint32(prev)
		}
	} else {
		bm, err := decodeBitmap(d, ix.next)
		if err != nil {
			return err
		}
		if bm.GetCardinality() != n {
			return fmt.Errorf("%w: term %q: %d ids, want %d", ErrCorrupt, term, bm.GetCardinality(), n)
		}
		ids = bm.ToArray()
	}
	tfs, pos := d.Bytes(), d.Bytes()
	if d.Err != nil || len(tfs) != int(n) {
		return fmt.Errorf("%w: term %q: frequencies", ErrCorrupt, term)
	}
	if ix.opts.NoPositions && len(pos) != 0 {
		return fmt.Errorf("%w: term %q: positions in an index without them", ErrCorrupt, term)
	}
	var p plist
	off := 0
	var positions []uint32
	for i, id := range ids {
		if ix.opts.NoPositions {
			p.push(id, tfs[i], ix.lens[id], false)
			continue
		}
		var err error
		if positions, off, err = readPositions(positions[:0], pos, off); err != nil {
			return fmt.Errorf("%w: term %q: %v", ErrCorrupt, term, err)
		}
		p.add(id, uint32(tfs[i]), ix.lens[id], positions)
	}
	if off != len(pos) {
		return fmt.Errorf("%w: term %q: trailing position bytes", ErrCorrupt, term)
	}
	dec.install(term, word, p)
	return nil
}

// install adds a decoded list under term.
func (dec decoder) install(term, word string, p plist) {
	ix := dec.ix
	li := ix.newTerm(term, word)
	ix.lists[li] = p
	if p.n >= frequentDF {
		ix.lex.frequent(li, term, p.n, true)
	}
}

// blocked reads a list of n postings as version 4 writes it (its
// blocked postings and its positions) and checks it whole: ids increasing
// and below the index's next, frequencies and lengths well formed, one set
// of positions per posting. The blocks, their bounds, the skip index and,
// for a list of more than one block, its id bitmap are rebuilt from it, a
// pass over the bytes: no posting is encoded again.
func (dec decoder) blocked(d *bin.Dec, n uint32) (plist, error) {
	data, pos := d.Bytes(), d.Bytes()
	if d.Err != nil {
		return plist{}, d.Err
	}
	return dec.ix.blocked(n, data, pos)
}

// exact returns a copy of b in an array of its length (slices.Clone
// rounds the capacity up to the allocator's size class).
func exact(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// blocked returns the list of n postings held in data and pos (as plist
// keeps them), checked whole, in exactly sized copies (data and pos are
// not kept), with its blocks, bounds, skip index and id bitmap built in
// one pass.
func (ix *Index) blocked(n uint32, data, pos []byte) (plist, error) {
	if n == 0 {
		return plist{}, errors.New("no postings")
	}
	p := plist{n: n, data: exact(data), pos: exact(pos)}
	var m *more
	var ids []uint32
	if n > blockLen {
		m = &more{blocks: make([]block, 0, (n+blockLen-1)/blockLen)}
		ids = make([]uint32, 0, n)
	}
	multi := make([]uint64, (n+63)/64)
	data, off, id := p.data, 0, uint32(0)
	for r := uint32(0); r < n; r++ {
		start := off
		gap, w := binary.Uvarint(data[off:])
		if w <= 0 || (r > 0 && gap == 0) || uint64(id)+gap >= uint64(ix.next) {
			return p, errors.New("ids out of order")
		}
		id += uint32(gap)
		off += w
		x, w := binary.Uvarint(data[off:])
		if w <= 0 || x>>2 > math.MaxUint32>>2 {
			return p, errors.New("bad length")
		}
		off += w
		if x&2 != 0 {
			multi[r>>6] |= 1 << (r & 63)
		}
		tf := uint8(1)
		if x&1 != 0 {
			if off >= len(data) || data[off] == 0 {
				return p, errors.New("bad frequency")
			}
			tf = data[off]
			off++
		}
		if m != nil {
			ids = append(ids, id)
			m.note(r, start, id, impactOf(tf, uint32(x>>2)))
		}
	}
	if off != len(data) {
		return p, errors.New("trailing posting bytes")
	}
	p.last = id
	if m != nil {
		m.docs = roaring.BitmapOf(ids...)
	}
	poff := 0
	for r := uint32(0); r < n && !ix.opts.NoPositions; r++ {
		if m != nil && r%skipEvery == 0 {
			m.skip = append(m.skip, uint32(poff))
		}
		var err error
		if poff, err = checkPositions(p.pos, poff, multi[r>>6]&(1<<(r&63)) != 0); err != nil {
			return p, err
		}
	}
	if ix.opts.NoPositions && m != nil {
		m.skip = make([]uint32, (n+skipEvery-1)/skipEvery)
	}
	if poff != len(p.pos) {
		return p, errors.New("trailing position bytes")
	}
	p.more = m
	return p, nil
}

// readPositions appends to dst the positions of the posting at off in pos
// as versions 1 to 3 write them (a count, then deltas) and returns them
// with the offset after them, or why they are not well formed.
func readPositions(dst []uint32, pos []byte, off int) ([]uint32, int, error) {
	c, w := binary.Uvarint(pos[off:])
	if w <= 0 || c > uint64(len(pos)-off) {
		return dst, 0, errors.New("bad position count")
	}
	off += w
	prev := uint64(0)
	for ; c > 0; c-- {
		d, w := binary.Uvarint(pos[off:])
		if w <= 0 || prev+d > math.MaxUint32 {
			return dst, 0, errors.New("bad position")
		}
		prev += d
		dst = append(dst, uint32(prev))
		off += w
	}
	return dst, off, nil
}

// checkPositions returns the offset after the positions of the posting at
// off in pos as version 4 writes them (multi: a count first), or why they
// are not well formed.
func checkPositions(pos []byte, off int, multi bool) (int, error) {
	c := uint64(1)
	if multi {
		var w int
		c, w = binary.Uvarint(pos[off:])
		if w <= 0 || c > uint64(len(pos)-off) {
			return 0, errors.New("bad position count")
		}
		off += w
	}
	for ; c > 0; c-- {
		if off >= len(pos) {
			return 0, errors.New("positions cut short")
		}
		_, w := binary.Uvarint(pos[off:])
		if w <= 0 {
			return 0, errors.New("bad position")
		}
		off += w
	}
	return off, nil
}

// decodeBitmap reads a bitmap whose values must lie below limit.
func decodeBitmap(d *bin.Dec, limit uint32) (bm *roaring.Bitmap, err error) {
	b := d.Bytes()
	if d.Err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, d.Err)
	}
	bm = roaring.New()
	defer func() {
		// roaring validates what it reads, but it is third-party code facing
		// untrusted bytes: a panic there is a corrupt file, not a crash.
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("%w: bitmap: %v", ErrCorrupt, r)
		}
	}()
	if err := bm.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%w: bitmap: %v", ErrCorrupt, err)
	}
	if err := bm.Validate(); err != nil {
		return nil, fmt.Errorf("%w: bitmap: %v", ErrCorrupt, err)
	}
	if !bm.IsEmpty() && bm.Maximum() >= limit {
		return nil, fmt.Errorf("%w: bitmap value %d out of range", ErrCorrupt, bm.Maximum())
	}
	return bm, nil
}

// sortedFacets yields facets in name order.
func sortedFacets(m map[string]*roaring.Bitmap) func(func(string, *roaring.Bitmap) bool) {
	return func(yield func(string, *roaring.Bitmap) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}
