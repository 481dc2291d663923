package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sift-search/sift/engine/internal/frame"
)

// SegmentInfo is what one segment file holds, as InspectSegment read it.
type SegmentInfo struct {
	Version     uint32 // format version in the header; 0 when the header is not whole
	Bytes       int64  // size of the file
	Records     int    // whole records before any damage
	First, Last uint64 // their sequence numbers; 0 when there is none
	End         int64  // offset after the last whole record: where a torn tail is cut
	// Damage is the first bad header or frame, break in the numbering, or
	// record the caller's check refused; nil when the segment is whole.
	Damage *CorruptionError
	// AfterFirst and AfterLast number the valid records found after the
	// damage; 0 when there are none.
	AfterFirst, AfterLast uint64
	// Torn: the damage is a bad frame with nothing valid after it, as a
	// crash in the middle of a write leaves. Start-up cuts such a tail
	// off the log's last segment when no later file shows more writes.
	Torn bool
}

// ParseName returns the sequence number a segment file's base name
// carries (%020d.wal).
func ParseName(base string) (uint64, bool) {
	name, ok := strings.CutSuffix(base, walSuffix)
	if !ok {
		return 0, false
	}
	first, err := strconv.ParseUint(name, 10, 64)
	return first, err == nil
}

// InspectSegment reads a whole segment from r, as replay does, and says
// what it holds. path names it in errors; named is the sequence number its
// file is named after, which its first record must carry (0: unknown, the
// numbering starts wherever the first record does). check, when not nil,
// sees every record and may refuse one (a record that does not decode):
// that is damage too, never a torn write. The error is for what is not
// damage of the segment: I/O, an unsupported version. O(size) memory.
func InspectSegment(r io.Reader, path string, named uint64, check func(seq uint64, kind uint8, payload []byte) error) (*SegmentInfo, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read wal %s: %w", path, err)
	}
	info := &SegmentInfo{Bytes: int64(len(b))}
	if len(b) >= HeaderSize && string(b[:len(walMagic)]) == walMagic {
		info.Version = binary.LittleEndian.Uint32(b[len(walMagic):])
	}
	end, ce, err := scanSegment(bytes.NewReader(b), path, named, func(seq uint64, kind uint8, payload []byte) error {
		if check != nil {
			if err := check(seq, kind, payload); err != nil {
				return err
			}
		}
		if info.Records == 0 {
			info.First = seq
		}
		info.Records++
		info.Last = seq
		return nil
	})
	info.End = end
	var refused *CorruptionError
	switch {
	case errors.As(err, &refused):
		info.Damage = refused
		return info, nil
	case err != nil:
		return nil, err
	case ce == nil:
		return info, nil
	}
	info.Damage = ce
	last := info.Last
	if last == 0 && named > 0 {
		last = named - 1
	}
	info.AfterFirst, info.AfterLast = recordsAfter(b, end, last)
	info.Torn = info.AfterFirst == 0
	return info, nil
}

// scanSegment reads a segment from r: its header, then records numbered
// consecutively from named (from the first one's number when named is 0),
// calling fn for each. It returns the offset after the last whole record.
// A bad header or frame, or a break in the numbering, is ce: the segment
// is damaged there. err is for anything else — I/O, an unsupported
// version — and for fn's error, as a CorruptionError at its record.
func scanSegment(r io.Reader, path string, named uint64, fn func(seq uint64, kind uint8, payload []byte) error) (end int64, ce *CorruptionError, err error) {
	corrupt := func(off int64, err error) (int64, *CorruptionError, error) {
		return off, &CorruptionError{File: path, Offset: off, Err: err}, nil
	}
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return corrupt(0, fmt.Errorf("short header: %w", err))
		}
		return 0, nil, fmt.Errorf("read wal %s: %w", path, err)
	}
	if string(hdr[:len(walMagic)]) != walMagic {
		return corrupt(0, errors.New("bad magic"))
	}
	if v := binary.LittleEndian.Uint32(hdr[len(walMagic):]); v != walVersion {
		return 0, nil, fmt.Errorf("wal segment %s: unsupported version %d", path, v)
	}
	off, next := int64(HeaderSize), named
	for {
		kind, body, err := frame.Read(r)
		if err == io.EOF {
			return off, nil, nil
		}
		if err != nil {
			if errors.Is(err, frame.ErrTorn) {
				return corrupt(off, err)
			}
			return off, nil, fmt.Errorf("read wal %s: %w", path, err)
		}
		if len(body) < 8 {
			return corrupt(off, errors.New("record without sequence number"))
		}
		seq := binary.LittleEndian.Uint64(body)
		if next != 0 && seq != next {
			if off == HeaderSize {
				return corrupt(off, fmt.Errorf("the segment is named after record %d but starts with record %d", next, seq))
			}
			return corrupt(off, fmt.Errorf("sequence %d follows %d", seq, next-1))
		}
		if err := fn(seq, kind, body[8:]); err != nil {
			return off, nil, &CorruptionError{File: path, Offset: off, Err: err}
		}
		off += int64(frame.HeaderSize + 1 + len(body))
		next = seq + 1
	}
}

// recordsAfter looks for valid records at or after the damage at off: a
// valid frame there (a break in the numbering), or a frame of one of the
// two records after last that starts past off; then the consecutive
// frames after it. It returns their first and last sequence
// numbers, 0 when there is none — the damage is then a torn tail.
func recordsAfter(b []byte, off int64, last uint64) (first, end uint64) {
	start := findRecord(b, off, last)
	if start < 0 {
		return 0, 0
	}
	r := bytes.NewReader(b[start:])
	for {
		_, body, err := frame.Read(r)
		if err != nil || len(body) < 8 {
			return first, end
		}
		seq := binary.LittleEndian.Uint64(body)
		if first != 0 && seq != end+1 {
			return first, end
		}
		if first == 0 {
			first = seq
		}
		end = seq
	}
}

// findRecord returns off when a valid frame starts there, else the offset
// of a valid frame of record last+1 or last+2 that starts after off, or -1.
func findRecord(b []byte, off int64, last uint64) int {
	if off < 0 || off >= int64(len(b)) {
		return -1
	}
	if _, body, err := frame.Read(bytes.NewReader(b[off:])); err == nil && len(body) >= 8 {
		return int(off)
	}
	for seq := last + 1; seq <= last+2; seq++ {
		var pat [8]byte
		binary.LittleEndian.PutUint64(pat[:], seq)
		for from := int(off) + 1; ; {
			i := bytes.Index(b[from:], pat[:])
			if i < 0 {
				break
			}
			start := from + i - frame.HeaderSize - 1 // the frame's length field
			from += i + 1
			if start < int(off) {
				continue
			}
			if _, body, err := frame.Read(bytes.NewReader(b[start:])); err == nil && len(body) >= 8 {
				return start
			}
		}
	}
	return -1
}
