// Package grid is the one grid of instants the process's periodic work
// lands on: the connections' keep-alives and round-trip checks, the
// scenarios' send passes, the hub's heartbeat and the idle sizer's tick.
// Every distinct instant a timer is set for costs the process a wake-up
// of the thread that runs it and another of the runtime's monitor thread,
// which sleeps until the next timer; timers that share instants share
// those wake-ups, and the runtime runs all timers due at one instant in
// one pass.
package grid

import "time"

// Coarse is the coarsest step the process's frequent timers are put on
// (the send passes at a canary's rates, the keep-alives): however many
// runs and connections there are, they wake the process at most ten times
// a second, at the same instants.
const Coarse = 100 * time.Millisecond

// epoch is the grid's origin, and of the instants kept as a duration since
// it: 8 bytes each, where a time.Time takes 24.
var epoch = time.Now()

// Now is the time since the grid's origin.
func Now() time.Duration { return time.Since(epoch) }

// Floor is the last instant of the grid of step at or before t (since the
// origin).
func Floor(t, step time.Duration) time.Duration { return t - t%step }

// Delay lengthens a wait of d, starting at now (since the origin), so
// that it ends on the grid of step.
func Delay(now, d, step time.Duration) time.Duration {
	at := now + d
	return d + (step-at%step)%step
}

// UntilNext is the wait from now to the next instant of the grid of step:
// a loop that re-arms its timer with it each round ticks on the grid, as
// a time.Ticker started on it would.
func UntilNext(step time.Duration) time.Duration { return step - Now()%step }
