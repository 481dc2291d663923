package engine

// keyTable maps 64-bit key hashes to message slots: open addressing with
// linear probing over two flat arrays (the low 32 bits of each hash and
// its slot), 8 bytes a slot and at most 4/3 slots per key, where a Go map
// of uint64 to uint32 costs about 40 bytes a key. Keys whose hashes
// collide are told apart by the caller's test of the slot (find), so no
// second map of colliding keys is needed. Deletion shifts the following
// entries back (no tombstones).
type keyTable struct {
	hashes []uint32
	slots  []uint32 // slot+1; 0 marks an empty entry
	n      int
}

// find returns the slot of the key hashed h for which is reports true.
func (t *keyTable) find(h uint64, is func(slot uint32) bool) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint32(len(t.slots) - 1)
	for i := uint32(h) & mask; t.slots[i] != 0; i = (i + 1) & mask {
		if t.hashes[i] == uint32(h) && is(t.slots[i]-1) {
			return t.slots[i] - 1, true
		}
	}
	return 0, false
}

// insert adds slot under h; the caller knows the key is absent.
func (t *keyTable) insert(h uint64, slot uint32) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.put(uint32(h), slot)
	t.n++
}

func (t *keyTable) put(h uint32, slot uint32) {
	mask := uint32(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.hashes[i], t.slots[i] = h, slot+1
}

func (t *keyTable) grow() {
	hashes, slots := t.hashes, t.slots
	size := max(2*len(slots), 16)
	t.hashes, t.slots = make([]uint32, size), make([]uint32, size)
	for i, s := range slots {
		if s != 0 {
			t.put(hashes[i], s-1)
		}
	}
}

// remove deletes the entry of slot under h, if there is one.
func (t *keyTable) remove(h uint64, slot uint32) {
	if t.n == 0 {
		return
	}
	mask := uint32(len(t.slots) - 1)
	i := uint32(h) & mask
	for ; t.slots[i] != slot+1; i = (i + 1) & mask {
		if t.slots[i] == 0 {
			return
		}
	}
	// Shift back each following entry whose home is not between the hole
	// and it (cyclically), so every entry stays reachable from its home.
	for j := i; ; {
		j = (j + 1) & mask
		if t.slots[j] == 0 {
			break
		}
		home := t.hashes[j] & mask
		if i <= j && i < home && home <= j || i > j && (i < home || home <= j) {
			continue
		}
		t.hashes[i], t.slots[i] = t.hashes[j], t.slots[j]
		i = j
	}
	t.hashes[i], t.slots[i] = 0, 0
	t.n--
}

// len is the number of keys.
func (t *keyTable) len() int { return t.n }
