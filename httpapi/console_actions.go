package httpapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
)

// The console's actions on a source: test, crawl, import. Each outcome is
// shown in words on the source's page.

// consoleTest serves POST /dashboard/sources/{id}/test: the connector's
// verdict.
func (s *console) consoleTest(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	if src, ok := s.eng.Source(id); ok {
		if err := crawl.CanCrawl(src); err != nil {
			s.showSource(ctx, id, s.refused("Test", id, err), nil)
			return
		}
	}
	res, err := s.crawler.Test(s.base, id)
	if err != nil {
		s.showSource(ctx, id, failure(sourceNotFound(err, id)), nil)
		return
	}
	f := flash{Text: fmt.Sprintf("Test passed in %d ms: %s", res.Latency.Milliseconds(), res.Detail)}
	if !res.OK {
		f = flash{Error: true, Text: "Test failed: " + res.Error}
	}
	s.consoleDone(ctx, "/dashboard/sources/"+id, f)
}

// consoleCrawl serves POST /dashboard/sources/{id}/crawl (field full=1
// for a full crawl): it answers when the crawl ends, with its figures.
func (s *console) consoleCrawl(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	full := formField(ctx, "full") != ""
	res, err := s.crawler.Crawl(id, full)
	if err != nil && res.JobID == "" {
		s.showSource(ctx, id, s.refused("Crawl", id, sourceNotFound(err, id)), nil)
		return
	}
	kind := "Crawl"
	if full {
		kind = "Full crawl"
	}
	figures := fmt.Sprintf("%s, %s, %s touched; %d deleted; %d failed.", count(res.Channels, "channel"),
		count(res.Messages, "message"), count(res.Documents, "document"), res.Deleted, res.Failed)
	f := flash{Text: kind + " finished: " + figures}
	if err != nil {
		f = flash{Error: true, Text: fmt.Sprintf("%s failed: %s. Before it stopped: %s", kind, strings.TrimSuffix(err.Error(), "."), figures)}
	}
	s.consoleDone(ctx, "/dashboard/sources/"+id, f)
}

// refused is the flash of action (Crawl, Test) on source id failing
// with err before anything was attempted. A source that cannot be crawled
// as it stands (crawl.ErrNotCrawlable: an import-only one, say) is told
// so, and pointed to its imports when it takes them; the runner records
// nothing on it.
func (s *console) refused(action, id string, err error) *flash {
	f := failure(err)
	if !errors.Is(err, crawl.ErrNotCrawlable) {
		return f
	}
	f.Text = action + " refused: " + f.Text
	if src, ok := s.eng.Source(id); ok {
		if format := crawl.ImportFormat(src.Type); format != "" {
			f.Text += ". This source takes " + format + " export files: import one below."
		}
	}
	return f
}

// consoleImport serves POST /dashboard/sources/{id}/import: the export
// file in the multipart part "file".
func (s *console) consoleImport(ctx *fasthttp.RequestCtx) {
	id := pathParam(ctx, "id")
	form, err := ctx.MultipartForm()
	if err != nil {
		s.showSource(ctx, id, failure(paramErr("send the export file from the import form (multipart): %v", err)), nil)
		return
	}
	files := form.File["file"]
	if len(files) != 1 {
		s.showSource(ctx, id, failure(paramErr("choose one export file to import")), nil)
		return
	}
	file, err := files[0].Open()
	if err != nil {
		s.showSource(ctx, id, failure(fmt.Errorf("open the upload: %w", err)), nil)
		return
	}
	defer file.Close()
	res, err := s.crawler.Import(id, crawl.ImportFile{Name: files[0].Filename, R: file, Size: files[0].Size})
	if err != nil {
		s.showSource(ctx, id, failure(sourceNotFound(err, id)), nil)
		return
	}
	s.consoleDone(ctx, "/dashboard/sources/"+id, flash{Text: fmt.Sprintf("Imported a %s export: %s, %s in the file; %s new or changed: %s.",
		res.Format, count(res.Channels, "channel"), count(res.Messages, "message"), thousands(res.Changed),
		importFigures(res.Stored, res.Updated, res.Unchanged, res.Skipped))})
}

// importFigures says what became of an import's messages: "320 stored,
// 0 updated, 0 unchanged, 5 skipped (unsupported type GuildMemberJoin: 5)".
func importFigures(stored, updated, unchanged int, skipped map[string]int) string {
	total := 0
	reasons := make([]string, 0, len(skipped))
	for why, n := range skipped {
		total += n
		reasons = append(reasons, why+": "+thousands(n))
	}
	out := fmt.Sprintf("%s stored, %s updated, %s unchanged, %s skipped", thousands(stored), thousands(updated), thousands(unchanged), thousands(total))
	if len(reasons) > 0 {
		slices.Sort(reasons)
		out += " (" + strings.Join(reasons, ", ") + ")"
	}
	return out
}
