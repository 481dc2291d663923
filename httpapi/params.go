package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/sift-search/sift/httpapi/bounds"
	"github.com/sift-search/sift/query"
)

// Query parameters are validated here: out-of-bounds values are rejected
// with a message naming the parameter and its bounds, never clamped.

// intParam reads an integer parameter within [lo, hi], def when absent.
func intParam(ctx *fasthttp.RequestCtx, name string, def, lo, hi int) (int, error) {
	raw := ctx.QueryArgs().Peek(name)
	if raw == nil {
		return def, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < lo || n > hi {
		return 0, paramErr("%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

// stringParam reads a text parameter of at most maxBytes of valid UTF-8.
func stringParam(ctx *fasthttp.RequestCtx, name string, maxBytes int, required bool) (string, error) {
	v := string(ctx.QueryArgs().Peek(name))
	if err := checkText(name, v, maxBytes, required); err != nil {
		return "", err
	}
	return v, nil
}

// checkText is stringParam's check, for a value that arrives typed.
func checkText(name, v string, maxBytes int, required bool) error {
	switch {
	case v == "" && required:
		return paramErr("%s is required", name)
	case len(v) > maxBytes:
		return paramErr("%s is too long: %d bytes, at most %d", name, len(v), maxBytes)
	case !utf8.ValidString(v):
		return paramErr("%s is not valid UTF-8", name)
	}
	return nil
}

// dateParam reads an RFC 3339 time or a date.
func dateParam(ctx *fasthttp.RequestCtx, name string) (time.Time, error) {
	return parseDate(name, string(ctx.QueryArgs().Peek(name)))
}

// parseDate reads an RFC 3339 time or a date; "" is the zero time.
func parseDate(name, v string) (time.Time, error) {
	if err := checkText(name, v, 64, false); err != nil || v == "" {
		return time.Time{}, err
	}
	t, err := query.ParseDate(v)
	if err != nil {
		return time.Time{}, paramErr("%s must be a date such as 2024-01-31 or 2024-01-31T15:04:05Z", name)
	}
	return t, nil
}

// optIntParam reads an integer parameter of bounds b: nil when absent, an
// error naming b when not an integer. Its range is checked by boundArg.
func optIntParam(ctx *fasthttp.RequestCtx, name string, b bounds.Int) (*int, error) {
	raw := ctx.QueryArgs().Peek(name)
	if raw == nil {
		return nil, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return nil, paramErr("%s must be an integer from %d to %d", name, b.Min, b.Max)
	}
	return &n, nil
}

// boundArg is an integer argument within b, b's default when nil.
func boundArg(name string, v *int, b bounds.Int) (int, error) {
	if v == nil {
		return b.Default, nil
	}
	return *v, checkRange(name, *v, b.Min, b.Max)
}

// decodeOne decodes body, which must hold exactly one JSON value, into v.
func decodeOne(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("one object expected, more JSON follows")
	}
	return nil
}

// boolParam reads a boolean parameter: true/false (or 1/0), def when absent.
func boolParam(ctx *fasthttp.RequestCtx, name string, def bool) (bool, error) {
	switch v := string(ctx.QueryArgs().Peek(name)); v {
	case "":
		return def, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return def, paramErr("%s must be true or false", name)
	}
}
