package engine

import (
	"fmt"

	"github.com/sift-search/sift/engine/internal/wal"
	"github.com/sift-search/sift/record"
)

// invalidf returns a record.ErrInvalid with a message for the caller.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", record.ErrInvalid, fmt.Sprintf(format, args...))
}

// CorruptionError says where a persisted file is damaged: File, Offset and
// the cause Err. The write-ahead log's package defines it.
type CorruptionError = wal.CorruptionError
