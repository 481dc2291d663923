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
// A message's id and content are one value (addMessage), the content
// Huffman-coded once a table is trained on the first contents (huff0,
// zstd's entropy coder, one table for all): each content is coded alone,
// so reading one decodes its own bytes and nothing else (half a
// microsecond for a chat message), where a compressed block of many would
// be decoded whole for any of them. Chat text codes to about 55% of its
// size.
type slab struct {
	chunks [][]byte
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

// reserve makes room for size bytes and returns their ref and the room.
func (s *slab) reserve(size int) (ref, []byte) {
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
	s.chunks[n-1] = c[:off+size]
	return ref(uint64(n-1)<<(refOffBits+refLenBits) | uint64(off)<<refLenBits | uint64(size)), c[off : off+size : off+size]
}

// addMessage stores a message's id and content as one value: the id's
// length and bytes, then the content — coded (its length, then its code)
// when the coder has a table and coding makes it smaller, else as it is.
func (s *slab) addMessage(id, content string) ref {
	coded := s.coder.code(content)
	size := uvarintLen(uint64(len(id))) + len(id) + len(content)
	if coded != nil {
		size += uvarintLen(uint64(len(content))) + len(coded) - len(content)
	}
	r, b := s.reserve(size)
	b = binary.AppendUvarint(b[:0], uint64(len(id)))
	b = append(b, id...)
	if coded != nil {
		b = binary.AppendUvarint(b, uint64(len(content)))
		copy(b[len(b):cap(b)], coded)
		return r | refCoded
	}
	copy(b[len(b):cap(b)], content)
	return r
}

// bytesOf returns what r refers to, as stored.
func (s *slab) bytesOf(r ref) []byte {
	n := int(r & (1<<refLenBits - 1))
	if n == 0 {
		return nil
	}
	off := int(r >> refLenBits & (1<<refOffBits - 1))
	c := s.chunks[r&^refCoded>>(refOffBits+refLenBits)]
	return c[off : off+n]
}

// msgID returns the id of the message r refers to (addMessage), aliasing
// the slab.
func (s *slab) msgID(r ref) string {
	b := s.bytesOf(r)
	if len(b) == 0 {
		return ""
	}
	n, w := binary.Uvarint(b)
	return unsafe.String(&b[w], int(n))
}

// msgContent returns the content of the message r refers to: aliasing the
// slab, or decoded.
func (s *slab) msgContent(r ref) string {
	b := s.bytesOf(r)
	if len(b) == 0 {
		return ""
	}
	n, w := binary.Uvarint(b)
	b = b[w+int(n):]
	if r&refCoded != 0 {
		return s.coder.decode(b)
	}
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
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
