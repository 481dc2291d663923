package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A frame is the unit of both the write-ahead log and the snapshot body:
//
//	u32 length of body | u32 CRC-32C of body | body (u8 type, then payload)
//
// Integers are little-endian. See docs/format.md.
const (
	frameHeaderSize = 8
	maxFrameBody    = 64 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn means the input ended inside a frame, or a frame failed its checksum.
var errTorn = errors.New("torn or corrupt frame")

// appendFrame appends a frame of type typ holding the concatenation of parts.
func appendFrame(dst []byte, typ byte, parts ...[]byte) []byte {
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
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+frameHeaderSize:], castagnoli))
	return dst
}

// readFrame reads one frame from r into a new slice. It returns io.EOF when r
// ends exactly at a frame boundary and errTorn when a frame is cut short,
// oversized or fails its checksum.
func readFrame(r io.Reader) (typ byte, payload []byte, err error) {
	var hdr [frameHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF {
			return 0, nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return 0, nil, fmt.Errorf("%w: short header", errTorn)
		}
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:4])
	if n == 0 || n > maxFrameBody {
		return 0, nil, fmt.Errorf("%w: length %d", errTorn, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, nil, fmt.Errorf("%w: short body", errTorn)
		}
		return 0, nil, err
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch", errTorn)
	}
	return body[0], body[1:], nil
}
