// Package frame reads and writes the checksummed frame that is the unit of
// both the write-ahead log and the snapshot body:
//
//	u32 length of body | u32 CRC-32C of body | body (u8 type, then payload)
//
// Integers are little-endian. See docs/format.md.
package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

const (
	// HeaderSize is the size of a frame's length and checksum fields.
	HeaderSize = 8
	// MaxBody is the largest body (type byte and payload) a frame holds.
	MaxBody = 64 << 20
)

// Castagnoli is the CRC-32C table of the frames' checksums.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrTorn means the input ended inside a frame, or a frame failed its checksum.
var ErrTorn = errors.New("torn or corrupt frame")

// Append appends a frame of type typ holding the concatenation of parts.
func Append(dst []byte, typ byte, parts ...[]byte) []byte {
	n := 1
	for _, p := range parts {
		n += len(p)
	}
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = append(dst, typ)
	for _, p := range parts {
		dst = append(dst, p...)
	}
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+HeaderSize:], Castagnoli))
	return dst
}

// Read reads one frame from r into a new slice. It returns io.EOF when r
// ends exactly at a frame boundary and ErrTorn when a frame is cut short,
// oversized or fails its checksum.
func Read(r io.Reader) (typ byte, payload []byte, err error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return 0, nil, fmt.Errorf("%w: short header", ErrTorn)
		}
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:4])
	if n == 0 || n > MaxBody {
		return 0, nil, fmt.Errorf("%w: length %d", ErrTorn, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, fmt.Errorf("%w: short body", ErrTorn)
		}
		return 0, nil, err
	}
	if crc32.Checksum(body, Castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch", ErrTorn)
	}
	return body[0], body[1:], nil
}
