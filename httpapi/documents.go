package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/extract"
	"github.com/sift-search/sift/record"
)

// maxFilesPerUpload bounds the file parts of one upload.
const maxFilesPerUpload = 100

// documentListJSON is an item of GET /api/documents.
type documentListJSON struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	Slug          string `json:"slug"`
	SourceID      string `json:"sourceId"`
	URL           string `json:"url"`
	ContentLength int    `json:"contentLength"`
	UpdatedAt     string `json:"updatedAt"`
}

// uploadedJSON is an item of the answer to POST /api/documents.
type uploadedJSON struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	Slug          string `json:"slug"`
	URL           string `json:"url"`
	ContentLength int    `json:"contentLength"`
}

// listDocuments serves GET /api/documents.
func (s *api) listDocuments(ctx *fasthttp.RequestCtx) {
	limit, err := intParam(ctx, "limit", 100, 1, 1000)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	offset, err := intParam(ctx, "offset", 0, 0, 1<<30)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	docs, total := s.eng.Documents(offset, limit, s.privileged(ctx))
	out := struct {
		Documents []documentListJSON `json:"documents"`
		Total     int                `json:"total"`
	}{Documents: make([]documentListJSON, 0, len(docs)), Total: total}
	for i := range docs {
		d := &docs[i]
		out.Documents = append(out.Documents, documentListJSON{
			ID: d.ID, Title: d.Title, Slug: d.Slug, SourceID: d.SourceID, URL: documentURL(s.opts.BaseURL, d),
			ContentLength: utf8.RuneCountInString(d.Content), UpdatedAt: formatTime(d.UpdatedAt),
		})
	}
	writeJSON(ctx, fasthttp.StatusOK, out)
}

// uploadDocuments serves POST /api/documents: multipart file parts, or one
// JSON document.
func (s *manage) uploadDocuments(ctx *fasthttp.RequestCtx) {
	stored, err := s.receiveDocuments(ctx)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	out := struct {
		Documents []uploadedJSON `json:"documents"`
	}{}
	for i := range stored {
		d := &stored[i]
		out.Documents = append(out.Documents, uploadedJSON{
			ID: d.ID, Title: d.Title, Slug: d.Slug, URL: documentURL(s.opts.BaseURL, d),
			ContentLength: utf8.RuneCountInString(d.Content),
		})
	}
	writeJSON(ctx, fasthttp.StatusCreated, out)
}

// receiveDocuments converts and stores the documents of an upload request
// (the API's and the console's): multipart/form-data with "file" parts
// and optional "title" and "sourceId" fields, or one JSON document. It
// returns the documents as stored, or an error for writeErr/errorStatus;
// nothing is stored unless every file converts.
func (s *manage) receiveDocuments(ctx *fasthttp.RequestCtx) ([]record.Document, error) {
	mediaType, _, err := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	var docs []record.Document
	switch {
	case err == nil && mediaType == "multipart/form-data":
		docs, err = s.multipartDocuments(ctx)
	case err == nil && mediaType == "application/json":
		docs, err = jsonDocument(ctx.PostBody())
	default:
		return nil, &mediaErr{"send multipart/form-data with one or more \"file\" parts (.txt, .md, .html), or application/json {title, content, url?, sourceId?}"}
	}
	if err != nil {
		return nil, err
	}
	return s.eng.PutDocuments(docs)
}

// uploadJSON is the JSON form of an upload.
type uploadJSON struct {
	Title    *string `json:"title"`
	Content  *string `json:"content"`
	URL      string  `json:"url"`
	SourceID string  `json:"sourceId"`
	Format   string  `json:"format"`   // text (default), markdown or html
	Language string  `json:"language"` // the language it is written in (de, pt-BR); detected when absent
}

func jsonDocument(body []byte) ([]record.Document, error) {
	if !utf8.Valid(body) {
		return nil, paramErr("body is not valid UTF-8")
	}
	var in uploadJSON
	if err := decodeOne(body, &in); err != nil {
		return nil, paramErr("malformed JSON: %v", err)
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		return nil, paramErr("title is required")
	}
	if in.Content == nil {
		return nil, paramErr("content is required")
	}
	d := record.Document{Title: *in.Title, Content: *in.Content, URL: in.URL, SourceID: in.SourceID, Language: in.Language}
	switch in.Format {
	case "", "text":
		d.Format = record.FormatText
	case "markdown":
		d.Format = record.FormatMarkdown
	case "html":
		_, text, lang, err := extract.HTMLLang(strings.NewReader(d.Content))
		if err != nil {
			return nil, paramErr("content: %v", err)
		}
		d.Content, d.Format = text, record.FormatText
		if d.Language == "" {
			d.Language = declaredLanguage(lang)
		}
	default:
		return nil, paramErr("format must be text, markdown or html")
	}
	return []record.Document{d}, nil
}

func (s *manage) multipartDocuments(ctx *fasthttp.RequestCtx) ([]record.Document, error) {
	form, err := ctx.MultipartForm()
	if err != nil {
		return nil, paramErr("malformed multipart body: %v", err)
	}
	defer ctx.Request.RemoveMultipartFormFiles()
	files := form.File["file"]
	if len(files) == 0 {
		return nil, paramErr(`the multipart body has no "file" part`)
	}
	if len(files) > maxFilesPerUpload {
		return nil, paramErr("at most %d files per upload", maxFilesPerUpload)
	}
	title := formValue(form, "title")
	if title != "" && len(files) > 1 {
		return nil, paramErr("title applies to a single file; this upload has %d", len(files))
	}
	var docs []record.Document
	for _, fh := range files {
		d, err := fileDocument(fh)
		if err != nil {
			return nil, err
		}
		if title != "" {
			d.Title = title
		}
		if lang := formValue(form, "language"); lang != "" {
			d.Language = lang
		}
		d.SourceID = formValue(form, "sourceId")
		docs = append(docs, d)
	}
	return docs, nil
}

func formValue(form *multipart.Form, name string) string {
	if v := form.Value[name]; len(v) > 0 {
		return strings.TrimSpace(v[0])
	}
	return ""
}

// fileDocument converts one uploaded file by its extension.
func fileDocument(fh *multipart.FileHeader) (record.Document, error) {
	name := path.Base(strings.ReplaceAll(fh.Filename, `\`, "/"))
	f, err := fh.Open()
	if err != nil {
		return record.Document{}, fmt.Errorf("open upload: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		return record.Document{}, fmt.Errorf("read upload: %w", err)
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // UTF-8 byte-order mark
	if !utf8.Valid(raw) {
		return record.Document{}, paramErr("file %q is not valid UTF-8 text", name)
	}
	d := record.Document{Key: name, Content: string(raw), Format: record.FormatText}
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".md", ".markdown":
		d.Format = record.FormatMarkdown
		d.Title = extract.MarkdownTitle(d.Content)
	case ".txt", ".text":
	case ".html", ".htm":
		title, text, lang, err := extract.HTMLLang(bytes.NewReader(raw))
		if err != nil {
			return record.Document{}, paramErr("file %q: %v", name, err)
		}
		d.Title, d.Content, d.Language = title, text, declaredLanguage(lang)
	default:
		return record.Document{}, &mediaErr{fmt.Sprintf("file %q: unsupported type %q; upload .txt, .md or .html", name, ext)}
	}
	if d.Title == "" {
		d.Title = extract.TitleFromFileName(name)
	}
	if d.Title == "" {
		return record.Document{}, paramErr("file %q: no title; add a title field", name)
	}
	return d, nil
}

// deleteDocument serves DELETE /api/documents/{id}.
func (s *manage) deleteDocument(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	if err := s.eng.DeleteDocument(id); err != nil {
		writeErr(ctx, fmt.Errorf("document %q: %w", id, err))
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// declaredLanguage is the language tag a page declares, when it is one:
// a page's junk lang attribute is ignored rather than refused.
func declaredLanguage(tag string) string {
	lang, ok := record.NormLanguage(tag)
	if !ok {
		return ""
	}
	return lang
}
