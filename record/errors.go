package record

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: no such source, channel, message or document.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the record exists already, or a conflicting operation runs.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the caller's input is malformed or out of bounds.
	ErrInvalid = errors.New("invalid")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("engine closed")
	// ErrReadOnly: the store was opened read-only.
	ErrReadOnly = errors.New("read-only: the data dir was opened to read, not to write")
	// ErrUnavailable: the store cannot be written (a full disk, a cluster
	// out of reach); writes succeed again by themselves once it can be.
	// Nothing unwritten is ever acknowledged.
	ErrUnavailable = errors.New("storage unavailable")
)

// invalidf returns an ErrInvalid with a message for the caller.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
