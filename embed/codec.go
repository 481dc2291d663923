package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrCorrupt wraps every model decoding failure.
var ErrCorrupt = errors.New("corrupt embedding model")

// Encode writes the model as blocks handed to emit (see docs/format.md):
//
//	header: string name | uvarint texts | f32 oovIDF | uvarint vocab | u8 hasPC | [Dims f32 pc]
//	blocks: uvarint count | count × (string term | Dims f32 row)
//
// Rows are held as bfloat16 and written widened to f32, exactly; rows
// written by earlier versions (full f32) are rounded to bfloat16 on load.
func (m *Model) Encode(emit func([]byte) error) error {
	var b []byte
	b = appendString(b, m.name)
	b = binary.AppendUvarint(b, uint64(m.texts))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.oovIDF))
	b = binary.AppendUvarint(b, uint64(len(m.vocab)))
	if m.pc != nil {
		b = append(b, 1)
		b = appendF32s(b, m.pc)
	} else {
		b = append(b, 0)
	}
	if err := emit(b); err != nil {
		return err
	}
	terms := make([]string, len(m.vocab))
	for t, r := range m.vocab {
		terms[r] = t
	}
	const per = 2048
	for start := 0; start < len(terms); start += per {
		end := min(start+per, len(terms))
		b = binary.AppendUvarint(b[:0], uint64(end-start))
		for r := start; r < end; r++ {
			b = appendString(b, terms[r])
			for _, h := range m.rows[r*Dims : (r+1)*Dims] {
				b = binary.LittleEndian.AppendUint32(b, uint32(h)<<16)
			}
		}
		if err := emit(b); err != nil {
			return err
		}
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendF32s(b []byte, v []float32) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("bad string")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) f32s(dst []float32) {
	if r.err != nil || len(r.b) < 4*len(dst) {
		r.fail("short floats")
		return
	}
	for i := range dst {
		x := math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			r.fail("non-finite float")
			return
		}
		dst[i] = x
	}
	r.b = r.b[4*len(dst):]
}

// DecodeModel reads a model written by Encode, validating it.
func DecodeModel(next func() ([]byte, error)) (*Model, error) {
	b, err := next()
	if err != nil {
		return nil, err
	}
	r := &reader{b: b}
	m := &Model{name: r.string(), vocab: map[string]int32{}, workers: make(chan *worker, maxIdleWorkers)}
	if texts := r.uvarint(); texts > 1<<40 {
		r.fail("bad text count")
	} else {
		m.texts = int(texts)
	}
	if len(r.b) < 4 {
		r.fail("short header")
	} else {
		m.oovIDF = math.Float32frombits(binary.LittleEndian.Uint32(r.b))
		r.b = r.b[4:]
	}
	nv := r.uvarint()
	if r.err == nil && (nv > maxVocab || len(r.b) < 1) {
		r.fail("bad vocabulary size")
	}
	if r.err == nil {
		hasPC := r.b[0]
		r.b = r.b[1:]
		if hasPC == 1 {
			m.pc = make([]float32, Dims)
			r.f32s(m.pc)
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing header bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	m.rows = make([]uint16, 0, min(int(nv), 4096)*Dims) // grows as blocks back the count
	for uint64(len(m.vocab)) < nv {
		b, err := next()
		if err != nil {
			return nil, err
		}
		r := &reader{b: b}
		c := r.uvarint()
		if r.err == nil && (c == 0 || c > nv-uint64(len(m.vocab))) {
			r.fail("bad block")
		}
		row := make([]float32, Dims)
		for ; c > 0 && r.err == nil; c-- {
			t := r.string()
			r.f32s(row)
			if _, dup := m.vocab[t]; dup && r.err == nil {
				r.fail("term twice")
			}
			m.vocab[t] = int32(len(m.vocab))
			for _, x := range row {
				m.rows = append(m.rows, toBF16(x))
			}
		}
		if r.err == nil && len(r.b) != 0 {
			r.fail("trailing block bytes")
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if m.texts == 0 && nv == 0 && m.pc == nil {
		m.oovIDF = 1
	}
	return m, nil
}
