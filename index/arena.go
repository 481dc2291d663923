package index

import "unsafe"

// arenaChunk is the size of the chunks a textArena allocates.
const arenaChunk = 1 << 20

// textArena holds the dictionary's terms end to end in large chunks and
// hands them out as strings aliasing it: a hundred thousand terms are a
// few allocations, not one each. Terms are never removed (a compaction
// builds a new index that shares them).
type textArena struct {
	chunks [][]byte
}

// str returns s copied into the arena.
func (a *textArena) str(s string) string {
	if s == "" {
		return ""
	}
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < len(s) {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, len(s))))
		n++
	}
	c := a.chunks[n-1]
	off := len(c)
	a.chunks[n-1] = append(c, s...)
	return unsafe.String(&a.chunks[n-1][off], len(s))
}
