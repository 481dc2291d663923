package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestKeyTable checks the table against a map under random inserts and
// removes, with hashes drawn from a small range so that entries collide,
// share homes and wrap around the end of the table.
func TestKeyTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type key struct {
		h    uint64
		slot uint32
	}
	var tab keyTable
	want := map[uint32]uint64{} // slot -> hash
	var live []uint32
	for step := 0; step < 40000; step++ {
		if len(live) > 0 && rng.IntN(3) == 0 {
			i := rng.IntN(len(live))
			s := live[i]
			tab.remove(want[s], s)
			delete(want, s)
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
		} else {
			s := uint32(step)
			h := uint64(rng.IntN(8192)) | uint64(rng.IntN(4))<<40 // equal low bits, equal hashes
			tab.insert(h, s)
			want[s] = h
			live = append(live, s)
		}
		if step%997 == 0 || step < 200 {
			if tab.len() != len(want) {
				t.Fatalf("step %d: %d keys, want %d", step, tab.len(), len(want))
			}
			for s, h := range want {
				if got, ok := tab.find(h, func(x uint32) bool { return x == s }); !ok || got != s {
					t.Fatalf("step %d: slot %d under %x not found", step, s, h)
				}
			}
		}
	}
}

func TestSlab(t *testing.T) {
	var s slab
	rng := rand.New(rand.NewPCG(3, 4))
	var refs []ref
	var vals []string
	for i := 0; i < 5000; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), rng.IntN(3000))
		if i%500 == 0 {
			v = strings.Repeat("z", 1<<20) // a maximal message
		}
		refs, vals = append(refs, s.addMessage(fmt.Sprint(i), v)), append(vals, v)
	}
	for i, r := range refs {
		if got := s.msgContent(r); got != vals[i] {
			t.Fatalf("value %d: %d bytes, want %d", i, len(got), len(vals[i]))
		}
	}
	if s.msgID(0) != "" || s.msgContent(0) != "" {
		t.Fatal("the zero ref is not empty")
	}
}

// TestSlabCoded stores message-like values, then odd ones, once the table
// is trained, and reads each back.
func TestSlabCoded(t *testing.T) {
	var s slab
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"the", "release", "build", "fails", "on", "arm64", "see", "https://example.com/x?y=1", "😀", "ñandú", "\x00"}
	var refs []ref
	var vals []string
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := rng.IntN(30); j >= 0; j-- {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		v := b.String()
		switch i % 997 {
		case 1:
			v = ""
		case 2:
			v = string([]byte{0, 1, 2, 255, 254, 128})
		case 3:
			v = strings.Repeat("x", 200<<10) // longer than a Huffman block
		case 4:
			var raw []byte
			for k := 0; k < 500; k++ {
				raw = append(raw, byte(rng.IntN(256)))
			}
			v = string(raw) // incompressible
		}
		id := fmt.Sprint("m", i)
		refs, vals = append(refs, s.addMessage(id, v)), append(vals, v)
	}
	coded := 0
	for i, r := range refs {
		if r&refCoded != 0 {
			coded++
		}
		if got := s.msgContent(r); got != vals[i] {
			t.Fatalf("value %d: %q, want %q", i, got, vals[i])
		}
		if got := s.msgID(r); got != fmt.Sprint("m", i) {
			t.Fatalf("value %d: id %q", i, got)
		}
	}
	if coded < len(refs)/2 {
		t.Fatalf("only %d of %d values coded", coded, len(refs))
	}
}
