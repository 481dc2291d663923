package wal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestSegmentBytes pins the on-disk layout of docs/format.md: a 12-byte
// header, then per record u32 length | u32 CRC-32C | u8 kind | u64 seq |
// payload, little-endian, in a file named after its first record.
func TestSegmentBytes(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{SegmentBytes: 1 << 20, NoSync: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(5, 9, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "00000000000000000005.wal"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("SIFTWAL\x00\x01\x00\x00\x00")
	body := append([]byte{9, 5, 0, 0, 0, 0, 0, 0, 0}, "hi"...)
	want = binary.LittleEndian.AppendUint32(want, uint32(len(body)))
	want = binary.LittleEndian.AppendUint32(want, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	want = append(want, body...)
	if !slices.Equal(got, want) {
		t.Fatalf("segment bytes\n% x\nwant\n% x", got, want)
	}
}

type record struct {
	seq     uint64
	kind    uint8
	payload string
}

func replayAll(t *testing.T, w *Log, after uint64) (recs []record, first, last uint64) {
	t.Helper()
	first, last, err := w.Replay(after, func(seq uint64, kind uint8, payload []byte) error {
		recs = append(recs, record{seq, kind, string(payload)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, first, last
}

// TestReplayTrimAndTornTail: records come back in order with their kinds,
// only those after the given sequence number; Trim drops the segments a
// snapshot covers and keeps the rest; a torn tail is cut and the log goes
// on after it.
func TestReplayTrimAndTornTail(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{SegmentBytes: 64, NoSync: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	var want []record
	for seq := uint64(1); seq <= 12; seq++ {
		r := record{seq, uint8(seq % 4), string(make([]byte, 20+seq))}
		if err := w.Append(r.seq, r.kind, []byte(r.payload)); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	if err := w.Rotate(13); err != nil {
		t.Fatal(err)
	}
	if st := w.Status(); st.Segments < 4 || st.Bytes != w.Bytes() {
		t.Fatalf("status %+v, bytes %d", st, w.Bytes())
	}
	got, first, last := replayAll(t, w, 4)
	if first != 1 || last != 12 || !slices.Equal(got, want[4:]) {
		t.Fatalf("replay after 4: %d..%d %v", first, last, got)
	}
	if err := w.Trim(6); err != nil {
		t.Fatal(err)
	}
	segs, _ := Segments(dir)
	if segs[0].First > 7 || len(segs) < 2 {
		t.Fatalf("trim to 6 left %v", segs)
	}
	if got, first, _ := replayAll(t, w, 6); first > 7 || !slices.Equal(got, want[6:]) {
		t.Fatalf("replay after trim: from %d %v", first, got)
	}
	if err := w.Append(13, 1, []byte("last")); err != nil {
		t.Fatal(err)
	}
	w.Abandon()

	// A crash in the middle of a write leaves part of a frame.
	segs, _ = Segments(dir)
	tail := segs[len(segs)-1].Path
	f, _ := os.OpenFile(tail, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3})
	f.Close()
	w, err = Open(dir, Options{SegmentBytes: 64, NoSync: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	got, _, last = replayAll(t, w, 12)
	if last != 13 || !slices.Equal(got, []record{{13, 1, "last"}}) {
		t.Fatalf("replay of a torn log: %d %v", last, got)
	}
	if fi, _ := os.Stat(tail); fi.Size() != HeaderSize+8+9+4 {
		t.Fatalf("torn tail not cut: %d bytes", fi.Size())
	}
	w.Resume(13)
	if err := w.Append(14, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDamageIsCorruption: a flipped byte with records after it is a
// CorruptionError naming the segment and offset; an error of the replay
// function is one too, at its record.
func TestDamageIsCorruption(t *testing.T) {
	dir := t.TempDir()
	w, _ := Open(dir, Options{SegmentBytes: 1 << 20, NoSync: true, Logger: quiet()})
	for seq := uint64(1); seq <= 3; seq++ {
		if err := w.Append(seq, 1, []byte("payload")); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	seg := segmentPath(dir, 1)
	stop := errors.New("stop")
	var ce *CorruptionError
	_, _, err := w.Replay(0, func(seq uint64, _ uint8, _ []byte) error {
		if seq == 2 {
			return stop
		}
		return nil
	})
	if !errors.As(err, &ce) || !errors.Is(err, stop) || ce.File != seg || ce.Offset != HeaderSize+8+9+7 {
		t.Fatalf("error of fn: %v", err)
	}
	b, _ := os.ReadFile(seg)
	b[HeaderSize+8+3] ^= 0x40 // inside the first record's sequence number
	os.WriteFile(seg, b, 0o600)
	_, _, err = w.Replay(0, func(uint64, uint8, []byte) error { return nil })
	if !errors.As(err, &ce) || ce.File != seg || ce.Offset != HeaderSize {
		t.Fatalf("damage before valid records: %v", err)
	}
	if err := w.Append(1, 1, make([]byte, MaxPayload+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized record: %v", err)
	}
}
