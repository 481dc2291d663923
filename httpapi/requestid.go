package httpapi

import (
	"encoding/hex"
	"math/rand/v2"
	"regexp"

	"github.com/valyala/fasthttp"
)

// Every response carries a request id (X-Request-Id), which the request's
// log line carries too: a proxy's own id when it sent a well-formed one,
// else a new one. A failed request's log line holds its cause, the id
// ties the client's answer to it.

const (
	requestIDHeader = "X-Request-Id"
	ridKey          = "sift.requestID" // user value: the request's id
	causeKey        = "sift.cause"     // user value: the error behind a 5xx
)

// validRequestID is what an incoming id may be: short, and nothing a log
// line or header could be confused by.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// setRequestID gives the request its id, in the response's header and the
// request's user values, and returns it.
func setRequestID(ctx *fasthttp.RequestCtx) string {
	id := string(ctx.Request.Header.Peek(requestIDHeader))
	if !validRequestID.MatchString(id) {
		var b [8]byte
		for i := range b {
			b[i] = byte(rand.Uint32())
		}
		id = hex.EncodeToString(b[:])
	}
	ctx.SetUserValue(ridKey, id)
	ctx.Response.Header.Set(requestIDHeader, id)
	return id
}

// requestID returns the request's id ("" outside the middleware).
func requestID(ctx *fasthttp.RequestCtx) string {
	id, _ := ctx.UserValue(ridKey).(string)
	return id
}

// noteCause keeps err as the cause of the request's failure, for its log
// line.
func noteCause(ctx *fasthttp.RequestCtx, err error) {
	if err != nil {
		ctx.SetUserValue(causeKey, err)
	}
}

// causeText is the noted cause of the request's failure, with credentials
// blanked out, or "" when none was noted.
func causeText(ctx *fasthttp.RequestCtx) string {
	err, _ := ctx.UserValue(causeKey).(error)
	if err == nil {
		return ""
	}
	return redact(err.Error())
}
