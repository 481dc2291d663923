package index

import "unsafe"

// Footprint is the memory an Index holds, by structure, in bytes of
// allocated capacity (what the heap holds, slack included). Map overheads
// are estimated.
type Footprint struct {
	IDs        int64 // the lists themselves and the roaring bitmaps of the long ones
	Blocks     int64 // blocked postings (ids, lengths, frequencies) and their bounds
	Positions  int64 // positions and their skip index
	Dictionary int64 // terms, the term map and the lexicon
	Documents  int64 // lengths, liveness, hidden sets and facets
}

// Total is the sum of the parts.
func (f Footprint) Total() int64 { return f.IDs + f.Blocks + f.Positions + f.Dictionary + f.Documents }

// Footprint measures ix. O(terms).
func (ix *Index) Footprint() Footprint {
	var f Footprint
	const (
		sliceHdr  = int64(unsafe.Sizeof([]byte(nil)))
		stringHdr = int64(unsafe.Sizeof(""))
		mapEntry  = 16 // a Go map's control byte and slack per entry, roughly
	)
	f.IDs = int64(cap(ix.lists)) * int64(unsafe.Sizeof(plist{}))
	for i := range ix.lists {
		p := &ix.lists[i]
		f.Blocks += int64(cap(p.data))
		f.Positions += int64(cap(p.pos))
		if m := p.more; m != nil {
			f.IDs += int64(m.docs.GetSizeInBytes()) + 48
			f.Blocks += int64(unsafe.Sizeof(more{})) + int64(cap(m.blocks))*int64(unsafe.Sizeof(block{})) + int64(cap(m.front)+cap(m.top))*4
			f.Positions += int64(cap(m.skip)) * 4
		}
	}
	for _, c := range ix.text.chunks {
		f.Dictionary += int64(cap(c))
	}
	f.Dictionary += int64(cap(ix.terms))*stringHdr + int64(len(ix.dict))*(stringHdr+4+mapEntry)
	for _, m := range []map[lexKey]*bucket{ix.lex.buckets, ix.lex.wordBuckets} {
		for _, b := range m {
			f.Dictionary += int64(cap(b.ids)+cap(b.ends))*4 + int64(cap(b.text)) + 3*sliceHdr
		}
	}
	for _, t := range ix.lex.tiers {
		for _, m := range []map[lexKey]*bucket{t.buckets, t.wordBuckets} {
			for _, b := range m {
				f.Dictionary += int64(cap(b.ids)+cap(b.ends))*4 + int64(cap(b.text)) + 3*sliceHdr
			}
		}
	}
	for _, w := range ix.lex.words {
		f.Dictionary += int64(len(w)) + stringHdr + 4 + mapEntry
	}
	f.Documents = int64(cap(ix.lens))*4 + int64(ix.live.GetSizeInBytes()) +
		int64(ix.veil.ids.GetSizeInBytes()+ix.veil.gone.GetSizeInBytes())
	for name, bm := range ix.facets {
		f.Documents += int64(len(name)) + stringHdr + mapEntry + int64(bm.GetSizeInBytes())
	}
	return f
}
