package ann

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Encoding (see docs/format.md): a header block, then blocks of vectors.
//
//	header: u8 kind (1 flat, 2 ivf) | uvarint dims | uvarint vectors
//	        ivf adds: uvarint nprobe | uvarint trained | uvarint nlist | nlist*dims f32 centroids
//	                  | u8 quantised: 0 floats
//	                                | 2 codes: dims f32 scales
//	                                | 1 (read only, an earlier version's): uvarint rerank | dims f32 scales
//	blocks: uvarint list (0 for flat) | uvarint count | count × (u32 id | vector)
//	vector: dims × f32, or with codes dims × i8 (-127..127)
//
// An index written with quantised flag 1 held floats and codes both; it
// loads as a quantised index of codes computed from its floats.
// Floats are their IEEE-754 bits, little-endian, so vectors decode
// bit-identical.
const (
	kindFlat = 1
	kindIVF  = 2

	quantFloats = 0
	quantLegacy = 1
	quantCodes  = 2

	blockBytes = 4 << 20
)

// MaxDims bounds the dimension of the vectors an index holds.
const MaxDims = 8192

// ErrCorrupt wraps every decoding failure.
var ErrCorrupt = errors.New("corrupt vector index")

func appendF32s(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// Encode writes idx as blocks handed to emit (which must not keep them).
func Encode(idx Index, emit func([]byte) error) error {
	var b []byte
	switch x := idx.(type) {
	case *Flat:
		b = append(b, kindFlat)
		b = binary.AppendUvarint(b, uint64(x.dims))
		b = binary.AppendUvarint(b, uint64(x.Len()))
		if err := emit(b); err != nil {
			return err
		}
		return encodeFloats(0, x.dims, x.ids, x.vecs, emit)
	case *IVF:
		b = append(b, kindIVF)
		b = binary.AppendUvarint(b, uint64(x.dims))
		b = binary.AppendUvarint(b, uint64(x.n))
		b = binary.AppendUvarint(b, uint64(x.nprobe))
		b = binary.AppendUvarint(b, uint64(x.trained))
		b = binary.AppendUvarint(b, uint64(len(x.lists)))
		b = appendF32s(b, x.cent)
		if x.quant != nil {
			b = append(b, quantCodes)
			b = appendF32s(b, x.quant.scale)
		} else {
			b = append(b, quantFloats)
		}
		if err := emit(b); err != nil {
			return err
		}
		for c := range x.lists {
			var err error
			if l := &x.lists[c]; x.quant != nil {
				err = encodeCodes(c, x.dims, l.ids, l.codes, emit)
			} else {
				err = encodeFloats(c, x.dims, l.ids, l.vecs, emit)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("BUG: ann: cannot encode %T", idx)
}

// encodeList writes a list's vectors in blocks of about blockBytes: n
// vectors of size bytes each, the i-th's bytes appended by vec.
func encodeList(list, n, size int, ids []uint32, vec func(b []byte, i int) []byte, emit func([]byte) error) error {
	per := max(1, blockBytes/(size+4))
	var b []byte
	for start := 0; start < n; start += per {
		end := min(start+per, n)
		b = binary.AppendUvarint(b[:0], uint64(list))
		b = binary.AppendUvarint(b, uint64(end-start))
		for i := start; i < end; i++ {
			b = binary.LittleEndian.AppendUint32(b, ids[i])
			b = vec(b, i)
		}
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
}

// encodeFloats writes float vectors (vecs holds len(ids) of dims).
func encodeFloats(list, dims int, ids []uint32, vecs []float32, emit func([]byte) error) error {
	return encodeList(list, len(ids), 4*dims, ids, func(b []byte, i int) []byte {
		return appendF32s(b, vecs[i*dims:(i+1)*dims])
	}, emit)
}

// encodeCodes writes int8 codes (codes holds len(ids) of dims).
func encodeCodes(list, dims int, ids []uint32, codes []int8, emit func([]byte) error) error {
	return encodeList(list, len(ids), dims, ids, func(b []byte, i int) []byte {
		for _, c := range codes[i*dims : (i+1)*dims] {
			b = append(b, byte(c))
		}
		return b
	}, emit)
}

// reader reads the header fields.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad number", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) f32s(dst []float32) {
	if r.err != nil {
		return
	}
	if len(r.b) < 4*len(dst) {
		r.err = fmt.Errorf("%w: short vector data", ErrCorrupt)
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
	}
	r.b = r.b[4*len(dst):]
	if !finite(dst) {
		r.err = fmt.Errorf("%w: a vector component is not a finite number", ErrCorrupt)
	}
}

func (r *reader) i8s(dst []int8) {
	if len(r.b) < len(dst) {
		r.err = fmt.Errorf("%w: short vector data", ErrCorrupt)
		return
	}
	for i := range dst {
		if dst[i] = int8(r.b[i]); dst[i] == math.MinInt8 {
			r.err = fmt.Errorf("%w: a vector code out of range", ErrCorrupt)
			return
		}
	}
	r.b = r.b[len(dst):]
}

// has reports whether idx holds a vector under id.
func has(idx Index, id uint32) bool {
	switch x := idx.(type) {
	case *IVF:
		_, ok := x.where[id]
		return ok
	case *Flat:
		_, ok := x.pos[id]
		return ok
	}
	return idx.Vector(id) != nil
}

// Decode reads an index written by Encode, calling next for each block, and
// validates it: dimensions, counts, unique ids, finite components.
func Decode(next func() ([]byte, error)) (Index, error) {
	hdr, err := next()
	if err != nil {
		return nil, err
	}
	if len(hdr) == 0 {
		return nil, fmt.Errorf("%w: empty header", ErrCorrupt)
	}
	r := &reader{b: hdr[1:]}
	kind := hdr[0]
	dims, n := r.uvarint(), r.uvarint()
	if r.err == nil && (dims == 0 || dims > MaxDims || n > 1<<32) {
		return nil, fmt.Errorf("%w: %d vectors of %d dimensions", ErrCorrupt, n, dims)
	}
	var idx Index
	var lists int
	codes := false
	switch kind {
	case kindFlat:
		idx, lists = NewFlat(int(dims)), 1
	case kindIVF:
		x := &IVF{dims: int(dims), where: make(map[uint32]uint64)}
		x.nprobe, x.trained = int(r.uvarint()), int(r.uvarint())
		nl := r.uvarint()
		if r.err == nil && (nl == 0 || nl > uint64(len(r.b))/(dims*4)) {
			return nil, fmt.Errorf("%w: %d clusters", ErrCorrupt, nl)
		}
		x.cent = make([]float32, int(nl)*int(dims))
		r.f32s(x.cent)
		if r.err == nil && len(r.b) > 0 {
			q := r.b[0]
			r.b = r.b[1:]
			switch q {
			case quantFloats:
			case quantLegacy, quantCodes:
				if q == quantLegacy {
					r.uvarint() // the number of candidates it re-ranked
				}
				x.quant = &quantizer{scale: make([]float32, dims)}
				r.f32s(x.quant.scale)
				for _, s := range x.quant.scale {
					if r.err == nil && !(s > 0) {
						r.err = fmt.Errorf("%w: a quantisation scale is not positive", ErrCorrupt)
					}
				}
				codes = q == quantCodes
			default:
				r.err = fmt.Errorf("%w: bad quantisation flag", ErrCorrupt)
			}
		} else if r.err == nil {
			r.err = fmt.Errorf("%w: short header", ErrCorrupt)
		}
		x.lists = make([]ivfList, nl)
		x.SetNProbe(x.nprobe)
		idx, lists = x, int(nl)
	default:
		return nil, fmt.Errorf("%w: unknown kind %d", ErrCorrupt, kind)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: trailing header bytes", ErrCorrupt)
	}
	vec := make([]float32, dims)
	code := make([]int8, dims)
	for uint64(idx.Len()) < n {
		b, err := next()
		if err != nil {
			return nil, err
		}
		r := &reader{b: b}
		list, count := r.uvarint(), r.uvarint()
		if r.err == nil && (list >= uint64(lists) || count == 0 || count > n-uint64(idx.Len())) {
			return nil, fmt.Errorf("%w: block of %d vectors for list %d", ErrCorrupt, count, list)
		}
		for ; count > 0 && r.err == nil; count-- {
			if len(r.b) < 4 {
				return nil, fmt.Errorf("%w: short id", ErrCorrupt)
			}
			id := binary.LittleEndian.Uint32(r.b)
			r.b = r.b[4:]
			if codes {
				r.i8s(code)
			} else {
				r.f32s(vec)
			}
			if r.err != nil {
				break
			}
			if has(idx, id) {
				return nil, fmt.Errorf("%w: id %d twice", ErrCorrupt, id)
			}
			switch x, _ := idx.(*IVF); {
			case codes:
				x.putCodes(int(list), id, code)
			case x != nil:
				x.put(int(list), id, vec)
			default:
				idx.Add(id, vec)
			}
		}
		if r.err != nil {
			return nil, r.err
		}
		if len(r.b) != 0 {
			return nil, fmt.Errorf("%w: trailing block bytes", ErrCorrupt)
		}
	}
	if x, ok := idx.(*IVF); ok {
		x.skew = x.biggest()
	}
	return idx, nil
}
