package engine

import "unsafe"

// slab stores byte strings end to end in large chunks and hands them out
// as strings that alias it: no string header, allocation or pointer per
// value, so ten million messages are a few hundred allocations the
// garbage collector does not walk one by one. A value is never moved or
// overwritten, so a string read from the slab stays valid; the space of a
// value no longer referenced is reclaimed when the slab is rebuilt (a
// snapshot load).
type slab struct {
	chunks [][]byte
	used   int64 // bytes of values added
}

// ref locates a value in a slab: chunk<<43 | offset<<21 | length. The zero
// ref is the empty string.
type ref uint64

const (
	refLenBits = 21 // lengths up to 2 MiB − 1 (MaxMessageBytes and MaxIDBytes fit)
	refOffBits = 22 // offsets in chunks of up to 4 MiB
	slabFirst  = 64 << 10
	slabMax    = 1 << refOffBits
)

// add copies v into the slab and returns its ref.
func (s *slab) add(v string) ref {
	if v == "" {
		return 0
	}
	if len(v) >= 1<<refLenBits {
		panic("BUG: slab value longer than a ref can say")
	}
	n := len(s.chunks)
	if n == 0 || cap(s.chunks[n-1])-len(s.chunks[n-1]) < len(v) {
		size := slabFirst
		if n > 0 {
			size = min(2*cap(s.chunks[n-1]), slabMax)
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(size, len(v))))
		n++
	}
	c := s.chunks[n-1]
	off := len(c)
	s.chunks[n-1] = append(c, v...)
	s.used += int64(len(v))
	return ref(uint64(n-1)<<(refOffBits+refLenBits) | uint64(off)<<refLenBits | uint64(len(v)))
}

// str returns the value r refers to, aliasing the slab.
func (s *slab) str(r ref) string {
	n := int(r & (1<<refLenBits - 1))
	if n == 0 {
		return ""
	}
	off := int(r >> refLenBits & (1<<refOffBits - 1))
	c := s.chunks[r>>(refOffBits+refLenBits)]
	return unsafe.String(&c[off], n)
}
