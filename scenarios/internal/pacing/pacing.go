// Package pacing schedules a run's sends open-loop: every send has its
// due time from the start, the interval and the number of senders, never
// from what the hub answered, and sends due close together go out in one
// pass so that a canary's low rates do not cost a wake-up per send.
package pacing

import (
	"context"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
)

// Pacer schedules sends open-loop: send number n is due at
// start + n×interval/senders, whatever the hub answered before. Senders take
// turns, so each one sends every interval and their sends are spread evenly
// across it instead of arriving in bursts.
type Pacer struct {
	Senders  int
	Interval time.Duration
	Duration time.Duration
	// LateLimit is how far past the window overdue sends may still go out
	// (the scenario's max_send_lag).
	LateLimit time.Duration
	// Slot is the step of the grid passes begin on: the sends due between
	// two of its instants go out in one pass at the first (SendSlot's for a
	// run); zero wakes once per send.
	Slot time.Duration
}

// Due returns when send n is scheduled, relative to the start.
func (p Pacer) Due(n int64) time.Duration {
	return time.Duration(n * int64(p.Interval) / int64(p.Senders))
}

// Total is the number of sends that fall inside the duration.
func (p Pacer) Total() int64 {
	if p.Senders <= 0 || p.Interval <= 0 {
		return 0
	}
	return (int64(p.Duration)*int64(p.Senders) + int64(p.Interval) - 1) / int64(p.Interval)
}

// maxSendSlot and maxSendBurst bound how close together a run's sends must
// fall due to go out in one pass: the Pacer wakes once for all of them
// rather than once per send, and every wake-up from idle costs the process
// a cascade of thread wake-ups (the timer's thread, the runtime's monitor
// twice) that at a canary's rates is most of what it costs the operating
// system. Passes begin on the process's grid, so every run's sends, at
// most a tenth of a canary's one-second interval early, share at most 10
// wake-ups a second, the instants the connections' keep-alive timers
// land on too (grid.Coarse). A send made up to a slot early is still
// open-loop (its due time comes from the schedule, not from replies) and
// its latency exact (its payload carries when it really left). The burst
// bound keeps passes short at high rates, where sends batch by themselves
// and a long burst would only queue at the hub.
const (
	maxSendSlot  = grid.Coarse
	maxSendBurst = 32
)

// SendSlot is the slot of senders sending every interval: maxSendSlot, or
// less where maxSendBurst sends fall due sooner.
func SendSlot(interval time.Duration, senders int) time.Duration {
	if senders <= 0 {
		return 0
	}
	return min(maxSendSlot, maxSendBurst*interval/time.Duration(senders))
}

// Run calls send for every scheduled send, with the sender index and how
// late the call is (zero for a send made early, within the slot). When
// behind schedule it sends at once rather than skipping (the lateness is
// reported, not hidden), but once the window plus lateLimit has passed it
// stops: overdue sends are never fired in a burst after the window. It
// stops early when ctx ends too, and returns the number of sends made.
//
// With a slot, passes begin on the process's grid of that slot
// (internal/grid): every send goes out in the pass at the last grid
// instant before it falls due, so the passes of every run with the same
// slot, and the connections' timers, share their wake-ups.
func (p Pacer) Run(ctx context.Context, send func(sender int, lag time.Duration)) int64 {
	start := grid.Now()
	total := p.Total()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	var n int64
	for n < total {
		if wait := p.passAt(start+p.Due(n)) - grid.Now(); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return n
			case <-timer.C:
			}
		}
		var stop bool
		if n, stop = p.pass(ctx, start, n, total, send); stop {
			return n
		}
	}
	return n
}

// passAt is when the pass that makes a send due at due begins: the last
// instant of the slot's grid at or before it, or due itself without a slot.
// Both are on grid.Now's clock.
func (p Pacer) passAt(due time.Duration) time.Duration {
	if p.Slot <= 0 {
		return due
	}
	return grid.Floor(due, p.Slot)
}

// pass makes send n, due now or before the slot's next grid instant, and
// every later send due before that instant too, each with its own lag;
// start is the run's, on grid.Now's clock. It reports stop when ctx ended
// or the window plus lateLimit has passed, and returns the next send to
// make.
func (p Pacer) pass(ctx context.Context, start time.Duration, n, total int64, send func(int, time.Duration)) (next int64, stop bool) {
	now := grid.Now()
	for ; n < total && p.passAt(start+p.Due(n)) <= now; n++ {
		if ctx.Err() != nil || now-start > p.Duration+p.LateLimit {
			return n, true
		}
		send(int(n%int64(p.Senders)), max(now-start-p.Due(n), 0))
		now = grid.Now()
	}
	return n, false
}
