package httpapi

import (
	"slices"
	"strings"
)

// The site's look beside its name and description: an accent colour and a
// logo, both console settings kept by the engine like the others. The
// logo's bytes are kept apart (site_logo.go); its setting only says that
// there is one, of which type and which version, so every server and every
// page agree on it.

const (
	settingSiteAccent = "site_accent" // "#rrggbb", lower case
	settingSiteLogo   = "site_logo"   // "<content type>;<version>"
)

// shownAccent is the colour the console's colour input shows while no
// accent is set (the pages' link colour): a colour input cannot be empty.
const shownAccent = "#0645ad"

// parseAccent returns s as an accent colour, "#rrggbb" in lower case, or
// false when s is not one (upper-case hex digits are taken).
func parseAccent(s string) (string, bool) {
	if len(s) != 7 || s[0] != '#' {
		return "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// siteAccent is the accent colour the console set, "#rrggbb" in lower
// case, or "" for the pages' default.
func (s *Server) siteAccent() string {
	c, _ := parseAccent(s.eng.Settings()[settingSiteAccent])
	return c
}

// logoVersionLen is the length of a logo's version: hex digits of the
// SHA-256 of its bytes.
const logoVersionLen = 16

// logoTypes are the types a logo may have, as http.DetectContentType
// names them. No SVG: it can carry script.
var logoTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// parseLogoSetting splits the site_logo setting into the logo's content
// type and version, or returns false when it holds neither.
func parseLogoSetting(v string) (contentType, version string, ok bool) {
	contentType, version, ok = strings.Cut(v, ";")
	if !ok || !slices.Contains(logoTypes, contentType) || len(version) != logoVersionLen {
		return "", "", false
	}
	for i := 0; i < len(version); i++ {
		if c := version[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", "", false
		}
	}
	return contentType, version, true
}

// siteLogoURL is the address of the site's logo, versioned so that it may
// be cached for good ("/site/logo?v=<version>"), or "" when there is none
// or this server does not hold its bytes (a logo kept in another server's
// memory, or a data dir restored without it).
func (s *Server) siteLogoURL() string {
	_, version, ok := parseLogoSetting(s.eng.Settings()[settingSiteLogo])
	if !ok {
		return ""
	}
	if _, ok := s.logo.get(version); !ok {
		return ""
	}
	return "/site/logo?v=" + version
}
