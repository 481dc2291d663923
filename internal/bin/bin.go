// Package bin holds the little-endian, varint-based encoding shared by the
// write-ahead log and snapshots: an append-style encoder and a bounds-checked
// decoder whose first error sticks, so a decoder of untrusted bytes checks one
// error at the end instead of one per field and never panics.
package bin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrShort means the input ended inside a value.
var ErrShort = errors.New("unexpected end of data")

// Enc appends encoded values to B.
type Enc struct{ B []byte }

func (e *Enc) Uvarint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }
func (e *Enc) Varint(v int64)   { e.B = binary.AppendVarint(e.B, v) }
func (e *Enc) U8(v uint8)       { e.B = append(e.B, v) }
func (e *Enc) U32(v uint32)     { e.B = binary.LittleEndian.AppendUint32(e.B, v) }
func (e *Enc) U64(v uint64)     { e.B = binary.LittleEndian.AppendUint64(e.B, v) }
func (e *Enc) F64(v float64)    { e.U64(math.Float64bits(v)) }
func (e *Enc) Bool(v bool) {
	if v {
		e.U8(1)
	} else {
		e.U8(0)
	}
}

// String writes a length-prefixed string.
func (e *Enc) String(s string) { e.Uvarint(uint64(len(s))); e.B = append(e.B, s...) }

// Bytes writes a length-prefixed byte slice.
func (e *Enc) Bytes(b []byte) { e.Uvarint(uint64(len(b))); e.B = append(e.B, b...) }

// Dec reads values from B starting at Off. After the first error every read
// returns a zero value and Err keeps that first error.
type Dec struct {
	B   []byte
	Off int
	Err error
}

func (d *Dec) fail(err error) {
	if d.Err == nil {
		d.Err = fmt.Errorf("%w at byte %d", err, d.Off)
	}
}

// Len is the number of unread bytes.
func (d *Dec) Len() int { return len(d.B) - d.Off }

func (d *Dec) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B[d.Off:])
	if n <= 0 {
		d.fail(errors.New("bad uvarint"))
		return 0
	}
	d.Off += n
	return v
}

func (d *Dec) Varint() int64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Varint(d.B[d.Off:])
	if n <= 0 {
		d.fail(errors.New("bad varint"))
		return 0
	}
	d.Off += n
	return v
}

func (d *Dec) take(n int) []byte {
	if d.Err != nil {
		return nil
	}
	if n < 0 || n > d.Len() {
		d.fail(ErrShort)
		return nil
	}
	b := d.B[d.Off : d.Off+n : d.Off+n]
	d.Off += n
	return b
}

func (d *Dec) U8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *Dec) U32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *Dec) U64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *Dec) F64() float64 { return math.Float64frombits(d.U64()) }
func (d *Dec) Bool() bool   { return d.U8() != 0 }

// Count reads a count that the caller will allocate for, refusing counts
// larger than the bytes left divided by minSize (each element takes at least
// minSize bytes), so corrupt input cannot force a huge allocation.
func (d *Dec) Count(minSize int) int {
	n := d.Uvarint()
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(d.Len()/minSize) {
		d.fail(fmt.Errorf("count %d exceeds remaining data", n))
		return 0
	}
	return int(n)
}

// Bytes reads a length-prefixed byte slice that aliases B.
func (d *Dec) Bytes() []byte { return d.take(d.Count(1)) }

// String reads a length-prefixed string (a copy).
func (d *Dec) String() string { return string(d.Bytes()) }

// Done reports an error if bytes remain unread or a read failed.
func (d *Dec) Done() error {
	if d.Err == nil && d.Len() != 0 {
		d.fail(fmt.Errorf("%d trailing bytes", d.Len()))
	}
	return d.Err
}
