package engine

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/klauspost/compress/huff0"
)

// slab stores byte strings end to end in large chunks and hands them out
// as strings that alias it: no string header, allocation or pointer per
// value, so ten million messages are a few hundred allocations the
// garbage collector does not walk one by one. A value is never moved or
// overwritten, so a string read from the slab stays valid; the space of a
// value no longer referenced is reclaimed when the slab is rebuilt (a
// snapshot load).
//
// Values added with addCoded (message contents) are Huffman-coded once a
// table is trained on the first of them (huff0, zstd's entropy coder, one
// table for all): each value is coded alone, so reading one decodes its
// own bytes and nothing else (half a microsecond for a chat message),
// where a compressed block of many would be decoded whole for any of them.
// Chat text codes to about 55% of its size.
type slab struct {
	chunks [][]byte
	used   int64 // bytes of values added, as stored
	coder  textCoder
}

// ref locates a value in a slab: coded<<63 | chunk<<43 | offset<<21 |
// length, the length of what is stored. The zero ref is the empty string.
type ref uint64

const (
	refLenBits = 21 // lengths up to 2 MiB − 1 (MaxMessageBytes and MaxIDBytes fit)
	refOffBits = 22 // offsets in chunks of up to 4 MiB
	refChunk   = 20 // chunk numbers
	refCoded   = ref(1) << 63
	slabFirst  = 64 << 10
	slabMax    = 1 << refOffBits
)

// add copies v into the slab and returns its ref.
func (s *slab) add(v string) ref { return s.put(v, nil) }

// put stores v, or its coded form when there is one (prefixed with v's
// length, which the decoder needs), and returns its ref.
func (s *slab) put(v string, coded []byte) ref {
	if v == "" {
		return 0
	}
	size := len(v)
	if coded != nil {
		size = uvarintLen(uint64(len(v))) + len(coded)
	}
	if size >= 1<<refLenBits {
		panic("BUG: slab value longer than a ref can say")
	}
	n := len(s.chunks)
	if n == 0 || cap(s.chunks[n-1])-len(s.chunks[n-1]) < size {
		c := slabFirst
		if n > 0 {
			c = min(2*cap(s.chunks[n-1]), slabMax)
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(c, size)))
		n++
	}
	if n > 1<<refChunk {
		panic("BUG: slab of more chunks than a ref can say")
	}
	c := s.chunks[n-1]
	off := len(c)
	r := ref(uint64(n-1)<<(refOffBits+refLenBits) | uint64(off)<<refLenBits | uint64(size))
	if coded != nil {
		c = binary.AppendUvarint(c, uint64(len(v)))
		s.chunks[n-1] = append(c, coded...)
		r |= refCoded
	} else {
		s.chunks[n-1] = append(c, v...)
	}
	s.used += int64(size)
	return r
}

// addCoded stores v coded when the coder has a table and coding makes it
// smaller, else as it is.
func (s *slab) addCoded(v string) ref {
	return s.put(v, s.coder.code(v))
}

// str returns the value r refers to, aliasing the slab.
func (s *slab) str(r ref) string {
	n := int(r & (1<<refLenBits - 1))
	if n == 0 {
		return ""
	}
	off := int(r >> refLenBits & (1<<refOffBits - 1))
	c := s.chunks[r&^refCoded>>(refOffBits+refLenBits)]
	if r&refCoded == 0 {
		return unsafe.String(&c[off], n)
	}
	return s.coder.decode(c[off : off+n])
}

// textCoder codes message contents with one Huffman table, trained on the
// first trainBytes of them (raw until then).
type textCoder struct {
	enc    huff0.Scratch
	dec    *huff0.Decoder
	sample []byte
}

const trainBytes = 64 << 10

// code returns v coded, or nil to store it as it is (no table yet, too
// short or long, or no smaller coded).
func (t *textCoder) code(v string) []byte {
	if t.dec == nil {
		t.train(v)
		return nil
	}
	if len(v) < 16 || len(v) > huff0.BlockSizeMax {
		return nil
	}
	out, reused, err := huff0.Compress1X(unsafe.Slice(unsafe.StringData(v), len(v)), &t.enc)
	if err != nil || !reused || len(out)+binary.MaxVarintLen32 >= len(v) {
		return nil
	}
	return out
}

// train gathers v into the sample and builds the table once it is large
// enough. Every byte value is added once, so the table codes any input.
func (t *textCoder) train(v string) {
	t.sample = append(t.sample, v[:min(len(v), trainBytes)]...)
	if len(t.sample) < trainBytes {
		return
	}
	for b := 0; b < 256; b++ {
		t.sample = append(t.sample, byte(b))
	}
	t.enc = huff0.Scratch{}
	out, _, err := huff0.Compress1X(t.sample[:min(len(t.sample), huff0.BlockSizeMax)], &t.enc)
	if err == nil {
		var s *huff0.Scratch
		if s, _, err = huff0.ReadTable(out, nil); err == nil {
			t.dec = s.Decoder()
			t.enc.Reuse = huff0.ReusePolicyMust
		}
	}
	t.sample = nil
	if err != nil {
		t.sample = make([]byte, 0, trainBytes) // try again on the next sample
	}
}

// decode returns the value stored coded in b: its length, then its code.
func (t *textCoder) decode(b []byte) string {
	n, w := binary.Uvarint(b)
	out, err := t.dec.Decompress1X(make([]byte, 0, n), b[w:])
	if err != nil || uint64(len(out)) != n {
		panic(fmt.Sprintf("BUG: a coded message does not decode (%d of %d bytes): %v", len(out), n, err))
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}
