package engine

import (
	"io"

	"github.com/sift-search/sift/engine/internal/frame"
)

// The frame — u32 length | u32 CRC-32C | body (u8 type, then payload) — is
// the unit of both the write-ahead log and the snapshot body; package frame
// reads and writes it. See docs/format.md.
const (
	frameHeaderSize = frame.HeaderSize
	maxFrameBody    = frame.MaxBody
)

var castagnoli = frame.Castagnoli

// errTorn means the input ended inside a frame, or a frame failed its checksum.
var errTorn = frame.ErrTorn

// appendFrame appends a frame of type typ holding the concatenation of parts.
func appendFrame(dst []byte, typ byte, parts ...[]byte) []byte {
	return frame.Append(dst, typ, parts...)
}

// readFrame reads one frame from r into a new slice; see frame.Read.
func readFrame(r io.Reader) (typ byte, payload []byte, err error) { return frame.Read(r) }
