package index

import (
	"maps"

	"github.com/RoaringBitmap/roaring/v2"
)

// Dead is the number of deleted documents whose postings remain.
func (ix *Index) Dead() int { return ix.dead }

// Untidy reports whether Compacted would pay: deleted documents whose
// postings remain above a quarter of the live ones (and over 1,000).
func (ix *Index) Untidy() bool { return ix.dead > 1000 && ix.dead > ix.Len()/4 }

// Compacted returns a copy of ix without the postings of deleted documents,
// every list exactly sized as a loaded snapshot's are (a list grown posting
// by posting holds spare capacity). It only reads ix, so it may run beside
// searches while writes are held off; the caller swaps the copy in. Ids
// are kept. O(postings).
func (ix *Index) Compacted() *Index {
	out := &Index{
		opts:   ix.opts,
		dict:   make(map[string]uint32, len(ix.dict)),
		lens:   append([]uint32(nil), ix.lens...),
		live:   ix.live.Clone(),
		facets: make(map[string]*roaring.Bitmap, len(ix.facets)),
		total:  ix.total,
		next:   ix.next,
		veil:   veiled{ids: ix.veil.ids.Clone(), gone: roaring.New(), live: ix.veil.live, lens: ix.veil.lens},
		lex:    newLexicon(),
		gen:    ix.gen + 1,
	}
	var data, pos []byte // one list's postings, then copied exactly sized
	for li := range ix.lists {
		src := &ix.lists[li]
		data, pos = data[:0], pos[:0]
		n, last, off := uint32(0), uint32(0), 0
		var c pcur
		for c.reset(src, 0); c.doc != noMore; c.next() {
			id, multi, start := c.doc, c.multi(c.i), off
			if !ix.opts.NoPositions {
				off = skipPositions(src.pos, off, multi)
			}
			if ix.lens[id] != 0 {
				data = appendPosting(data, id-last, c.tfs[c.i], c.lens[c.i], multi)
				pos = append(pos, src.pos[start:off]...)
				n, last = n+1, id
			}
		}
		if n > 0 {
			dst, err := out.blocked(n, data, pos)
			if err != nil {
				panic("BUG: index.Compacted wrote a list it cannot read: " + err.Error())
			}
			nli := uint32(len(out.lists))
			out.dict[ix.terms[li]] = nli
			out.lists = append(out.lists, dst)
			out.terms = append(out.terms, ix.terms[li])
			out.lex.add(nli, ix.terms[li])
			if w, ok := ix.lex.words[uint32(li)]; ok {
				out.lex.addWord(nli, w)
			}
			if dst.n >= frequentDF {
				out.lex.frequent(nli, ix.terms[li], dst.n, true)
			}
		}
	}
	for name, bm := range maps.All(ix.facets) {
		if f := roaring.And(bm, ix.live); !f.IsEmpty() {
			out.facets[name] = f
		}
	}
	return out
}
