package record

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"

	"github.com/sift-search/sift/tokenizer"
)

// maxSlugBytes bounds slugs; longer names are cut at a word boundary.
const maxSlugBytes = 80

// Slugify turns a name into lower-case ASCII words joined by hyphens
// ("Café Help & FAQ" → "cafe-help-faq"). It may return "".
func Slugify(name string) string { return slugify(name, maxSlugBytes) }

// slugify is Slugify with slugs of at most maxBytes.
func slugify(name string, maxBytes int) string {
	var b strings.Builder
	dash := false
	for _, r := range tokenizer.Fold(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= maxBytes {
			break
		}
	}
	s := b.String()
	if len(s) > maxBytes {
		s = s[:maxBytes]
		if i := strings.LastIndexByte(s, '-'); i > maxBytes/2 {
			s = s[:i]
		}
	}
	return strings.Trim(s, "-")
}

// uniqueSlug returns the slug of name, or of fallback when name has none,
// made unique by a numeric suffix among the slugs taken reports.
func uniqueSlug(name, fallback string, taken func(string) bool) string {
	return SlugFor(name, fallback, "", taken)
}

// SlugFor returns the slug of a new record: the slug of name (fallback
// when it has none) made unique among those taken reports. A record hidden
// from callers without credentials when it is made (hiddenKey, its key,
// not empty) gets a suffix derived from its key after the name's slug, so
// it never takes a plain name: whether a public channel is "help" or
// "help-2" depends on the public records alone, and tells nothing of the
// private ones. A record keeps its slug when its visibility changes.
func SlugFor(name, fallback, hiddenKey string, taken func(string) bool) string {
	base := Slugify(name)
	if base == "" {
		base = fallback
	}
	if hiddenKey != "" {
		sum := sha256.Sum256([]byte(hiddenKey))
		base += "-" + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:5]))[:6]
	}
	return FirstFree(base, taken)
}

// maxSourceIDBase bounds the part of a derived source id that comes from
// the name, leaving room for a suffix within maxSourceIDBytes.
const maxSourceIDBase = maxSourceIDBytes - 8

// SourceIDBase is the id a source named name would get if it were free:
// the slug of the name (like channel and document slugs), or "source".
func SourceIDBase(name string) string {
	if base := slugify(name, maxSourceIDBase); base != "" {
		return base
	}
	return "source"
}

// FirstFree returns base, or else the first of base-2, base-3… that
// taken does not report.
func FirstFree(base string, taken func(string) bool) string {
	if !taken(base) {
		return base
	}
	for i := 2; ; i++ {
		if s := base + "-" + strconv.Itoa(i); !taken(s) {
			return s
		}
	}
}

// ValidSlug reports whether s could be a slug: what page handlers check
// before any lookup, so no path trickery reaches the engine.
func ValidSlug(s string) bool {
	if s == "" || len(s) > maxSlugBytes+12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
