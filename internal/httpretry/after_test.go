package httpretry

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := func(v string, want time.Duration) {
		t.Helper()
		if got := after(v, now); got != want {
			t.Errorf("after(%q) = %v, want %v", v, got, want)
		}
	}
	// seconds
	f("0", 0)
	f("5", 5*time.Second)
	f("+5", 5*time.Second)
	f("120", 2*time.Minute)
	// HTTP dates, in each of the three forms
	f(now.Add(90*time.Second).Format(http.TimeFormat), 90*time.Second)
	f("Sunday, 01-Mar-26 12:01:00 GMT", time.Minute)
	f("Sun Mar  1 12:00:30 2026", 30*time.Second)
	f(now.Add(-time.Hour).Format(http.TimeFormat), 0) // past
	// garbage and negatives
	f("", 0)
	f("soon", 0)
	f("1.5", 0)
	f(" 5", 0)
	f("5s", 0)
	f("-5", 0)
	f("-99999999999999999999", 0)
	// huge: saturated, never wrapped round to a short or negative wait
	f("9223372036", 9223372036*time.Second)
	f("9223372037", math.MaxInt64)
	f("9223372036854775807", math.MaxInt64)
	f("99999999999999999999", math.MaxInt64)
}

// FuzzAfter: any value gives a wait that is not negative; whole seconds
// give themselves, saturated.
func FuzzAfter(f *testing.F) {
	for _, s := range []string{"0", "5", "-1", "1.5", "99999999999999999999", "Sun, 01 Mar 2026 12:01:00 GMT", "Sun Mar  1 12:00:30 2026", "", "\xff"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := after(v, now)
		if d < 0 {
			t.Fatalf("after(%q) = %v", v, d)
		}
		if n, err := strconv.ParseUint(v, 10, 63); err == nil {
			want := time.Duration(math.MaxInt64)
			if n <= math.MaxInt64/uint64(time.Second) {
				want = time.Duration(n) * time.Second
			}
			if d != want {
				t.Fatalf("after(%q) = %v, want %v", v, d, want)
			}
		}
	})
}
