package httpretry

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"
)

// After is how long a Retry-After header value asks to wait: seconds or
// an HTTP date. It is 0 when the value is empty, malformed, negative or a
// past date, and saturates rather than overflows, so a caller's bound on
// the wait always sees a huge value as huge.
func After(v string) time.Duration { return after(v, time.Now()) }

func after(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err == nil && n >= 0:
		if n > math.MaxInt64/int64(time.Second) {
			return math.MaxInt64
		}
		return time.Duration(n) * time.Second
	case errors.Is(err, strconv.ErrRange) && n > 0:
		return math.MaxInt64
	case err == nil:
		return 0 // negative
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
