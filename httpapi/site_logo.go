package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// The site's logo: uploaded by the operator (PUT /api/settings/logo or the
// console), served to everyone at GET /site/logo. Its bytes are the file
// DATA_DIR/site-logo, as uploaded; the setting site_logo names its type
// and version (the first hex digits of its SHA-256), and a file whose
// bytes do not hash to that version is never served. Without a data dir
// (Options.DataDir empty) the logo is kept in memory only: it is gone at
// the next start, and in a cluster the other servers, which share the
// setting but not the bytes, show no logo.

// maxLogoBytes bounds a logo; maxLogoBody bounds the request carrying one
// (the image and a multipart envelope around it), before it is read.
const (
	maxLogoBytes = 256 << 10
	maxLogoBody  = maxLogoBytes + 16<<10
)

const (
	logoFile    = "site-logo"
	logoTmpFile = logoFile + ".tmp" // the engine too removes *.tmp of the data dir at start
)

// logoStore holds the logo's bytes: in memory, and in dir when set.
type logoStore struct {
	dir   string
	write sync.Mutex // one change (file, then setting) at a time

	mu      sync.Mutex
	version string // of data; "" = none held
	data    []byte
	missing string // a version looked for in dir and not found there
}

// newLogoStore keeps the logo in dir ("" = memory only), removing what an
// interrupted write left there.
func newLogoStore(dir string) *logoStore {
	if dir != "" {
		os.Remove(filepath.Join(dir, logoTmpFile))
	}
	return &logoStore{dir: dir}
}

// logoVersion is the version of a logo's bytes.
func logoVersion(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:logoVersionLen]
}

// get returns the bytes of the logo of version, reading them from the
// data dir when they are not in memory; a version not found there is not
// looked for again until another is asked for.
func (l *logoStore) get(version string) ([]byte, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if version == "" {
		return nil, false
	}
	if version == l.version {
		return l.data, true
	}
	if l.dir == "" || version == l.missing {
		return nil, false
	}
	data, err := readLogo(filepath.Join(l.dir, logoFile))
	if err != nil || logoVersion(data) != version {
		l.missing = version
		return nil, false
	}
	l.version, l.data = version, data
	return data, true
}

// readLogo reads a logo file, at most maxLogoBytes of it.
func readLogo(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxLogoBytes+1))
}

// put keeps data as the logo of version: written to the data dir (when
// there is one) before it is held in memory.
func (l *logoStore) put(data []byte, version string) error {
	if l.dir != "" {
		if err := os.MkdirAll(l.dir, 0o700); err != nil {
			return err
		}
		if err := writeFileAtomic(l.dir, logoFile, data); err != nil {
			return err
		}
	}
	l.mu.Lock()
	l.version, l.data, l.missing = version, data, ""
	l.mu.Unlock()
	return nil
}

// remove drops the logo, from memory and from the data dir.
func (l *logoStore) remove() error {
	l.mu.Lock()
	l.version, l.data, l.missing = "", nil, ""
	l.mu.Unlock()
	if l.dir == "" {
		return nil
	}
	if err := os.Remove(filepath.Join(l.dir, logoFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return syncDir(l.dir)
}

// writeFileAtomic writes data to dir/name through a temporary file that is
// synced and renamed into place; the directory is synced after. A failed
// write leaves the old file as it was.
func writeFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so a file created, renamed or removed in it
// persists.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// checkLogo returns the type of a logo's bytes, by their content (what a
// client says is not taken), or why they cannot be one.
func checkLogo(data []byte) (string, error) {
	switch {
	case len(data) == 0:
		return "", paramErr("the logo is empty: send a PNG, JPEG, GIF or WebP image")
	case len(data) > maxLogoBytes:
		return "", &sizeErr{fmt.Sprintf("a logo is at most %d bytes (256 KiB); this one has %d", maxLogoBytes, len(data))}
	}
	ct := http.DetectContentType(data)
	if !slices.Contains(logoTypes, ct) {
		return "", &mediaErr{fmt.Sprintf("a logo must be a PNG, JPEG, GIF or WebP image (no SVG); this is %s", ct)}
	}
	return ct, nil
}

// setLogo checks and stores a logo and makes it the site's.
func (s *manage) setLogo(data []byte) error {
	ct, err := checkLogo(data)
	if err != nil {
		return err
	}
	version := logoVersion(data)
	s.logo.write.Lock()
	defer s.logo.write.Unlock()
	if err := s.logo.put(bytes.Clone(data), version); err != nil {
		return fmt.Errorf("store the logo: %w", err)
	}
	if _, err := s.eng.UpdateSettings(map[string]string{settingSiteLogo: ct + ";" + version}); err != nil {
		return err
	}
	s.log.Info("site logo set", "type", ct, "bytes", len(data), "version", version)
	return nil
}

// removeLogo removes the site's logo: the setting first, so no page links
// a logo that is gone, then the bytes.
func (s *manage) removeLogo() error {
	s.logo.write.Lock()
	defer s.logo.write.Unlock()
	if _, err := s.eng.UpdateSettings(map[string]string{settingSiteLogo: ""}); err != nil {
		return err
	}
	if err := s.logo.remove(); err != nil {
		return fmt.Errorf("remove the logo file: %w", err)
	}
	s.log.Info("site logo removed")
	return nil
}

// logoUpload reads the image of a logo upload: the multipart part "file",
// or else the whole body. Its size was bounded before it was read
// (maxLogoBody, limits.go).
func logoUpload(ctx *fasthttp.RequestCtx) ([]byte, error) {
	if !isMultipart(ctx) {
		return ctx.PostBody(), nil
	}
	form, err := ctx.MultipartForm()
	if err != nil {
		return nil, paramErr("malformed multipart body: %v", err)
	}
	files := form.File["file"]
	if len(files) != 1 {
		return nil, paramErr(`send the logo as one multipart "file" part`)
	}
	f, err := files[0].Open()
	if err != nil {
		return nil, fmt.Errorf("open upload: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLogoBody)) // the body's bound
	if err != nil {
		return nil, fmt.Errorf("read upload: %w", err)
	}
	return data, nil
}

// putLogo serves PUT /api/settings/logo: the image as the body (any
// Content-Type: the bytes decide) or as the multipart part "file".
func (s *manage) putLogo(ctx *fasthttp.RequestCtx) {
	defer ctx.Request.RemoveMultipartFormFiles()
	data, err := logoUpload(ctx)
	if err == nil {
		err = s.setLogo(data)
	}
	if err != nil {
		writeErr(ctx, err)
		return
	}
	s.getSettings(ctx)
}

// deleteLogo serves DELETE /api/settings/logo.
func (s *manage) deleteLogo(ctx *fasthttp.RequestCtx) {
	if err := s.removeLogo(); err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// serveLogo serves GET /site/logo: the logo, to everyone. The pages link
// it with its version (?v=), an address whose bytes never change, so that
// one is cached for good; any other is revalidated.
func (s *pages) serveLogo(ctx *fasthttp.RequestCtx) {
	ct, version, ok := parseLogoSetting(s.eng.Settings()[settingSiteLogo])
	var data []byte
	if ok {
		data, ok = s.logo.get(version)
	}
	if !ok {
		s.notFound(ctx)
		return
	}
	h := &ctx.Response.Header
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("ETag", `"`+version+`"`)
	if string(ctx.QueryArgs().Peek("v")) == version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=0, must-revalidate")
	}
	ctx.SetContentType(ct)
	if notModified(ctx, version, time.Time{}) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetBody(data)
}
