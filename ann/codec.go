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
//	                  | u8 quantised | [uvarint rerank | dims f32 scales]   (codes are recomputed)
//	blocks: uvarint list (0 for flat) | uvarint count | count × (u32 id | dims × f32)
//
// Floats are their IEEE-754 bits, little-endian, so vectors decode
// bit-identical.
const (
	kindFlat = 1
	kindIVF  = 2

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
		return encodeList(0, x.dims, x.ids, x.vecs, emit)
	case *IVF:
		b = append(b, kindIVF)
		b = binary.AppendUvarint(b, uint64(x.dims))
		b = binary.AppendUvarint(b, uint64(x.n))
		b = binary.AppendUvarint(b, uint64(x.nprobe))
		b = binary.AppendUvarint(b, uint64(x.trained))
		b = binary.AppendUvarint(b, uint64(len(x.lists)))
		b = appendF32s(b, x.cent)
		if x.quant != nil {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(x.rerank))
			b = appendF32s(b, x.quant.scale)
		} else {
			b = append(b, 0)
		}
		if err := emit(b); err != nil {
			return err
		}
		for c := range x.lists {
			if err := encodeList(c, x.dims, x.lists[c].ids, x.lists[c].vecs, emit); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("BUG: ann: cannot encode %T", idx)
}

func encodeList(list, dims int, ids []uint32, vecs []float32, emit func([]byte) error) error {
	per := max(1, blockBytes/(4*dims+4))
	var b []byte
	for start := 0; start < len(ids); start += per {
		end := min(start+per, len(ids))
		b = binary.AppendUvarint(b[:0], uint64(list))
		b = binary.AppendUvarint(b, uint64(end-start))
		for i := start; i < end; i++ {
			b = binary.LittleEndian.AppendUint32(b, ids[i])
			b = appendF32s(b, vecs[i*dims:(i+1)*dims])
		}
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
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
			if q == 1 {
				x.rerank = int(min(r.uvarint(), maxRerank))
				x.quant = &quantizer{scale: make([]float32, dims)}
				r.f32s(x.quant.scale)
			} else if q != 0 {
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
			r.f32s(vec)
			if r.err != nil {
				break
			}
			if idx.Vector(id) != nil {
				return nil, fmt.Errorf("%w: id %d twice", ErrCorrupt, id)
			}
			if x, ok := idx.(*IVF); ok {
				x.put(int(list), id, vec)
			} else {
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
	return idx, nil
}
