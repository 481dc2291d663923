package training

import (
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	for _, c := range []struct {
		live, trained int
		want          bool
	}{
		{MinChunks - 1, 0, false},
		{MinChunks, 0, true},
		{127, 64, false}, // a quarter of growth, but at least MinChunks
		{128, 64, true},
		{1249, 1000, false},
		{1250, 1000, true},
		{59_999, 30_000, false}, // large: at each doubling
		{60_000, 30_000, true},
	} {
		if got := Due(c.live, c.trained); got != c.want {
			t.Errorf("Due(%d, %d) = %v, want %v", c.live, c.trained, got, c.want)
		}
	}
}

func TestWaits(t *testing.T) {
	now, long := time.Now(), time.Now().Add(-time.Minute)
	for _, c := range []struct {
		last          time.Time
		live, trained int
		want          bool
	}{
		{long, 100, 0, false}, // writes paused
		{now, 100, 0, true},
		{now, 8 * MinChunks, 0, false}, // far behind: trains anyway
		{now, 399, 100, true},
		{now, 400, 100, false},
	} {
		if got := Waits(c.last, c.live, c.trained); got != c.want {
			t.Errorf("Waits(%v ago, %d, %d) = %v, want %v", time.Since(c.last).Round(time.Second), c.live, c.trained, got, c.want)
		}
	}
}
