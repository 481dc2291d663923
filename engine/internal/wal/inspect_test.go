package wal

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// segmentBytes12 returns the bytes of segment 4 of threePerSegment's log
// (records 4, 5 and 6).
func segmentBytes12(t testing.TB) []byte {
	dir := t.TempDir()
	w, err := Open(dir, Options{SegmentBytes: 100, NoSync: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 12; seq++ {
		if err := w.Append(seq, 1, []byte("twenty-three byte value")); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	b, err := os.ReadFile(segmentPath(dir, 4))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInspectSegment: a whole segment, a torn tail, damage before valid
// records, a record the check refuses and a file whose name its records
// contradict, each said as such.
func TestInspectSegment(t *testing.T) {
	whole := segmentBytes12(t)
	damaged := bytes.Clone(whole)
	damaged[HeaderSize+40+20] ^= 1
	refuse := func(seq uint64, _ uint8, _ []byte) error {
		if seq == 5 {
			return errors.New("does not decode")
		}
		return nil
	}
	for _, c := range []struct {
		name        string
		b           []byte
		named       uint64
		check       func(uint64, uint8, []byte) error
		records     int
		end         int64
		damageAt    int64 // -1: none
		torn        bool
		after, last uint64
	}{
		{name: "whole", b: whole, named: 4, records: 3, end: 132, damageAt: -1},
		{name: "name unknown", b: whole, records: 3, end: 132, damageAt: -1},
		{name: "torn", b: whole[:120], named: 4, records: 2, end: 92, damageAt: 92, torn: true},
		{name: "damaged", b: damaged, named: 4, records: 1, end: 52, damageAt: 52, after: 6, last: 6},
		{name: "refused", b: whole, named: 4, check: refuse, records: 1, end: 52, damageAt: 52},
		{name: "misnamed", b: whole, named: 3, records: 0, end: HeaderSize, damageAt: HeaderSize, after: 4, last: 6},
		{name: "header only", b: whole[:HeaderSize], named: 4, end: HeaderSize, damageAt: -1},
		{name: "short header", b: whole[:5], named: 4, end: 0, damageAt: 0, torn: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := InspectSegment(bytes.NewReader(c.b), "seg", c.named, c.check)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(-1)
			if info.Damage != nil {
				at = info.Damage.Offset
			}
			if info.Records != c.records || info.End != c.end || at != c.damageAt || info.Torn != c.torn ||
				info.AfterFirst != c.after || info.AfterLast != c.last || info.Bytes != int64(len(c.b)) {
				t.Fatalf("got %+v (damage %v)", info, info.Damage)
			}
			if c.records > 0 && (info.First != 4 || info.Last != 3+uint64(c.records)) {
				t.Fatalf("records %d to %d", info.First, info.Last)
			}
		})
	}
	bad := bytes.Clone(whole)
	bad[8] = 9
	if _, err := InspectSegment(bytes.NewReader(bad), "seg", 4, nil); err == nil {
		t.Fatal("an unsupported version passed")
	}
}

// FuzzInspectSegment: any bytes are said to be whole, torn or damaged,
// never a panic, and what is said holds together.
func FuzzInspectSegment(f *testing.F) {
	whole := segmentBytes12(f)
	f.Add(whole, uint64(4))
	f.Add(whole[:120], uint64(4))
	f.Add(whole, uint64(0))
	f.Add([]byte("SIFTWAL\x00\x01\x00\x00\x00"), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, named uint64) {
		info, err := InspectSegment(bytes.NewReader(b), "seg", named, nil)
		if err != nil {
			return
		}
		switch {
		case info.End > info.Bytes || info.End < 0:
			t.Fatalf("end %d of %d bytes", info.End, info.Bytes)
		case info.Damage == nil && info.End != info.Bytes:
			t.Fatalf("whole, but ends at %d of %d", info.End, info.Bytes)
		case info.Damage != nil && info.Damage.Offset != info.End:
			t.Fatalf("damage at %d, records end at %d", info.Damage.Offset, info.End)
		case info.Records > 0 && info.Last-info.First+1 != uint64(info.Records):
			t.Fatalf("%d records numbered %d to %d", info.Records, info.First, info.Last)
		case info.Records > 0 && named != 0 && info.First != named:
			t.Fatalf("named %d, first record %d", named, info.First)
		case info.Torn && (info.Damage == nil || info.AfterFirst != 0):
			t.Fatalf("torn, yet %+v", info)
		case info.AfterFirst > info.AfterLast:
			t.Fatalf("records after the damage: %d to %d", info.AfterFirst, info.AfterLast)
		}
	})
}
