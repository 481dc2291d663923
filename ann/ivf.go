package ann

import (
	"fmt"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// IVFOptions shape an IVF index.
type IVFOptions struct {
	NList  int // clusters; 0 = √n
	NProbe int // clusters a search scans; 0 = a default for NList
	Iters  int // k-means iterations; 0 = 10
	Sample int // vectors k-means trains on; 0 = 64 per cluster
	Seed   uint64
	// Quantize stores each vector as int8 codes instead of floats, a
	// quarter of the memory; scores are then approximate. See quant.go.
	Quantize bool
}

// IVF is an inverted-file index: vectors are grouped by their nearest
// k-means centroid, each group stored contiguously, and a search scans the
// NProbe groups whose centroids are nearest the query. Not safe for
// concurrent use with writes; concurrent searches are fine.
type IVF struct {
	dims    int
	nprobe  int
	cent    []float32 // nlist*dims
	lists   []ivfList
	where   map[uint32]uint64 // id -> list<<32 | position in the list
	trained int               // vectors the centroids were trained on
	skew    int               // the largest list once built or loaded: drift is growth beyond twice it
	n       int
	quant   *quantizer // nil unless quantised
}

// An ivfList holds a cluster's vectors: floats, or codes when the index is
// quantised (never both).
type ivfList struct {
	ids   []uint32
	vecs  []float32
	codes []int8
}

// DefaultNProbe is the number of clusters scanned by default: a sixteenth
// of them, at least 16 — a recall@10 above 0.95 on clustered data (see the
// benchmarks) for a sixteenth of a flat scan's work.
func DefaultNProbe(nlist int) int { return min(nlist, max(16, nlist/16)) }

// Resolve fills opts' zero fields with their defaults for an index of n
// vectors.
func (opts IVFOptions) Resolve(n int) IVFOptions {
	if opts.NList <= 0 {
		opts.NList = max(1, int(math.Sqrt(float64(n))))
	}
	opts.NList = min(opts.NList, max(n, 1))
	if opts.NProbe <= 0 {
		opts.NProbe = DefaultNProbe(opts.NList)
	}
	if opts.Iters <= 0 {
		opts.Iters = 10
	}
	if opts.Sample <= 0 {
		opts.Sample = 64 * opts.NList
	}
	return opts
}

// BuildIVF trains an IVF index on the vectors of src and adds them all.
// Besides the index, it needs memory for the training sample and one
// batch of vectors. A quantised index rebuilt from a quantised one keeps
// its scales, so its vectors' codes do not change.
func BuildIVF(src Index, opts IVFOptions) *IVF {
	dims, n := src.Dims(), src.Len()
	opts = opts.Resolve(n)
	// Train on an evenly spaced sample: deterministic, and spread over the
	// whole insertion history.
	step := max(1, n/opts.Sample)
	sample := make([]float32, 0, min(n, opts.Sample)*dims)
	i := 0
	src.Each(func(_ uint32, v []float32) bool {
		if i%step == 0 && len(sample) < opts.Sample*dims {
			sample = append(sample, v...)
		}
		i++
		return true
	})
	x := TrainIVF(sample, dims, n, opts)
	if old, ok := src.(*IVF); ok && old.quant != nil && x.quant != nil {
		x.quant = old.quant
	}
	const batch = 16384
	ids := make([]uint32, 0, batch)
	vecs := make([]float32, 0, batch*dims)
	src.Each(func(id uint32, v []float32) bool {
		ids, vecs = append(ids, id), append(vecs, v...)
		if len(ids) == batch {
			x.AddBatch(ids, vecs)
			ids, vecs = ids[:0], vecs[:0]
		}
		return true
	})
	x.AddBatch(ids, vecs)
	x.skew = x.biggest()
	return x
}

// biggest is the length of the longest list.
func (x *IVF) biggest() int {
	b := 0
	for _, l := range x.lists {
		b = max(b, len(l.ids))
	}
	return b
}

// TrainIVF returns an empty IVF index whose clusters are trained on sample
// (vectors of dims components, opts.Sample of them at most are used), for
// an index expected to hold n vectors: Drifted measures growth from n.
// Fill it with Add or AddBatch. The k-means runs on every core.
func TrainIVF(sample []float32, dims, n int, opts IVFOptions) *IVF {
	opts = opts.Resolve(n)
	sample = sample[:min(len(sample), opts.Sample*dims)/dims*dims]
	x := &IVF{dims: dims, nprobe: opts.NProbe, where: make(map[uint32]uint64, n), trained: n}
	if len(sample) == 0 {
		x.cent = make([]float32, dims) // one empty cluster
		x.lists = make([]ivfList, 1)
		return x
	}
	x.cent = kmeans(sample, dims, opts.NList, opts.Iters, opts.Seed)
	if opts.Quantize {
		x.quant = newQuantizer(sample, dims)
	}
	x.lists = make([]ivfList, len(x.cent)/dims)
	return x
}

// AddBatch adds the vectors vecs (len(ids)*dims components), vecs[i*dims:]
// under ids[i], finding their clusters on every core. O(len(ids)·nlist·dims).
func (x *IVF) AddBatch(ids []uint32, vecs []float32) {
	if len(vecs) != len(ids)*x.dims {
		panic(fmt.Sprintf("BUG: ann: %d components for %d %d-dimensional vectors", len(vecs), len(ids), x.dims))
	}
	assign := make([]int32, len(ids))
	assignAll(vecs, x.dims, x.cent, assign)
	for i, c := range assign {
		x.Delete(ids[i])
		x.put(int(c), ids[i], vecs[i*x.dims:(i+1)*x.dims])
	}
}

func (x *IVF) Dims() int       { return x.dims }
func (x *IVF) Len() int        { return x.n }
func (x *IVF) NList() int      { return len(x.lists) }
func (x *IVF) NProbe() int     { return x.nprobe }
func (x *IVF) SetNProbe(n int) { x.nprobe = min(max(n, 1), len(x.lists)) }

func (x *IVF) put(c int, id uint32, v []float32) {
	l := &x.lists[c]
	x.where[id] = uint64(c)<<32 | uint64(len(l.ids))
	l.ids = append(l.ids, id)
	if x.quant != nil {
		l.codes = x.quant.appendCodes(l.codes, v)
	} else {
		l.vecs = append(l.vecs, v...)
	}
	x.n++
}

// putCodes appends a vector's codes to cluster c.
func (x *IVF) putCodes(c int, id uint32, codes []int8) {
	l := &x.lists[c]
	x.where[id] = uint64(c)<<32 | uint64(len(l.ids))
	l.ids = append(l.ids, id)
	l.codes = append(l.codes, codes...)
	x.n++
}

// Add stores v under id in the cluster of its nearest centroid, replacing
// any vector id had. O(nlist·dims).
func (x *IVF) Add(id uint32, v []float32) {
	if len(v) != x.dims {
		panic(fmt.Sprintf("BUG: ann: %d-dimensional vector added to a %d-dimensional index", len(v), x.dims))
	}
	x.Delete(id)
	x.put(nearest(x.cent, x.dims, v), id, v)
}

// Delete removes id's vector. O(dims).
func (x *IVF) Delete(id uint32) bool {
	w, ok := x.where[id]
	if !ok {
		return false
	}
	l := &x.lists[w>>32]
	p, last := int(uint32(w)), len(l.ids)-1
	if p != last {
		l.ids[p] = l.ids[last]
		if x.quant != nil {
			copy(l.codes[p*x.dims:(p+1)*x.dims], l.codes[last*x.dims:])
		} else {
			copy(l.vecs[p*x.dims:(p+1)*x.dims], l.vecs[last*x.dims:])
		}
		x.where[l.ids[p]] = w
	}
	l.ids = l.ids[:last]
	if x.quant != nil {
		l.codes = l.codes[:last*x.dims]
	} else {
		l.vecs = l.vecs[:last*x.dims]
	}
	delete(x.where, id)
	x.n--
	return true
}

// Quantized reports whether the index stores codes rather than floats.
func (x *IVF) Quantized() bool { return x.quant != nil }

// Vector returns id's vector, or nil: the index's own slice, or for a
// quantised index a new one decoded from the codes.
func (x *IVF) Vector(id uint32) []float32 {
	w, ok := x.where[id]
	if !ok {
		return nil
	}
	l, p := &x.lists[w>>32], int(uint32(w))
	if x.quant != nil {
		v := make([]float32, x.dims)
		x.quant.decode(v, l.codes[p*x.dims:(p+1)*x.dims])
		return v
	}
	return l.vecs[p*x.dims : (p+1)*x.dims : (p+1)*x.dims]
}

// Each calls fn for every vector until fn returns false. For a quantised
// index, v is decoded from the codes into a buffer the next call reuses.
func (x *IVF) Each(fn func(id uint32, v []float32) bool) {
	var buf []float32
	if x.quant != nil {
		buf = make([]float32, x.dims)
	}
	for c := range x.lists {
		l := &x.lists[c]
		for p, id := range l.ids {
			var v []float32
			if x.quant != nil {
				x.quant.decode(buf, l.codes[p*x.dims:(p+1)*x.dims])
				v = buf
			} else {
				v = l.vecs[p*x.dims : (p+1)*x.dims]
			}
			if !fn(id, v) {
				return
			}
		}
	}
}

// EachID calls fn for every id until fn returns false.
func (x *IVF) EachID(fn func(id uint32) bool) {
	for c := range x.lists {
		for _, id := range x.lists[c].ids {
			if !fn(id) {
				return
			}
		}
	}
}

// Quantize converts a float index to codes in place, its scales fitted to
// its own vectors. It needs memory for one cluster's floats at a time
// beside the codes.
func (x *IVF) Quantize() {
	if x.quant != nil {
		return
	}
	x.quant = &quantizer{scale: make([]float32, x.dims)}
	for c := range x.lists {
		x.quant.widen(x.lists[c].vecs)
	}
	x.quant.fit()
	for c := range x.lists {
		l := &x.lists[c]
		l.codes = make([]int8, 0, len(l.vecs))
		for p := 0; p < len(l.vecs); p += x.dims {
			l.codes = x.quant.appendCodes(l.codes, l.vecs[p:p+x.dims])
		}
		l.vecs = nil
	}
}

// Drifted reports whether the clusters no longer fit the data: the index
// has grown or shrunk by half since training, or one cluster holds far more
// than its share — sixteen times the mean, and twice what the largest held
// when the index was built or loaded: data whose clusters are uneven by
// nature (near-duplicate texts) leave one list long after every rebuild,
// which is no reason to rebuild again. The owner then rebuilds with
// BuildIVF.
func (x *IVF) Drifted() bool {
	if x.n > 2*x.trained+1000 || x.n < x.trained/2 {
		return true
	}
	b := x.biggest()
	return len(x.lists) > 1 && b > 16*(x.n/len(x.lists)+1) && b > 2*x.skew
}

// Search fills dst with the k best vectors for q among the NProbe clusters
// nearest q (or, when allowed is small, among all allowed ids exactly).
// O(nlist·dims + n·nprobe/nlist·dims).
func (x *IVF) Search(q []float32, k int, allowed *roaring.Bitmap, dst []Result) []Result {
	if k <= 0 || len(q) != x.dims || x.n == 0 {
		return dst[:0]
	}
	top := newTopK(dst, k)
	var qc query
	if x.quant != nil {
		qc = x.quant.prepare(q)
	}
	d := x.dims
	if sparse(allowed, x.n) {
		allowed.Iterate(func(id uint32) bool {
			w, ok := x.where[id]
			if !ok {
				return true
			}
			l, p := &x.lists[w>>32], int(uint32(w))
			if x.quant != nil {
				top.push(id, qc.score(l.codes[p*d:p*d+d]))
			} else {
				top.push(id, Dot(q, l.vecs[p*d:p*d+d]))
			}
			return true
		})
		return top.sorted()
	}
	flt := newFilter(allowed)
	defer flt.release()
	for _, c := range x.probe(q) {
		if x.quant != nil {
			scanCodes(qc, x.lists[c].ids, x.lists[c].codes, d, flt, &top)
		} else {
			scan(q, x.lists[c].ids, x.lists[c].vecs, d, flt, &top)
		}
	}
	return top.sorted()
}

// probe returns the nprobe clusters whose centroids are nearest q.
func (x *IVF) probe(q []float32) []int {
	type cs struct {
		c int
		s float32
	}
	scores := make([]cs, len(x.lists))
	for c := range x.lists {
		scores[c] = cs{c, Dot(q, x.cent[c*x.dims:(c+1)*x.dims])}
	}
	slices.SortFunc(scores, func(a, b cs) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return a.c - b.c
	})
	out := make([]int, min(x.nprobe, len(scores)))
	for i := range out {
		out[i] = scores[i].c
	}
	return out
}
