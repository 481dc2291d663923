package httpapi

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"

	"github.com/valyala/fasthttp"
)

// auth checks credentials in constant time. Secrets are kept only as
// SHA-256 digests, so comparisons take the same time whatever the length of
// the guess.
type auth struct {
	bearer    [32]byte
	hasBearer bool
	user      [32]byte
	pass      [32]byte
	hasBasic  bool
}

func newAuth(apiKey, user, password string) auth {
	a := auth{hasBearer: apiKey != "", hasBasic: user != "" && password != ""}
	if a.hasBearer {
		a.bearer = sha256.Sum256([]byte(apiKey))
	}
	if a.hasBasic {
		a.user, a.pass = sha256.Sum256([]byte(user)), sha256.Sum256([]byte(password))
	}
	return a
}

func equalDigest(a [32]byte, b []byte) bool {
	d := sha256.Sum256(b)
	return subtle.ConstantTimeCompare(a[:], d[:]) == 1
}

// bearerOK reports whether the request carries the API secret as a Bearer token.
func (a *auth) bearerOK(ctx *fasthttp.RequestCtx) bool {
	if !a.hasBearer {
		return false
	}
	tok, ok := credentials(ctx, "Bearer")
	return ok && equalDigest(a.bearer, tok)
}

// basicOK reports whether the request carries the admin user and password.
func (a *auth) basicOK(ctx *fasthttp.RequestCtx) bool {
	if !a.hasBasic {
		return false
	}
	enc, ok := credentials(ctx, "Basic")
	if !ok {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil {
		return false
	}
	user, pass, _ := bytes.Cut(raw, []byte(":"))
	// Evaluate both halves so timing does not tell which one failed.
	u, p := equalDigest(a.user, user), equalDigest(a.pass, pass)
	return u && p
}

// credentials returns what follows the scheme (matched in any case, as
// RFC 9110 says) in the Authorization header.
func credentials(ctx *fasthttp.RequestCtx, scheme string) ([]byte, bool) {
	h := bytes.TrimSpace(ctx.Request.Header.Peek("Authorization"))
	if len(h) <= len(scheme) || h[len(scheme)] != ' ' || !bytes.EqualFold(h[:len(scheme)], []byte(scheme)) {
		return nil, false
	}
	return bytes.TrimSpace(h[len(scheme):]), true
}

// admin allows Basic Auth or the Bearer token. With neither configured,
// admin access is closed. A state-changing request a browser says comes
// from another site is refused: browsers send remembered Basic Auth
// credentials with it.
func (s *Server) admin(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !s.auth.hasBearer && !s.auth.hasBasic {
			writeError(ctx, fasthttp.StatusForbidden, "admin access is disabled: set API_SECRET_KEY, or ADMIN_USER and ADMIN_PASSWORD")
			return
		}
		if !ctx.IsGet() && !ctx.IsHead() && s.crossSite(ctx) {
			writeError(ctx, fasthttp.StatusForbidden, "cross-site requests cannot change anything here")
			return
		}
		if s.auth.bearerOK(ctx) || s.auth.basicOK(ctx) {
			h(ctx)
			return
		}
		s.challenge(ctx, "admin credentials required (Basic Auth or Bearer token)")
	}
}

// bearer allows only the Bearer token.
func (s *Server) bearer(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if !s.auth.hasBearer {
			writeError(ctx, fasthttp.StatusForbidden, "bearer access is disabled: set API_SECRET_KEY")
			return
		}
		if s.auth.bearerOK(ctx) {
			h(ctx)
			return
		}
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="sift"`)
		writeError(ctx, fasthttp.StatusUnauthorized, "a valid Bearer token is required")
	}
}

// crossSite reports whether a browser says the request comes from another
// site: Sec-Fetch-Site other than same-origin or none (typed, bookmarked),
// or an Origin other than BASE_URL's and the request's own host — or, from
// a browser that sends neither, a Referer whose origin is another's.
// Clients that are not browsers send none of them and pass.
func (s *Server) crossSite(ctx *fasthttp.RequestCtx) bool {
	site := string(ctx.Request.Header.Peek("Sec-Fetch-Site"))
	if site != "" && site != "same-origin" && site != "none" {
		return true
	}
	origin := string(ctx.Request.Header.Peek("Origin"))
	if origin == "" && site == "" {
		origin = refererOrigin(string(ctx.Request.Header.Peek("Referer")))
	}
	if origin == "" {
		return false
	}
	if origin == s.origin() {
		return false
	}
	// The browser sets Origin and Host both: equal, they name this server
	// as the page's own origin (reached by another name than BASE_URL's).
	host := string(ctx.Host())
	return host == "" || (origin != "http://"+host && origin != "https://"+host)
}

// challenge answers 401 with the schemes the server accepts.
func (s *Server) challenge(ctx *fasthttp.RequestCtx, msg string) {
	if s.auth.hasBasic {
		ctx.Response.Header.Add("WWW-Authenticate", `Basic realm="sift", charset="UTF-8"`)
	}
	if s.auth.hasBearer {
		ctx.Response.Header.Add("WWW-Authenticate", `Bearer realm="sift"`)
	}
	writeError(ctx, fasthttp.StatusUnauthorized, "%s", msg)
}

// refererOrigin is the origin (scheme://host) of a Referer, "" when there
// is none; one that does not parse as an absolute URL is its own origin,
// which matches none of the server's.
func refererOrigin(ref string) string {
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ref
	}
	return u.Scheme + "://" + u.Host
}
