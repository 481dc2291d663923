package index

import (
	"maps"

	"github.com/RoaringBitmap/roaring/v2"
)

// Dead is the number of deleted documents whose postings remain.
func (ix *Index) Dead() int { return ix.dead }

// Compacted returns a copy of ix without the postings of deleted documents.
// It only reads ix, so it may run beside searches while writes are held off;
// the caller swaps the copy in. Ids are kept. O(postings).
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
	for li := range ix.lists {
		src := &ix.lists[li]
		var dst plist
		off := 0
		var c pcur
		for c.reset(src, 0); c.doc != noMore; c.next() {
			id, multi, start := c.doc, c.multi(c.i), off
			if !ix.opts.NoPositions {
				off = skipPositions(src.pos, off, multi)
			}
			if ix.lens[id] != 0 {
				dst.addRaw(id, c.tfs[c.i], c.lens[c.i], multi, src.pos[start:off])
			}
		}
		if dst.n > 0 {
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
