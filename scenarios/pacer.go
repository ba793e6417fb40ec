package scenarios

import (
	"context"
	"time"
)

// pacer schedules sends open-loop: send number n is due at
// start + n×interval/senders, whatever the hub answered before. Senders take
// turns, so each one sends every interval and their sends are spread evenly
// across it instead of arriving in bursts.
type pacer struct {
	senders  int
	interval time.Duration
	duration time.Duration
	// lateLimit is how far past the window overdue sends may still go out
	// (the scenario's max_send_lag).
	lateLimit time.Duration
}

// due returns when send n is scheduled, relative to the start.
func (p pacer) due(n int64) time.Duration {
	return time.Duration(n * int64(p.interval) / int64(p.senders))
}

// total is the number of sends that fall inside the duration.
func (p pacer) total() int64 {
	if p.senders <= 0 || p.interval <= 0 {
		return 0
	}
	return (int64(p.duration)*int64(p.senders) + int64(p.interval) - 1) / int64(p.interval)
}

// run calls send for every scheduled send, with the sender index and how
// late the call is. When behind schedule it sends at once rather than
// skipping (the lateness is reported, not hidden), but once the window
// plus lateLimit has passed it stops: overdue sends are never fired
// in a burst after the window. It stops early when ctx ends too, and
// returns the number of sends made.
func (p pacer) run(ctx context.Context, send func(sender int, lag time.Duration)) int64 {
	start := time.Now()
	total := p.total()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	var n int64
	for n < total {
		now := time.Since(start)
		if wait := p.due(n) - now; wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return n
			case <-timer.C:
			}
			continue
		}
		if ctx.Err() != nil || now > p.duration+p.lateLimit {
			return n
		}
		send(int(n%int64(p.senders)), now-p.due(n))
		n++
	}
	return n
}
