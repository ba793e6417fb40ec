package scenarios

import (
	"errors"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

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
