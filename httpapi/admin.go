package httpapi

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// health serves GET /healthz: liveness plus what the engine holds.
func (s *api) health(ctx *fasthttp.RequestCtx) {
	c := s.eng.Counts(s.privileged(ctx)) // counts shown publicly count public content only
	sem := s.semantic.Status()
	// Public: model servers are named by their model, not their address,
	// and failures are detailed in the server's log only.
	sem.Embedder, _, _ = strings.Cut(sem.Embedder, "@")
	sem.Building, _, _ = strings.Cut(sem.Building, "@")
	if sem.Error != "" {
		sem.Error = "the semantic indexer's last step failed; the server log has the details"
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{
		"status": "ok", "version": s.opts.Version, "seq": s.eng.Seq(),
		"messages": c.Messages, "documents": c.Documents, "channels": c.Channels, "threads": c.Threads, "sources": c.Sources,
		"semantic": map[string]any{
			"embedder": sem.Embedder, "chunks": sem.Chunks, "vectors": sem.Vectors, "pending": sem.Pending,
			"index": sem.Index, "building": sem.Building, "skipped": sem.Skipped, "error": sem.Error,
		},
	})
}

// backup serves POST /api/admin/backup: a consistent snapshot file, which
// `sift restore` installs into an empty data directory.
func (s *manage) backup(ctx *fasthttp.RequestCtx) {
	name := fmt.Sprintf("sift-backup-%s.sift", time.Now().UTC().Format("20060102T150405Z"))
	ctx.SetContentType("application/octet-stream")
	ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		if _, err := s.eng.Backup(w); err != nil {
			// The status is gone; a cut stream fails the restore's checks.
			s.log.Error("backup failed", "err", err)
		}
	})
}
