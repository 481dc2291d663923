package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"net/url"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// The operator's console: /dashboard and its pages, plain HTML forms that
// call the same functions as the JSON API. Every POST passes basicOnly,
// is refused when a browser says it comes from another site, and must
// carry the session's anti-CSRF token (an HMAC of the Basic Auth
// credentials under a key drawn when the server starts). An action that
// succeeds redirects (303) to a page showing its outcome, kept here as a
// flash under a random id; one that fails renders its page again with the
// error and the error's status.

// flashStore keeps the outcomes of the console's actions until the page
// that shows them is read.
type flashStore struct {
	mu   sync.Mutex
	byID map[string]flashEntry
}

// Flashes live this long, and at most this many are kept.
const (
	flashTTL = 15 * time.Minute
	maxFlash = 512
)

type flashEntry struct {
	f  flash
	at time.Time
}

// flash is the outcome of an action, shown on the next page.
type flash struct {
	Error  bool
	Text   string
	Items  []link // details, such as the documents stored
	status int    // the status of a page rendered with it (0 = 200)
	cause  error  // what failed, for the request's log line
}

// link is a link of a flash or of the breadcrumbs; no URL = the page
// itself.
type link struct{ Text, URL string }

func newFlashStore() *flashStore {
	return &flashStore{byID: map[string]flashEntry{}}
}

// put keeps f and returns its id. Expired flashes go first; then, when
// full, the oldest. O(maxFlash).
func (fs *flashStore) put(f flash) string {
	var b [12]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	oldest, oldestAt := "", now
	for k, e := range fs.byID {
		if now.Sub(e.at) > flashTTL {
			delete(fs.byID, k)
		} else if e.at.Before(oldestAt) {
			oldest, oldestAt = k, e.at
		}
	}
	if len(fs.byID) >= maxFlash {
		delete(fs.byID, oldest)
	}
	fs.byID[id] = flashEntry{f, now}
	return id
}

// get returns the flash with id, or nil (unknown or expired).
func (fs *flashStore) get(id string) *flash {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	e, ok := fs.byID[id]
	if !ok || time.Since(e.at) > flashTTL {
		return nil
	}
	return &e.f
}

// csrfToken is the anti-CSRF token of the request's Basic Auth
// credentials ("" without them): the same for every page of a session,
// useless to anyone who does not already hold the credentials.
func (s *console) csrfToken(ctx *fasthttp.RequestCtx) string {
	enc, ok := credentials(ctx, "Basic")
	if !ok {
		return ""
	}
	return s.basicToken(enc)
}

// basicToken is the anti-CSRF token of Basic Auth credentials as the
// Authorization header carries them (base64 of user:password).
func (s *console) basicToken(enc []byte) string {
	raw, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte("sift console\x00"))
	m.Write(raw)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// consolePost guards a console action: Basic Auth only, no cross-site
// requests, and the form's "csrf" field must be the session's token
// (compared in constant time). Form bodies other than uploads are bounded
// by maxSourceBody.
func (s *console) consolePost(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return s.basicOnly(func(ctx *fasthttp.RequestCtx) {
		defer ctx.Request.RemoveMultipartFormFiles()
		if s.crossSite(ctx) {
			s.consoleRefuse(ctx, fasthttp.StatusForbidden, "Refused: this form was sent from another site. Changes are accepted only from the dashboard's own pages.")
			return
		}
		if !isMultipart(ctx) && len(ctx.PostBody()) > maxSourceBody {
			s.consoleRefuse(ctx, fasthttp.StatusRequestEntityTooLarge, errSourceTooLarge.msg)
			return
		}
		want := s.csrfToken(ctx)
		if got := formField(ctx, "csrf"); want == "" || !hmac.Equal([]byte(got), []byte(want)) {
			s.consoleRefuse(ctx, fasthttp.StatusForbidden, "Refused: the form's security token is missing or does not match this session. Reload the dashboard and try again.")
			return
		}
		h(ctx)
	})
}

func isMultipart(ctx *fasthttp.RequestCtx) bool {
	mt, _, _ := mime.ParseMediaType(string(ctx.Request.Header.ContentType()))
	return mt == "multipart/form-data"
}

// formField reads a field of a posted form, urlencoded or multipart (never
// the query string), trimmed of surrounding space.
func formField(ctx *fasthttp.RequestCtx, name string) string {
	if isMultipart(ctx) {
		form, err := ctx.MultipartForm()
		if err != nil {
			return ""
		}
		return formValue(form, name)
	}
	return string(bytes.TrimSpace(ctx.PostArgs().Peek(name)))
}

// consolePage is what every console page carries.
type consolePage struct {
	Head   head
	CSRF   string // the anti-CSRF token for the page's forms
	Flash  *flash
	Crumbs []link // the way back to the dashboard, after its own link
}

// consolePage is the common part of a console page titled title, with f
// and the breadcrumbs crumbs.
func (s *console) consolePage(ctx *fasthttp.RequestCtx, title string, f *flash, crumbs ...link) consolePage {
	return consolePage{Head: head{Title: s.title(title), NoIndex: true}, CSRF: s.csrfToken(ctx), Flash: f, Crumbs: crumbs}
}

// takeFlash returns the flash the request's "flash" parameter names.
func (s *console) takeFlash(ctx *fasthttp.RequestCtx) *flash {
	if id := ctx.QueryArgs().Peek("flash"); len(id) > 0 {
		return s.flashes.get(string(id))
	}
	return nil
}

// consoleDone ends a successful action: a 303 to the page at path
// showing f.
func (s *console) consoleDone(ctx *fasthttp.RequestCtx, path string, f flash) {
	// A relative Location: the browser resolves it against the address it
	// used, whatever the Host behind a proxy.
	ctx.Response.Header.Set("Location", path+"?flash="+url.QueryEscape(s.flashes.put(f)))
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// failure turns err into a flash with the status and message the JSON API
// would answer.
func failure(err error) *flash {
	status, msg := errorStatus(err)
	return &flash{Error: true, Text: msg, status: status, cause: err}
}

// consoleShow renders a console page, with f's status when it has one.
func (s *console) consoleShow(ctx *fasthttp.RequestCtx, name string, f *flash, data any) {
	o := pageOpts{private: true}
	if f != nil {
		o.status = f.status
		if f.status >= 500 {
			noteCause(ctx, f.cause)
			if f.status == fasthttp.StatusInternalServerError {
				f.Text += "; the server's log has the cause under request id " + requestID(ctx)
			}
		}
	}
	s.render(ctx, name, o, data)
}

// messagePage is a page that only says something, with a way back.
type messagePage struct {
	consolePage
	Title string
}

// consoleRefuse renders a page that only says why a request was refused.
func (s *console) consoleRefuse(ctx *fasthttp.RequestCtx, status int, msg string) {
	s.consoleMessage(ctx, "Refused", &flash{Error: true, Text: msg, status: status})
}

// consoleMessage renders a page with a title and f only.
func (s *console) consoleMessage(ctx *fasthttp.RequestCtx, title string, f *flash) {
	s.consoleShow(ctx, "console_message.html", f, messagePage{s.consolePage(ctx, title, f), title})
}
