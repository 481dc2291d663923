package tokenizer

import (
	"hash/maphash"
	"strings"
)

// cache is a direct-mapped string cache: each key hashes to one slot, and a
// new key simply replaces the slot's old one. Unlike a map it never grows,
// never needs clearing, and a lookup touches one slot.
type cache struct {
	seed  maphash.Seed
	slots []cacheSlot
	mask  uint64
}

type cacheSlot struct{ key, val string }

// newCache returns a cache of at least n slots (rounded up to a power of two).
func newCache(n int) *cache {
	size := 1
	for size < n {
		size <<= 1
	}
	return &cache{seed: maphash.MakeSeed(), slots: make([]cacheSlot, size), mask: uint64(size - 1)}
}

func (c *cache) get(k string) (string, bool) {
	s := &c.slots[maphash.String(c.seed, k)&c.mask]
	if s.key == k && s.key != "" {
		return s.val, true
	}
	return "", false
}

// put stores k -> v, copying k so the cache never pins the caller's text.
func (c *cache) put(k, v string) {
	kc := strings.Clone(k)
	if v == k {
		v = kc
	}
	c.slots[maphash.String(c.seed, k)&c.mask] = cacheSlot{kc, v}
}

// len counts the filled slots (for tests).
func (c *cache) len() int {
	n := 0
	for _, s := range c.slots {
		if s.key != "" {
			n++
		}
	}
	return n
}
