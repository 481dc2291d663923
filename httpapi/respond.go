package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/record"
)

// errorBody is the body of every JSON error response.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// errorCodes are the machine codes of the error statuses.
var errorCodes = map[int]string{
	fasthttp.StatusBadRequest:                  "invalid_request",
	fasthttp.StatusUnauthorized:                "unauthorized",
	fasthttp.StatusForbidden:                   "forbidden",
	fasthttp.StatusNotFound:                    "not_found",
	fasthttp.StatusMethodNotAllowed:            "method_not_allowed",
	fasthttp.StatusRequestTimeout:              "timeout",
	fasthttp.StatusConflict:                    "conflict",
	fasthttp.StatusRequestEntityTooLarge:       "too_large",
	fasthttp.StatusRequestURITooLong:           "too_large",
	fasthttp.StatusUnsupportedMediaType:        "unsupported_media_type",
	fasthttp.StatusTooManyRequests:             "rate_limited",
	fasthttp.StatusInternalServerError:         "internal",
	fasthttp.StatusBadGateway:                  "upstream_error",
	fasthttp.StatusServiceUnavailable:          "unavailable",
	fasthttp.StatusRequestHeaderFieldsTooLarge: "too_large",
}

// writeJSON answers with status and v as JSON.
func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: encode response: %v", err))
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBody(append(b, '\n'))
}

// writeError answers with a JSON error.
func writeError(ctx *fasthttp.RequestCtx, status int, format string, args ...any) {
	code, ok := errorCodes[status]
	if !ok {
		code = "error"
	}
	writeJSON(ctx, status, errorBody{Error: fmt.Sprintf(format, args...), Code: code})
}

// badParam is the error of a query parameter or field out of its bounds; its
// message names the parameter.
type badParam struct{ msg string }

func (e *badParam) Error() string { return e.msg }

func paramErr(format string, args ...any) error { return &badParam{fmt.Sprintf(format, args...)} }

// sizeErr is a body over its endpoint's own bound.
type sizeErr struct{ msg string }

func (e *sizeErr) Error() string { return e.msg }

// mediaErr is an upload of a type the server does not take.
type mediaErr struct{ msg string }

func (e *mediaErr) Error() string { return e.msg }

// writeErr answers with err's status and message (see errorStatus). The
// cause of a 5xx is kept for the request's log line; a 500 tells the
// client the request id under which the log has it.
func writeErr(ctx *fasthttp.RequestCtx, err error) {
	status, msg := errorStatus(err)
	switch {
	case status == fasthttp.StatusServiceUnavailable:
		ctx.Response.Header.Set("Retry-After", "30")
	case status == fasthttp.StatusInternalServerError:
		msg += "; the server's log has the cause under request id " + requestID(ctx)
	}
	noteCause(ctx, err)
	writeError(ctx, status, "%s", msg)
}

// errorStatus maps an error to its HTTP status and the message a client may
// read. This is the only place engine errors become HTTP statuses; the JSON
// API and the console both use it.
func errorStatus(err error) (int, string) {
	var bp *badParam
	var me *mediaErr
	var se *sizeErr
	switch {
	case errors.As(err, &se):
		return fasthttp.StatusRequestEntityTooLarge, se.msg
	case errors.As(err, &bp):
		return fasthttp.StatusBadRequest, bp.msg
	case errors.As(err, &me):
		return fasthttp.StatusUnsupportedMediaType, me.msg
	case errors.Is(err, crawl.ErrInvalid), errors.Is(err, crawl.ErrFormat):
		return fasthttp.StatusBadRequest, strings.TrimPrefix(err.Error(), crawl.ErrInvalid.Error()+": ")
	case errors.Is(err, crawl.ErrNotCrawlable):
		return fasthttp.StatusBadRequest, err.Error()
	case errors.Is(err, crawl.ErrBusy):
		return fasthttp.StatusConflict, err.Error()
	case errors.Is(err, crawl.ErrUpstream):
		return fasthttp.StatusBadGateway, err.Error()
	case errors.Is(err, record.ErrInvalid):
		return fasthttp.StatusBadRequest, strings.TrimPrefix(err.Error(), record.ErrInvalid.Error()+": ")
	case errors.Is(err, record.ErrNotFound):
		return fasthttp.StatusNotFound, err.Error()
	case errors.Is(err, record.ErrConflict):
		return fasthttp.StatusConflict, err.Error()
	case errors.Is(err, record.ErrClosed), errors.Is(err, record.ErrUnavailable):
		return fasthttp.StatusServiceUnavailable, "storage is unavailable; try again later"
	default:
		return fasthttp.StatusInternalServerError, "internal error"
	}
}
