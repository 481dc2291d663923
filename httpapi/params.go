package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sift-search/sift/query"
	"github.com/valyala/fasthttp"
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
	raw := ctx.QueryArgs().Peek(name)
	if len(raw) == 0 {
		if required {
			return "", paramErr("%s is required", name)
		}
		return "", nil
	}
	if len(raw) > maxBytes {
		return "", paramErr("%s is too long: %d bytes, at most %d", name, len(raw), maxBytes)
	}
	if !utf8.Valid(raw) {
		return "", paramErr("%s is not valid UTF-8", name)
	}
	return string(raw), nil
}

// dateParam reads an RFC 3339 time or a date.
func dateParam(ctx *fasthttp.RequestCtx, name string) (time.Time, error) {
	s, err := stringParam(ctx, name, 64, false)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := query.ParseDate(s)
	if err != nil {
		return time.Time{}, paramErr("%s must be a date such as 2024-01-31 or 2024-01-31T15:04:05Z", name)
	}
	return t, nil
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
