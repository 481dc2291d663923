package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/crawl"
	"github.com/sift-search/sift/engine"
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

// writeErr maps an error to its status. This is the only place engine errors
// become HTTP statuses.
func writeErr(ctx *fasthttp.RequestCtx, err error) {
	var bp *badParam
	var me *mediaErr
	var se *sizeErr
	switch {
	case errors.As(err, &se):
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, "%s", se.msg)
	case errors.As(err, &bp):
		writeError(ctx, fasthttp.StatusBadRequest, "%s", bp.msg)
	case errors.As(err, &me):
		writeError(ctx, fasthttp.StatusUnsupportedMediaType, "%s", me.msg)
	case errors.Is(err, crawl.ErrInvalid), errors.Is(err, crawl.ErrFormat):
		writeError(ctx, fasthttp.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), crawl.ErrInvalid.Error()+": "))
	case errors.Is(err, crawl.ErrNotCrawlable):
		writeError(ctx, fasthttp.StatusBadRequest, "%s", err)
	case errors.Is(err, crawl.ErrBusy):
		writeError(ctx, fasthttp.StatusConflict, "%s", err)
	case errors.Is(err, crawl.ErrUpstream):
		writeError(ctx, fasthttp.StatusBadGateway, "%s", err)
	case errors.Is(err, engine.ErrInvalid):
		writeError(ctx, fasthttp.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), engine.ErrInvalid.Error()+": "))
	case errors.Is(err, engine.ErrNotFound):
		writeError(ctx, fasthttp.StatusNotFound, "%s", err)
	case errors.Is(err, engine.ErrConflict):
		writeError(ctx, fasthttp.StatusConflict, "%s", err)
	case errors.Is(err, engine.ErrClosed), errors.Is(err, engine.ErrUnavailable):
		ctx.Response.Header.Set("Retry-After", "30")
		writeError(ctx, fasthttp.StatusServiceUnavailable, "storage is unavailable; try again later")
	default:
		writeError(ctx, fasthttp.StatusInternalServerError, "internal error")
	}
}
