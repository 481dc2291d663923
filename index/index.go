package index

import (
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// Options are the ranking parameters of an Index.
type Options struct {
	K1 float64 // BM25 term-frequency saturation
	B  float64 // BM25 length normalisation
	// NoPositions keeps no term positions: a smaller index whose phrases
	// only require their terms, in any order.
	NoPositions bool
}

// DefaultOptions returns the BM25 parameters Sift ranks with.
func DefaultOptions() Options { return Options{K1: 1.2, B: 0.75} }

// Index is an inverted index over documents numbered by the caller, some of
// which the caller may hide from public searches (Hide). It is not safe for
// concurrent use: the engine guards it with a read-write lock (any number of
// Search calls, or one Add/Delete/Hide).
type Index struct {
	opts   Options
	dict   map[string]uint32 // term -> index in lists and terms
	lists  []plist
	terms  []string
	lens   []uint32 // weighted length by document id; 0 = absent or deleted
	live   *roaring.Bitmap
	facets map[string]*roaring.Bitmap
	total  uint64    // sum of lens of live documents
	next   uint32    // every id added so far is below next
	dead   int       // deleted documents whose postings remain (see Compacted)
	veil   veiled    // what public searches leave out (hidden.go)
	text   textArena // the terms' text
	lex    lexicon
	gen    uint64 // counts changes: Add, Delete, Hide
}

// New returns an empty Index.
func New(opts Options) *Index {
	return &Index{
		opts:   opts,
		dict:   make(map[string]uint32),
		live:   roaring.New(),
		facets: make(map[string]*roaring.Bitmap),
		veil:   newVeiled(),
		lex:    newLexicon(),
	}
}

// Doc collects the term occurrences of one document before Add.
type Doc struct {
	occ    []occ
	Length uint32 // weighted length: the sum of the weights of counted occurrences
}

type occ struct {
	term   string
	word   string // as written (folded), when term is a stem of it
	pos    uint32
	weight uint8
}

// Reset empties d for reuse.
func (d *Doc) Reset() { d.occ, d.Length = d.occ[:0], 0 }

// Add records an occurrence of term at pos. weight is what it adds to the
// term's frequency (a title word may count 3); counted says whether it adds
// to the document's length (tokens overlapping another at the same position,
// such as a compound kept whole beside its parts, do not).
func (d *Doc) Add(term string, pos uint32, weight uint8, counted bool) {
	d.AddWord(term, "", pos, weight, counted)
}

// AddWord is Add for a term that is a stem of word: the index keeps one
// written form of each stem for completions.
func (d *Doc) AddWord(term, word string, pos uint32, weight uint8, counted bool) {
	d.occ = append(d.occ, occ{term, word, pos, weight})
	if counted {
		d.Length += uint32(weight)
	}
}

// group orders the occurrences so that those of a term are adjacent and in
// position order. A short document (a chat message) is grouped by a stable
// insertion pass that compares terms for equality only; a long one is sorted.
func (d *Doc) group() {
	if len(d.occ) > 48 || !slices.IsSortedFunc(d.occ, func(a, b occ) int { return int(a.pos) - int(b.pos) }) {
		slices.SortFunc(d.occ, func(a, b occ) int {
			if c := strings.Compare(a.term, b.term); c != 0 {
				return c
			}
			return int(a.pos) - int(b.pos)
		})
		return
	}
	// Occurrences are in position order, so moving each one up behind the
	// last earlier occurrence of its term keeps every group in that order.
	for i := 1; i < len(d.occ); i++ {
		x := d.occ[i]
		j := i - 1
		for j >= 0 && d.occ[j].term != x.term {
			j--
		}
		if j < 0 || j == i-1 {
			continue
		}
		copy(d.occ[j+2:i+1], d.occ[j+1:i])
		d.occ[j+1] = x
	}
}

// Len is the number of documents added and not deleted.
func (ix *Index) Len() int { return int(ix.live.GetCardinality()) }

// Terms is the number of distinct terms.
func (ix *Index) Terms() int { return len(ix.dict) }

// NextID is the smallest id Add accepts.
func (ix *Index) NextID() uint32 { return ix.next }

// Contains reports whether id is a live document.
func (ix *Index) Contains(id uint32) bool { return int(id) < len(ix.lens) && ix.live.Contains(id) }

// Add indexes d under id, tagged with facets (such as "s:<source>") for
// filtering. id must be at least NextID: ids only grow, which keeps every
// postings list an append. d is sorted in place.
func (ix *Index) Add(id uint32, d *Doc, facets []string) {
	if id < ix.next {
		panic("BUG: index.Add with a non-increasing id")
	}
	d.group()
	length := max(d.Length, 1)
	var positions []uint32
	for i := 0; i < len(d.occ); {
		t, word := d.occ[i].term, d.occ[i].word
		tf := uint32(0)
		positions = positions[:0]
		for ; i < len(d.occ) && d.occ[i].term == t; i++ {
			tf += uint32(d.occ[i].weight)
			if d.occ[i].word == "" {
				word = "" // written as itself here
			}
			if n := len(positions); n == 0 || positions[n-1] != d.occ[i].pos {
				positions = append(positions, d.occ[i].pos)
			}
		}
		li, ok := ix.dict[t]
		if !ok {
			li = ix.newTerm(t, word)
		} else if word == "" {
			ix.lex.isWord(li) // written as itself: shown as itself
		}
		if ix.opts.NoPositions {
			ix.lists[li].push(id, uint8(min(max(tf, 1), 255)), length, false)
		} else {
			ix.lists[li].add(id, max(tf, 1), length, positions)
		}
		if n := ix.lists[li].n; n >= frequentDF {
			ix.lex.frequent(li, t, n, false)
		}
	}
	for uint32(len(ix.lens)) <= id {
		ix.lens = append(ix.lens, 0)
	}
	ix.lens[id] = length
	ix.total += uint64(ix.lens[id])
	ix.live.Add(id)
	ix.gen++
	ix.veil.added(id, length)
	for _, f := range facets {
		bm := ix.facets[f]
		if bm == nil {
			bm = roaring.New()
			ix.facets[strings.Clone(f)] = bm
		}
		bm.Add(id)
	}
	ix.next = id + 1
}

// Delete removes document id; its postings stay until Compact but no search
// returns it. Deleting an absent id does nothing.
func (ix *Index) Delete(id uint32) {
	if !ix.Contains(id) {
		return
	}
	ix.veil.deleted(id, ix.lens[id])
	ix.gen++
	ix.total -= uint64(ix.lens[id])
	ix.lens[id] = 0
	ix.live.Remove(id)
	ix.dead++
}

// Facet returns the live documents tagged f. The bitmap is the caller's.
func (ix *Index) Facet(f string) *roaring.Bitmap {
	bm := ix.facets[f]
	if bm == nil {
		return roaring.New()
	}
	return roaring.And(bm, ix.live)
}

// Tag returns the documents tagged f, deleted ones included, as the
// index's own bitmap (empty when none): a Query's Filter that costs no
// copy. The caller must not change it.
func (ix *Index) Tag(f string) *roaring.Bitmap {
	if bm := ix.facets[f]; bm != nil {
		return bm
	}
	return roaring.New()
}

// Live returns a copy of the set of live documents.
func (ix *Index) Live() *roaring.Bitmap { return ix.live.Clone() }

// DocFreq returns the number of documents holding term, deleted ones included
// until the next Compact.
func (ix *Index) DocFreq(term string) int {
	if li, ok := ix.dict[term]; ok {
		return int(ix.lists[li].n)
	}
	return 0
}

// Generation changes whenever a document is added, deleted or hidden: a
// key for what callers derive from the index.
func (ix *Index) Generation() uint64 { return ix.gen }

// FacetCount returns how many live documents are tagged f, and how many
// live ones there are: of those a public search sees, when public.
func (ix *Index) FacetCount(f string, public bool) (n, of int) {
	of = ix.Len()
	if public {
		of = ix.PublicLen()
	}
	bm := ix.facets[f]
	if bm == nil {
		return 0, of
	}
	c := bm.AndCardinality(ix.live)
	if c > 0 && public {
		if veil := ix.veil.public(); veil != nil {
			c -= roaring.And(bm, ix.live).AndCardinality(veil)
		}
	}
	return int(c), of
}

// Tagged reports whether document id is tagged f.
func (ix *Index) Tagged(f string, id uint32) bool {
	bm := ix.facets[f]
	return bm != nil && bm.Contains(id)
}
