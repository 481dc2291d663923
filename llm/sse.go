package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// maxSSELine bounds one line of a server-sent event stream.
const maxSSELine = 4 << 20

// errDone stops ReadSSE at the "[DONE]" sentinel.
var errDone = errors.New("done")

// ReadSSE reads a server-sent event stream as OpenAI-compatible servers
// write it and calls fn with the data of each event, until "data: [DONE]"
// or the end of r. It follows the quirks servers show: blank lines,
// ":" comments and "event:", "id:" and "retry:" lines are skipped; "data:"
// may or may not be followed by a space; an event's data normally fits one
// line, and a line holding a whole JSON value is an event of its own even
// without the blank line that should end it, while data split over several
// lines is joined with newlines, as the SSE standard says. It returns
// whether "[DONE]" was seen, and fn's error or a read error.
func ReadSSE(r io.Reader, fn func(data []byte) error) (done bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSELine)
	var pending []byte
	dispatch := func() error {
		if len(pending) == 0 {
			return nil
		}
		data := pending
		pending = nil
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			return errDone
		}
		return fn(data)
	}
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		switch {
		case len(line) == 0:
			err = dispatch()
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("data:")):
			data := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if len(pending) == 0 && (json.Valid(data) || string(bytes.TrimSpace(data)) == "[DONE]") {
				pending = append(pending[:0], data...)
				err = dispatch()
			} else {
				if len(pending) > 0 {
					pending = append(pending, '\n')
				}
				pending = append(pending, data...)
			}
		default: // event:, id:, retry: and unknown fields
		}
		if err != nil {
			if err == errDone {
				return true, nil
			}
			return false, err
		}
	}
	if err := sc.Err(); err != nil {
		return false, err
	}
	if err := dispatch(); err != nil {
		if err == errDone {
			return true, nil
		}
		return false, err
	}
	return false, nil
}
