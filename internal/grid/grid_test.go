package grid

import (
	"testing"
	"time"
)

// A wait lengthened onto the grid ends on it, never before the wait asked
// for and less than a step after it; Floor is the instant at or before.
func TestDelayAndFloorLandOnTheGrid(t *testing.T) {
	const step = 100 * time.Millisecond
	for _, c := range []struct{ now, d, want time.Duration }{
		{now: 0, d: 0, want: 0},
		{now: 30 * time.Millisecond, d: 0, want: 70 * time.Millisecond},
		{now: 30 * time.Millisecond, d: 5 * time.Second, want: 5070 * time.Millisecond},
		{now: 1234 * time.Millisecond, d: 66 * time.Millisecond, want: 66 * time.Millisecond},
		{now: 1234 * time.Millisecond, d: 67 * time.Millisecond, want: 166 * time.Millisecond},
	} {
		if got := Delay(c.now, c.d, step); got != c.want {
			t.Errorf("Delay(%v, %v, %v) = %v, want %v", c.now, c.d, step, got, c.want)
		}
	}
	for _, c := range []struct{ at, want time.Duration }{
		{0, 0},
		{99 * time.Millisecond, 0},
		{100 * time.Millisecond, 100 * time.Millisecond},
		{1234 * time.Millisecond, 1200 * time.Millisecond},
	} {
		if got := Floor(c.at, step); got != c.want {
			t.Errorf("Floor(%v, %v) = %v, want %v", c.at, step, got, c.want)
		}
	}
}

// UntilNext ends a wait on the next instant of the grid, never now and
// never more than a step away.
func TestUntilNextEndsOnTheGrid(t *testing.T) {
	for _, step := range []time.Duration{time.Millisecond, 50 * time.Millisecond, time.Second} {
		before := Now()
		wait := UntilNext(step)
		after := Now()
		if wait <= 0 || wait > step {
			t.Fatalf("UntilNext(%v) = %v, want within (0, %v]", step, wait, step)
		}
		// The wait was taken between before and after: its end is the
		// first grid instant after one of them.
		if end := Floor(before, step) + step; end-after > wait || end-before < wait {
			t.Errorf("UntilNext(%v) = %v from %v, want the wait to the instant %v", step, wait, before, end)
		}
	}
}
