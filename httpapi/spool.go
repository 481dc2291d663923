package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
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

// maxUploadParts bounds the parts of a multipart upload: 100 files and a
// few fields fit; thousands of empty parts only cost the server time.
const maxUploadParts = 128

// checkParts counts the parts of a multipart body without keeping them,
// and fails past maxUploadParts (a body that is not well formed is left
// for the handler to refuse in its words).
func (sp *spooled) checkParts(boundary string) error {
	r, err := sp.reader()
	if err != nil {
		return err
	}
	mr := multipart.NewReader(r, boundary)
	for n := 0; ; n++ {
		p, err := mr.NextPart()
		if err != nil {
			return nil
		}
		p.Close()
		if n == maxUploadParts {
			return &sizeErr{fmt.Sprintf("a multipart upload has at most %d parts", maxUploadParts)}
		}
	}
}

// reader reads the spooled body from its start.
func (sp *spooled) reader() (io.Reader, error) {
	if sp.file == nil {
		return bytes.NewReader(sp.mem), nil
	}
	if _, err := sp.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return sp.file, nil
}

// install makes the spooled body the request's body, as the handlers read
// it (PostBody, MultipartForm); the request's own stream was read whole.
func (sp *spooled) install(req *fasthttp.Request) {
	if sp.file == nil {
		req.SetBodyRaw(sp.mem)
		return
	}
	sp.file.Seek(0, io.SeekStart)
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
