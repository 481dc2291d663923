package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/valyala/fasthttp"
)

// spoolMemory is how much of an upload's body is kept in memory; the rest
// goes to a spool file.
const spoolMemory = 1 << 20

// spooled is a request body read whole, within its limit: in memory, or in
// an unlinked temporary file (nothing is left on disk whatever becomes of
// the process).
type spooled struct {
	mem  []byte
	file *os.File
	size int64
}

// spool reads r to its end, or fails with errBodyTooLarge as soon as more
// than limit bytes arrive (what was read is dropped), or with the read's
// error. The first spoolMemory bytes stay in memory; beyond, the body
// goes to a spool file.
func spool(r io.Reader, limit int) (*spooled, error) {
	lr := &io.LimitedReader{R: r, N: int64(limit) + 1}
	var mem bytes.Buffer
	n, err := io.Copy(&mem, io.LimitReader(lr, spoolMemory))
	if err != nil {
		return nil, err
	}
	if n < spoolMemory { // the whole body, or more than limit when limit < spoolMemory
		if n > int64(limit) {
			return nil, errBodyTooLarge
		}
		return &spooled{mem: mem.Bytes(), size: n}, nil
	}
	f, err := os.CreateTemp("", "sift-upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool the upload: %w", err)
	}
	os.Remove(f.Name()) // the open file lives on until closed
	sp := &spooled{file: f}
	if sp.size, err = io.Copy(f, io.MultiReader(&mem, lr)); err == nil && sp.size > int64(limit) {
		err = errBodyTooLarge
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return sp, nil
}

// install makes the spooled body the request's body, as the handlers read
// it (PostBody, MultipartForm); the request's own stream was read whole.
func (sp *spooled) install(req *fasthttp.Request) {
	if sp.file == nil {
		req.SetBodyRaw(sp.mem)
		return
	}
	req.SetBodyStream(noClose{sp.file}, int(sp.size))
}

// close frees the spool file, once the request is done.
func (sp *spooled) close() {
	if sp.file != nil {
		sp.file.Close()
	}
}

// noClose hides the spool file's Close from fasthttp, which closes a body
// stream once it has read it: the file is closed by spooled.close.
type noClose struct{ io.Reader }
