package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/record"
)

// The source administration of profile B: records as in DESIGN.md, with
// secrets write-only.

type sourceJSON struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Config     map[string]any `json:"config"`
	Schedule   string         `json:"schedule"`
	Enabled    bool           `json:"enabled"`
	Visibility string         `json:"visibility"`
	CreatedAt  time.Time      `json:"createdAt"`
	UpdatedAt  time.Time      `json:"updatedAt"`
	Stats      struct {
		Channels  int `json:"channels"`
		Threads   int `json:"threads"`
		Messages  int `json:"messages"`
		Documents int `json:"documents"`
	} `json:"stats"`
	LastCrawl  *crawlInfoJSON  `json:"lastCrawl"`  // null before the first crawl
	LastImport *importInfoJSON `json:"lastImport"` // null before the first import
}

type crawlInfoJSON struct {
	JobID      string     `json:"jobId"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"` // null while running
	Channels   int        `json:"channels"`
	Messages   int        `json:"messages"`
	Documents  int        `json:"documents"`
	Error      string     `json:"error"`
}

// importInfoJSON is a source's last import: messages = stored + updated +
// unchanged + skipped, and skippedReasons says why by reason.
type importInfoJSON struct {
	JobID          string         `json:"jobId"`
	Status         string         `json:"status"`
	StartedAt      time.Time      `json:"startedAt"`
	FinishedAt     *time.Time     `json:"finishedAt"` // null while running
	File           string         `json:"file"`
	Format         string         `json:"format"`
	Channels       int            `json:"channels"`
	Messages       int            `json:"messages"`
	Stored         int            `json:"stored"`
	Updated        int            `json:"updated"`
	Unchanged      int            `json:"unchanged"`
	Skipped        int            `json:"skipped"`
	SkippedReasons map[string]int `json:"skippedReasons"`
	Error          string         `json:"error"`
}

func importInfoView(li *record.ImportInfo) *importInfoJSON {
	out := &importInfoJSON{
		JobID: li.JobID, Status: li.Status, StartedAt: li.StartedAt, File: li.File, Format: li.Format,
		Channels: li.Channels, Messages: li.Messages, Stored: li.Stored, Updated: li.Updated, Unchanged: li.Unchanged,
		Skipped: li.SkippedTotal(), SkippedReasons: li.Skipped, Error: li.Error,
	}
	if out.SkippedReasons == nil {
		out.SkippedReasons = map[string]int{}
	}
	if !li.FinishedAt.IsZero() {
		t := li.FinishedAt
		out.FinishedAt = &t
	}
	return out
}

func (s *manage) sourceView(src record.Source) sourceJSON {
	out := sourceJSON{
		ID: src.ID, Name: src.Name, Type: src.Type, Config: crawl.MaskConfig(src.Config), Schedule: src.Schedule,
		Enabled: src.Enabled, Visibility: src.Visibility, CreatedAt: src.CreatedAt, UpdatedAt: src.UpdatedAt,
	}
	st := s.eng.SourceStats(src.ID, true)
	out.Stats.Channels, out.Stats.Threads, out.Stats.Messages, out.Stats.Documents = st.Channels, st.Threads, st.Messages, st.Documents
	if lc := src.LastCrawl; lc != nil {
		out.LastCrawl = &crawlInfoJSON{
			JobID: lc.JobID, Status: lc.Status, StartedAt: lc.StartedAt, Channels: lc.Channels,
			Messages: lc.Messages, Documents: lc.Documents, Error: lc.Error,
		}
		if !lc.FinishedAt.IsZero() {
			t := lc.FinishedAt
			out.LastCrawl.FinishedAt = &t
		}
	}
	if li := src.LastImport; li != nil {
		out.LastImport = importInfoView(li)
	}
	return out
}

// listSources serves GET /api/sources.
func (s *manage) listSources(ctx *fasthttp.RequestCtx) {
	srcs := s.eng.Sources()
	out := struct {
		Sources []sourceJSON `json:"sources"`
	}{Sources: make([]sourceJSON, 0, len(srcs))}
	for _, src := range srcs {
		out.Sources = append(out.Sources, s.sourceView(src))
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// getSource serves GET /api/sources/{id}.
func (s *manage) getSource(ctx *fasthttp.RequestCtx) {
	src, ok := s.eng.Source(pathParam(ctx, "id"))
	if !ok {
		writeError(ctx, fasthttp.StatusNotFound, "no source %q", pathParam(ctx, "id"))
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, s.sourceView(src))
}

// sourceInput is a POST or PATCH body. Read-only fields of a record are
// accepted and ignored, so a client may send back what it read.
type sourceInput struct {
	ID         *string
	Name       *string
	Type       *string
	Config     map[string]any
	Schedule   *string
	Enabled    *bool
	Visibility *string
}

// maxSourceBody bounds a source's JSON (a web source's lists of URLs and
// prefixes are the largest part).
const maxSourceBody = 1 << 20

var errSourceTooLarge = &sizeErr{fmt.Sprintf("a source's JSON is at most %d bytes", maxSourceBody)}

var readOnlySourceFields = map[string]bool{"createdAt": true, "updatedAt": true, "stats": true, "lastCrawl": true, "lastImport": true}

func decodeSourceInput(ctx *fasthttp.RequestCtx) (*sourceInput, error) {
	if mt, _, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType())); err != nil || mt != "application/json" {
		return nil, &mediaErr{"send the source as application/json"}
	}
	if len(ctx.PostBody()) > maxSourceBody {
		return nil, errSourceTooLarge
	}
	var raw map[string]json.RawMessage
	if err := decodeOne(ctx.PostBody(), &raw); err != nil || raw == nil {
		return nil, paramErr("the body must be one JSON object: %v", err)
	}
	in := &sourceInput{}
	for k, v := range raw {
		var err error
		switch k {
		case "id":
			err = json.Unmarshal(v, &in.ID)
		case "name":
			err = json.Unmarshal(v, &in.Name)
		case "type":
			err = json.Unmarshal(v, &in.Type)
		case "config":
			if !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				if err = json.Unmarshal(v, &in.Config); err == nil && in.Config == nil {
					err = paramErr("config must be an object")
				}
			}
		case "schedule":
			err = json.Unmarshal(v, &in.Schedule)
		case "enabled":
			err = json.Unmarshal(v, &in.Enabled)
		case "visibility":
			err = json.Unmarshal(v, &in.Visibility)
		default:
			if !readOnlySourceFields[k] {
				return nil, paramErr("unknown field %q (fields: id, name, type, config, schedule, enabled, visibility)", k)
			}
		}
		if err != nil {
			return nil, paramErr("field %q has the wrong type: %v", k, err)
		}
	}
	return in, nil
}

// createSource serves POST /api/sources.
func (s *manage) createSource(ctx *fasthttp.RequestCtx) {
	in, err := decodeSourceInput(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	stored, err := s.addSource(in)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.Response.Header.Set("Location", "/api/sources/"+stored.ID)
	writeJSON(ctx, fasthttp.StatusCreated, s.sourceView(stored))
}

// addSource validates and stores a new source (the API's and the
// console's).
func (s *manage) addSource(in *sourceInput) (record.Source, error) {
	if in.Type == nil || *in.Type == "" {
		return record.Source{}, paramErr("type is required (one of %s)", strings.Join(crawl.Types(), ", "))
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return record.Source{}, paramErr("name is required")
	}
	src := record.Source{Name: strings.TrimSpace(*in.Name), Type: *in.Type, Enabled: true, Visibility: record.VisibilityPublic}
	if in.Enabled != nil {
		src.Enabled = *in.Enabled
	}
	if in.Schedule != nil {
		src.Schedule = *in.Schedule
	}
	if in.Visibility != nil {
		if err := checkVisibility(*in.Visibility); err != nil {
			return record.Source{}, err
		}
		src.Visibility = *in.Visibility
	}
	if err := crawl.CheckSchedule(src.Schedule); err != nil {
		return record.Source{}, err
	}
	var err error
	if src.Config, err = crawl.CheckConfig(src.Type, in.Config); err != nil {
		return record.Source{}, err
	}
	if in.ID != nil { // else the store derives one from the name
		src.ID = *in.ID
		if !record.ValidSourceID(src.ID) {
			return record.Source{}, paramErr("id must be 1 to 64 characters of a-z, 0-9, '-', '_' and '.'")
		}
	}
	stored, err := s.eng.CreateSource(src) // ErrConflict when the id exists
	if err != nil {
		return record.Source{}, err
	}
	s.log.Info("source created", "source", stored.ID, "type", stored.Type)
	return stored, nil
}

// checkVisibility validates a source's visibility.
func checkVisibility(v string) error {
	if v != record.VisibilityPublic && v != record.VisibilityPrivate {
		return paramErr("visibility must be %q or %q", record.VisibilityPublic, record.VisibilityPrivate)
	}
	return nil
}

// patchSource serves PATCH /api/sources/{id}: the given fields change,
// config merges key by key (null removes a key; a secret sent back as
// "***" stays as it was, unless apiBase or baseUrl moves to another
// server: see crawl.MergeConfig).
func (s *manage) patchSource(ctx *fasthttp.RequestCtx) {
	in, err := decodeSourceInput(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	stored, err := s.changeSource(pathParam(ctx, "id"), in)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, s.sourceView(stored))
}

// changeSource applies the given fields to a stored source (the API's
// PATCH and the console's edit form).
func (s *manage) changeSource(id string, in *sourceInput) (record.Source, error) {
	if in.Schedule != nil {
		if err := crawl.CheckSchedule(*in.Schedule); err != nil {
			return record.Source{}, err
		}
	}
	if in.Visibility != nil {
		if err := checkVisibility(*in.Visibility); err != nil {
			return record.Source{}, err
		}
	}
	stored, err := s.eng.UpdateSource(id, func(src *record.Source) error {
		if in.ID != nil && *in.ID != id {
			return paramErr("id cannot change")
		}
		if in.Type != nil && *in.Type != src.Type {
			return paramErr("type cannot change (%s); create a new source instead", src.Type)
		}
		if in.Name != nil {
			if strings.TrimSpace(*in.Name) == "" {
				return paramErr("name cannot be empty")
			}
			src.Name = strings.TrimSpace(*in.Name)
		}
		if in.Schedule != nil {
			src.Schedule = *in.Schedule
		}
		if in.Enabled != nil {
			src.Enabled = *in.Enabled
		}
		if in.Visibility != nil {
			src.Visibility = *in.Visibility
		}
		if in.Config != nil {
			cfg, err := crawl.CheckConfig(src.Type, crawl.MergeConfig(src.Config, in.Config))
			if err != nil {
				return err
			}
			src.Config = cfg
		}
		return nil
	})
	if err != nil {
		return record.Source{}, err
	}
	s.log.Info("source updated", "source", id)
	return stored, nil
}

// deleteSource serves DELETE /api/sources/{id}.
func (s *manage) deleteSource(ctx *fasthttp.RequestCtx) {
	if err := s.crawler.Delete(pathParam(ctx, "id")); err != nil {
		writeErr(ctx, err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// crawlSource serves POST /api/sources/{id}/crawl[?full=true]: it answers
// when the crawl ends.
func (s *manage) crawlSource(ctx *fasthttp.RequestCtx) {
	full := false
	if v := ctx.QueryArgs().Peek("full"); v != nil {
		b, err := strconv.ParseBool(string(v))
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "full must be true or false")
			return
		}
		full = b
	}
	res, err := s.crawler.Crawl(pathParam(ctx, "id"), full)
	if err != nil && res.JobID == "" {
		writeErr(ctx, err)
		return
	}
	out := map[string]any{
		"jobId": res.JobID, "status": res.Status, "full": res.Full,
		"channels": res.Channels, "messages": res.Messages, "documents": res.Documents,
		"deleted": res.Deleted, "failed": res.Failed,
		"startedAt": res.StartedAt, "finishedAt": res.FinishedAt,
	}
	if err != nil {
		out["error"], out["code"] = err.Error(), errorCodes[fasthttp.StatusBadGateway]
		writeJSON(ctx, fasthttp.StatusBadGateway, out)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// testSource serves POST /api/sources/{id}/test: 200 with the connector's
// verdict either way.
func (s *manage) testSource(ctx *fasthttp.RequestCtx) {
	res, err := s.crawler.Test(s.base, pathParam(ctx, "id"))
	if err != nil {
		writeErr(ctx, err)
		return
	}
	if !res.OK {
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"ok": false, "error": res.Error})
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"ok": true, "latencyMs": res.Latency.Milliseconds(), "detail": res.Detail})
}

// importSource serves POST /api/sources/{id}/import: an export file as the
// multipart part "file", or as the body itself. It answers when the import
// ends, with what became of every message of the file.
func (s *manage) importSource(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	var file io.ReaderAt
	var size int64
	var name string
	mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	if mt == "multipart/form-data" {
		form, err := ctx.MultipartForm()
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "malformed multipart body: %v", err)
			return
		}
		defer ctx.Request.RemoveMultipartFormFiles()
		files := form.File["file"]
		if len(files) != 1 {
			writeError(ctx, fasthttp.StatusBadRequest, `send one export file as the multipart part "file"`)
			return
		}
		f, err := files[0].Open()
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "reading the upload: %v", err)
			return
		}
		defer f.Close()
		file, size, name = f, files[0].Size, files[0].Filename
	} else {
		body := ctx.PostBody()
		if len(body) == 0 {
			writeError(ctx, fasthttp.StatusBadRequest, `send an export file: multipart part "file", or the file as the body`)
			return
		}
		file, size = bytes.NewReader(body), int64(len(body))
	}
	res, err := s.crawler.Import(id, crawl.ImportFile{Name: name, R: file, Size: size})
	if err != nil {
		writeErr(ctx, sourceNotFound(err, id))
		return
	}
	reasons := res.Skipped
	if reasons == nil {
		reasons = map[string]int{}
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{
		"jobId": res.JobID, "file": res.File, "format": res.Format, "channels": res.Channels, "messages": res.Messages,
		"stored": res.Stored, "updated": res.Updated, "unchanged": res.Unchanged,
		"skipped": res.SkippedTotal(), "skippedReasons": reasons, "changed": res.Changed,
		"startedAt": res.StartedAt, "finishedAt": res.FinishedAt,
	})
}

func pathParam(ctx *fasthttp.RequestCtx, name string) string {
	v, _ := ctx.UserValue(name).(string)
	return v
}
