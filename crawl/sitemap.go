package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/sift-search/sift/internal/textcut"
)

// Sitemap limits (sitemaps.org): 50,000 URLs and 50 MB uncompressed per file.
const (
	maxSitemapURLs  = 50_000
	maxSitemapBytes = 50 << 20
)

// sitemapEntry is one <url> or <sitemap> of a sitemap, or a line of a
// plain-text one.
type sitemapEntry struct {
	loc     string
	lastmod time.Time // zero when not given or not understood
}

// sitemap is a parsed sitemap file: pages (urlset, text) or child
// sitemaps (sitemapindex).
type sitemap struct {
	pages    []sitemapEntry
	children []sitemapEntry
}

// parseSitemap reads a sitemap: XML urlset or sitemapindex, or plain text
// with one URL per line; gzip-compressed or not (by its magic bytes).
func parseSitemap(body []byte) (*sitemap, error) {
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("sitemap: gzip: %w", err)
		}
		plain, err := io.ReadAll(io.LimitReader(zr, maxSitemapBytes+1))
		if err != nil {
			return nil, fmt.Errorf("sitemap: gzip: %w", err)
		}
		if len(plain) > maxSitemapBytes {
			return nil, errors.New("sitemap: more than 50 MB uncompressed")
		}
		body = plain
	}
	if len(body) > maxSitemapBytes {
		return nil, errors.New("sitemap: more than 50 MB")
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(trimmed) > 0 && trimmed[0] == '<' {
		return parseSitemapXML(trimmed)
	}
	return parseSitemapText(trimmed)
}

func parseSitemapXML(body []byte) (*sitemap, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = false
	dec.CharsetReader = func(charset string, r io.Reader) (io.Reader, error) {
		if strings.EqualFold(charset, "utf-8") || strings.EqualFold(charset, "us-ascii") {
			return r, nil
		}
		return nil, fmt.Errorf("sitemap: encoding %q (sitemaps are UTF-8)", charset)
	}
	out := &sitemap{}
	var root, item, field string
	var cur sitemapEntry
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			switch {
			case root == "":
				if name != "urlset" && name != "sitemapindex" {
					return nil, fmt.Errorf("sitemap: root element <%s>, want <urlset> or <sitemapindex>", name)
				}
				root = name
			case item == "" && (name == "url" && root == "urlset" || name == "sitemap" && root == "sitemapindex"):
				item, cur = name, sitemapEntry{}
			case item != "" && (name == "loc" || name == "lastmod"):
				field = name
				text.Reset()
			}
		case xml.CharData:
			if field != "" && text.Len() < 4096 {
				text.Write(t)
			}
		case xml.EndElement:
			name := t.Name.Local
			switch {
			case field != "" && name == field:
				v := strings.TrimSpace(text.String())
				if field == "loc" {
					cur.loc = v
				} else {
					cur.lastmod = parseW3CDate(v)
				}
				field = ""
			case item != "" && name == item:
				item = ""
				if !absoluteHTTP(cur.loc) {
					continue
				}
				if root == "urlset" {
					out.pages = append(out.pages, cur)
				} else {
					out.children = append(out.children, cur)
				}
				if len(out.pages)+len(out.children) > maxSitemapURLs {
					return nil, fmt.Errorf("sitemap: more than %d entries", maxSitemapURLs)
				}
			}
		}
	}
	if root == "" {
		return nil, errors.New("sitemap: no <urlset> or <sitemapindex>")
	}
	return out, nil
}

func parseSitemapText(body []byte) (*sitemap, error) {
	out := &sitemap{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if !absoluteHTTP(line) {
			return nil, fmt.Errorf("sitemap: line %q is not an absolute http(s) URL (a text sitemap lists one per line)", truncate(line, 80))
		}
		out.pages = append(out.pages, sitemapEntry{loc: line})
		if len(out.pages) > maxSitemapURLs {
			return nil, fmt.Errorf("sitemap: more than %d entries", maxSitemapURLs)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sitemap: %w", err)
	}
	return out, nil
}

func absoluteHTTP(s string) bool {
	if s == "" || len(s) > 2048 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// parseW3CDate reads a W3C Datetime (2024-08-15, 2024-08-15T10:00:00+02:00,
// …); zero when it is none.
func parseW3CDate(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// truncate cuts s to n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n) + "…"
}
