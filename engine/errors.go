package engine

import (
	"errors"
	"fmt"

	"github.com/sift-search/sift/engine/internal/wal"
)

var (
	// ErrNotFound: no such source, channel, message or document.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the record exists already, or a conflicting operation runs.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the caller's input is malformed or out of bounds.
	ErrInvalid = errors.New("invalid")
	// ErrClosed: the engine is closed.
	ErrClosed = errors.New("engine closed")
	// ErrReadOnly: the engine was opened read-only.
	ErrReadOnly = errors.New("read-only: the data dir was opened to read, not to write")
	// ErrUnavailable: the write-ahead log cannot be written (a full disk);
	// writes succeed again by themselves once it can be. After a failed
	// fsync the engine refuses writes until restarted. Nothing unlogged is
	// ever acknowledged.
	ErrUnavailable = wal.ErrUnavailable
)

// invalidf returns an ErrInvalid with a message for the caller.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CorruptionError says where a persisted file is damaged: File, Offset and
// the cause Err. The write-ahead log's package defines it.
type CorruptionError = wal.CorruptionError
