package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lighthouseMin is the least score each audited category must reach.
const lighthouseMin = 0.95

// lighthouseCategories are the categories audited (performance is not: it
// measures the machine as much as the pages).
var lighthouseCategories = []string{"accessibility", "best-practices", "seo"}

// TestLighthouse runs Lighthouse (the npm CLI that SIFT_LIGHTHOUSE names,
// with the installed Chromium) on the pages of a real `sift serve --demo`:
// the home page and the first conversation (/t/), channel (/c/) and
// document (/d/) linked from the home and sources pages. Every category
// must score at least 0.95; below that the test lists the audits that
// failed and the elements they name. `make lighthouse` installs the CLI
// and runs this test. The reports stay in test-output/lighthouse.
//
// Until the conversation pages exist, SIFT_LIGHTHOUSE_ALLOW_MISSING=1
// audits the other pages without failing for the missing /t/ link.
func TestLighthouse(t *testing.T) {
	cli := os.Getenv("SIFT_LIGHTHOUSE")
	if cli == "" {
		t.Skip("LIGHTHOUSE SKIPPED: set SIFT_LIGHTHOUSE to the lighthouse CLI (`make lighthouse` installs lighthouse 12.2.3 and runs this test)")
	}
	if _, err := exec.LookPath(cli); err != nil {
		t.Fatalf("SIFT_LIGHTHOUSE=%s: %v", cli, err)
	}
	chrome := os.Getenv("CHROMIUM")
	if chrome == "" {
		chrome = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(chrome); err != nil {
		t.Fatalf("no Chromium for Lighthouse at %s (set CHROMIUM): %v", chrome, err)
	}
	reports, err := filepath.Abs(filepath.Join("..", "..", "test-output", "lighthouse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(reports, 0o755); err != nil {
		t.Fatal(err)
	}

	p := startSift(t, t.TempDir(), "--demo")
	defer p.kill()

	// The search page is for people, not for search engines.
	if search := pageBody(t, p.url+"/?q=webhook"); !strings.Contains(search, `<meta name="robots" content="noindex">`) {
		t.Errorf(`/?q=webhook lacks <meta name="robots" content="noindex">`)
	}

	// The pages to audit: the home page, then the first link of each kind
	// on the home page, else on the sources page.
	links := pageBody(t, p.url+"/") + pageBody(t, p.url+"/sources")
	pages := []struct{ name, path string }{{"home", "/"}}
	for _, k := range []struct{ name, prefix string }{{"conversation", "/t/"}, {"channel", "/c/"}, {"document", "/d/"}} {
		path := firstLink(links, k.prefix)
		switch {
		case path != "":
			pages = append(pages, struct{ name, path string }{k.name, path})
		case k.prefix == "/t/" && os.Getenv("SIFT_LIGHTHOUSE_ALLOW_MISSING") == "1":
			t.Logf("NOT AUDITED: no %s link (%s...) on the home or sources page; SIFT_LIGHTHOUSE_ALLOW_MISSING=1 allows that", k.name, k.prefix)
		case k.prefix == "/t/":
			t.Errorf("no %s link (%s...) on the home or sources page: the conversation pages must be linked to be audited (SIFT_LIGHTHOUSE_ALLOW_MISSING=1 audits the other pages without them)", k.name, k.prefix)
		default:
			t.Errorf("no %s link (%s...) on the home or sources page", k.name, k.prefix)
		}
	}

	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			out := filepath.Join(reports, pg.name+".json")
			r := runLighthouse(t, cli, chrome, p.url+pg.path, out)
			failed := false
			for _, id := range lighthouseCategories {
				c, ok := r.Categories[id]
				if !ok || c.Score == nil {
					t.Errorf("%s %s: no %s score in %s", pg.name, pg.path, id, out)
					failed = true
					continue
				}
				t.Logf("%-12s %-28s %-15s %3.0f", pg.name, pg.path, id, *c.Score*100)
			}
			// The audits that did not pass: an error in a category below
			// the bar, a note in one above it (worth fixing before it drops).
			for _, id := range lighthouseCategories {
				c, ok := r.Categories[id]
				if !ok || c.Score == nil {
					continue
				}
				var b strings.Builder
				for _, ref := range c.AuditRefs {
					a, ok := r.Audits[ref.ID]
					if !ok || a.Score == nil || *a.Score >= 1 {
						continue
					}
					fmt.Fprintf(&b, "\n  - %s (%s, score %.2f, weight %g)", a.Title, ref.ID, *a.Score, ref.Weight)
					for _, item := range a.items() {
						fmt.Fprintf(&b, "\n      %s", item)
					}
				}
				switch {
				case *c.Score < lighthouseMin:
					failed = true
					t.Errorf("%s %s: %s scores %.0f, below %.0f; its failing audits:%s", pg.name, pg.path, c.Title, *c.Score*100, lighthouseMin*100, b.String())
				case b.Len() > 0:
					t.Logf("%s %s: %s scores %.0f, but these audits fail:%s", pg.name, pg.path, c.Title, *c.Score*100, b.String())
				}
			}
			if failed {
				t.Logf("the whole report: %s", out)
			}
		})
	}
}

// lighthouseReport is the part of Lighthouse's JSON report the test reads.
type lighthouseReport struct {
	RuntimeError *struct{ Code, Message string } `json:"runtimeError"`
	Categories   map[string]struct {
		Title     string   `json:"title"`
		Score     *float64 `json:"score"`
		AuditRefs []struct {
			ID     string  `json:"id"`
			Weight float64 `json:"weight"`
		} `json:"auditRefs"`
	} `json:"categories"`
	Audits map[string]lighthouseAudit `json:"audits"`
}

type lighthouseAudit struct {
	Title        string   `json:"title"`
	Score        *float64 `json:"score"` // nil when not applicable, manual or informative
	DisplayValue string   `json:"displayValue"`
	ErrorMessage string   `json:"errorMessage"`
	Explanation  string   `json:"explanation"`
	Details      struct {
		Items []map[string]any `json:"items"`
	} `json:"details"`
}

// items describes what a failing audit points at, one line each: the
// element (its selector and HTML), else the URL or text of the item.
func (a lighthouseAudit) items() []string {
	var out []string
	for _, s := range []string{a.ErrorMessage, a.Explanation, a.DisplayValue} {
		if s != "" {
			out = append(out, s)
		}
	}
	const most = 10
	for i, it := range a.Details.Items {
		if i == most {
			out = append(out, fmt.Sprintf("… and %d more", len(a.Details.Items)-most))
			break
		}
		out = append(out, describeItem(it))
	}
	return out
}

func describeItem(it map[string]any) string {
	if n, ok := it["node"].(map[string]any); ok {
		s := fmt.Sprintf("%v  %v", n["selector"], n["snippet"])
		if e, ok := n["explanation"].(string); ok && e != "" {
			s += "\n        " + strings.ReplaceAll(e, "\n", "\n        ")
		}
		return s
	}
	var parts []string
	keys := make([]string, 0, len(it))
	for k := range it {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := it[k].(type) {
		case string, float64, bool:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		case map[string]any:
			if u, ok := v["url"]; ok { // a source location
				parts = append(parts, fmt.Sprintf("%s=%v", k, u))
			}
		}
	}
	return strings.Join(parts, " ")
}

// runLighthouse audits url into the JSON report out and reads it.
func runLighthouse(t *testing.T, cli, chrome, url, out string) lighthouseReport {
	t.Helper()
	os.Remove(out)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, url, "--output=json", "--output-path="+out,
		"--only-categories="+strings.Join(lighthouseCategories, ","),
		"--chrome-flags=--headless=new --no-sandbox --disable-gpu", "--quiet")
	cmd.Env = append(os.Environ(), "CHROME_PATH="+chrome)
	// Its own process group, so a timeout also ends the Chromium it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	output, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lighthouse %s: %v (after %s)\n%s", url, err, time.Since(start).Round(time.Second), output)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("lighthouse %s wrote no report: %v\n%s", url, err, output)
	}
	var r lighthouseReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("lighthouse report %s: %v", out, err)
	}
	if r.RuntimeError != nil && r.RuntimeError.Code != "" {
		t.Fatalf("lighthouse %s: %s: %s", url, r.RuntimeError.Code, r.RuntimeError.Message)
	}
	return r
}

// pageBody GETs an HTML page, which must answer 200.
func pageBody(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return string(b)
}

var hrefs = regexp.MustCompile(`href="([^"]+)"`)

// firstLink is the first link in html whose path starts with prefix
// (relative, or absolute on any host), without its query and fragment.
func firstLink(html, prefix string) string {
	for _, m := range hrefs.FindAllStringSubmatch(html, -1) {
		h := strings.ReplaceAll(m[1], "&amp;", "&")
		if i := strings.Index(h, "://"); i >= 0 {
			rest := h[i+3:]
			j := strings.IndexByte(rest, '/')
			if j < 0 {
				continue
			}
			h = rest[j:]
		}
		if cut := strings.IndexAny(h, "?#"); cut >= 0 {
			h = h[:cut]
		}
		if strings.HasPrefix(h, prefix) && len(h) > len(prefix) {
			return h
		}
	}
	return ""
}
