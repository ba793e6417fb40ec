package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
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
	// slot is how close together sends must fall due to go out in one pass
	// (sendSlot's for a run); zero wakes once per send.
	slot time.Duration
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

// maxSendSlot and maxSendBurst bound how close together a run's sends must
// fall due to go out in one pass: the pacer wakes once for all of them
// rather than once per send, and every wake-up from idle costs the process
// a cascade of thread wake-ups (the timer, a second thread to share the
// work, the runtime's monitor) that at a canary's rates, a send every
// millisecond or so, is most of what it costs the operating system. A
// send made up to a slot early is still open-loop (its due time comes from
// the schedule, not from replies) and its latency exact (its payload
// carries when it really left). The burst bound keeps passes short at
// high rates, where sends batch by themselves and a long burst would only
// queue at the hub.
const (
	maxSendSlot  = 20 * time.Millisecond
	maxSendBurst = 32
)

// sendSlot is the slot of senders sending every interval: maxSendSlot, or
// less where maxSendBurst sends fall due sooner.
func sendSlot(interval time.Duration, senders int) time.Duration {
	if senders <= 0 {
		return 0
	}
	return min(maxSendSlot, maxSendBurst*interval/time.Duration(senders))
}

// run calls send for every scheduled send, with the sender index and how
// late the call is (zero for a send made early, within the slot). When
// behind schedule it sends at once rather than skipping (the lateness is
// reported, not hidden), but once the window plus lateLimit has passed it
// stops: overdue sends are never fired in a burst after the window. It
// stops early when ctx ends too, and returns the number of sends made.
func (p pacer) run(ctx context.Context, send func(sender int, lag time.Duration)) int64 {
	start := time.Now()
	total := p.total()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	var n int64
	for n < total {
		if wait := p.due(n) - time.Since(start); wait > 0 {
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

// pass makes send n, due now, and every later send due within the slot
// from now, each with its own lag. It reports stop when ctx ended or the window
// plus lateLimit has passed, and returns the next send to make.
func (p pacer) pass(ctx context.Context, start time.Time, n, total int64, send func(int, time.Duration)) (next int64, stop bool) {
	horizon := time.Since(start) + p.slot
	for ; n < total && p.due(n) <= horizon; n++ {
		now := time.Since(start)
		if ctx.Err() != nil || now > p.duration+p.lateLimit {
			return n, true
		}
		send(int(n%int64(p.senders)), max(now-p.due(n), 0))
	}
	return n, false
}

// refusedSends counts the sends the hub throttled, through its REST API
// (HTTP 429) or by closing a connection for throttling, and the sends that
// fell due while the target was paused. None of them is a sent message,
// and the sender goes on with its schedule; the run fails with the reason.
type refusedSends struct {
	n, paused int
	reason    string
	first     error
}

// throttledBy tells whether err, of a client connection or of a REST
// call, is the hub throttling the probe, and which throttle reason applies.
func throttledBy(err error) (reason string, throttled bool) {
	if reason, ok := azure.ClassifyRESTThrottle(err); ok {
		return reason, true
	}
	return clientconn.ClassifyThrottle(err)
}

// add reports whether err is a throttled send, counts it and pauses the
// target: for the service's Retry-After when it gave one.
func (s *refusedSends) add(run *Run, pause *Pause, err error) bool {
	if err == nil {
		pause.Accepted()
		return false
	}
	reason, ok := azure.ClassifyRESTThrottle(err)
	var retryAfter time.Duration
	if re := (*azure.RESTError)(nil); ok && errors.As(err, &re) {
		retryAfter = re.RetryAfter
	}
	if !ok {
		// A connection closed for throttling cannot send again; it is
		// counted when the drop is recorded. The target pauses all the same.
		if reason, closed := clientconn.ClassifyThrottle(err); closed {
			pause.Throttle(reason, 0, time.Now())
		}
		return false
	}
	pause.Throttle(reason, retryAfter, time.Now())
	run.Throttled(reason)
	if s.n == 0 {
		s.reason, s.first = reason, err
	}
	s.n++
	return true
}

// held reports whether the target is paused now, and counts a send that
// fell due meanwhile as throttled.
func (s *refusedSends) held(run *Run, pause *Pause, now time.Time) bool {
	reason, held := pause.Holding(now)
	if held {
		run.Throttled(reason)
		run.tracker.paused.Add(1)
		if s.paused++; s.reason == "" {
			s.reason = reason
		}
	}
	return held
}

// err is the run's failure when the hub throttled any of its sends: a run
// whose sends all fell inside a pause the target's earlier throttling left
// measured nothing, and is not a success either.
func (s *refusedSends) err() error {
	if s.n == 0 && s.paused == 0 {
		return nil
	}
	if s.n == 0 {
		return fmt.Errorf("throttled (%s): %d sends fell due while the target was paused after throttling", s.reason, s.paused)
	}
	return fmt.Errorf("throttled (%s): the hub refused %d sends, %d more fell due while paused: %w", s.reason, s.n, s.paused, s.first)
}
