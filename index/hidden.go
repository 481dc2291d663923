package index

import "github.com/RoaringBitmap/roaring/v2"

// Public statistics. A caller may hide documents from public searches
// (Hide); a Query with Public set never returns them and ranks by the
// statistics of the rest alone — documents, mean length, document
// frequencies — as an index holding only the visible documents would, so a
// public score reveals nothing of hidden text. Deleted documents count in
// document frequencies until Compact, as in every search; one deleted while
// hidden stays out of the public ones.
//
// The statistics are kept as documents change, so a public query costs an
// intersection count per term (roaring AndCardinality) beside what it
// costs anyway, and nothing more while nothing is hidden.

// veiled is the index's hidden set and what it removes from the statistics.
type veiled struct {
	ids  *roaring.Bitmap // hidden: live documents, and ones hidden before their Add
	gone *roaring.Bitmap // deleted while hidden, postings remaining (until Compact)
	live uint64          // live documents in ids
	lens uint64          // the sum of their lengths
}

func newVeiled() veiled { return veiled{ids: roaring.New(), gone: roaring.New()} }

// Hide sets whether document id is hidden from public searches. id may be
// live or not yet added (Add then finds it hidden). A deleted document keeps
// the visibility it had when deleted, so hiding or showing one does
// nothing. O(log n).
func (ix *Index) Hide(id uint32, hidden bool) {
	if id < ix.next && !ix.Contains(id) || hidden == ix.veil.ids.Contains(id) {
		return
	}
	ix.gen++
	if hidden {
		ix.veil.ids.Add(id)
	} else {
		ix.veil.ids.Remove(id)
	}
	if !ix.Contains(id) {
		return
	}
	if hidden {
		ix.veil.live++
		ix.veil.lens += uint64(ix.lens[id])
	} else {
		ix.veil.live--
		ix.veil.lens -= uint64(ix.lens[id])
	}
}

// Hidden reports whether id is a live document hidden from public searches.
func (ix *Index) Hidden(id uint32) bool { return ix.Contains(id) && ix.veil.ids.Contains(id) }

// PublicLen is the number of live documents not hidden. O(1).
func (ix *Index) PublicLen() int { return ix.Len() - int(ix.veil.live) }

// CountHidden returns how many documents of set, live ones, are hidden.
// O(containers).
func (ix *Index) CountHidden(set *roaring.Bitmap) int {
	if ix.veil.live == 0 {
		return 0
	}
	return int(set.AndCardinality(ix.veil.ids))
}

// added and deleted keep the hidden documents' statistics as Add and
// Delete change the index: id of weighted length n.
func (v *veiled) added(id, n uint32) {
	if v.ids.Contains(id) {
		v.live++
		v.lens += uint64(n)
	}
}

func (v *veiled) deleted(id, n uint32) {
	if v.ids.Contains(id) {
		v.live--
		v.lens -= uint64(n)
		v.ids.Remove(id)
		v.gone.Add(id)
	}
}

// public returns the hidden set a public query denies, nil when empty.
func (v *veiled) public() *roaring.Bitmap { return nonEmpty(v.ids) }

func nonEmpty(bm *roaring.Bitmap) *roaring.Bitmap {
	if bm.IsEmpty() {
		return nil
	}
	return bm
}

// stats are the collection statistics one query ranks by.
type stats struct {
	n      float64 // documents
	avgLen float64 // their mean weighted length
	// Postings left out of document frequencies (nil for none): hidden
	// live documents, and deleted ones that were hidden.
	hidden, gone *roaring.Bitmap
}

// statsFor returns the statistics q ranks by: of every document, or of the
// visible ones for a public query. O(1).
func (ix *Index) statsFor(q *Query) stats {
	live, total := ix.live.GetCardinality(), ix.total
	var s stats
	if q.Public {
		live, total = live-ix.veil.live, total-ix.veil.lens
		s.hidden, s.gone = ix.veil.public(), nonEmpty(ix.veil.gone)
	}
	s.n, s.avgLen = float64(live), 1
	if live > 0 {
		s.avgLen = float64(total) / float64(live)
	}
	return s
}

// df is the document frequency of a postings list: its postings less the
// hidden ones. O(1) when nothing is hidden; else an AndCardinality per
// hidden set for a long list, a lookup per posting for a short one.
func (s *stats) df(p *plist) uint32 {
	n := p.n
	for _, veil := range [...]*roaring.Bitmap{s.hidden, s.gone} {
		switch {
		case veil == nil:
		case p.more != nil:
			n -= uint32(p.more.docs.AndCardinality(veil))
		default:
			p.postings(func(id uint32, _ uint8, _ uint32) {
				if veil.Contains(id) {
					n--
				}
			})
		}
	}
	return n
}

// phraseDF is the document frequency of a phrase found in docs (live).
// O(len(docs)) when something is hidden.
func (s *stats) phraseDF(docs []uint32) int {
	n := len(docs)
	if s.hidden != nil {
		for _, id := range docs {
			if s.hidden.Contains(id) {
				n--
			}
		}
	}
	return n
}
