package http1

import (
	"math"
	"testing"
	"time"
)

// TestClockBounds checks the loop clock's conversions at their ends: a
// wait or deadline however far off stays in the future, one in the past
// is due at once, and a wait is never shorter than asked.
func TestClockBounds(t *testing.T) {
	start := time.Now()
	ls := &loopState{start: start, now: 50}
	for _, d := range []time.Duration{1, tickEvery - 1, tickEvery, tickEvery + 1, time.Hour, math.MaxInt64} {
		at := ls.after(d)
		if at <= ls.now {
			t.Errorf("after(%v) = %d; want later than now (%d)", d, at, ls.now)
		}
		// ls.now may be up to a tick behind the time: the wait is from
		// the end of tick now.
		if d < time.Hour && time.Duration(at-ls.now-1)*tickEvery < d {
			t.Errorf("after(%v) = %d: a wait shorter than asked", d, at)
		}
	}
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{
		{time.Time{}, 0},
		{start.Add(-time.Hour), 1},
		{start, 1},
		{start.Add(tickEvery), 1},
		{start.Add(tickEvery + 1), 2},
		{start.AddDate(8000, 0, 0), math.MaxInt64/int64(tickEvery) + 1}, // the longest Duration, rounded up
	} {
		if got := ls.ticks(tc.t); got != tc.want {
			t.Errorf("ticks(%v) = %d; want %d", tc.t, got, tc.want)
		}
	}
}
