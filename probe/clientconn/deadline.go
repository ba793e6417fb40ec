package clientconn

import (
	"sync"
	"time"
)

// ReadDeadline gives HTTP response bodies, which have no deadlines of
// their own, the read deadline of a socket: when it passes, Expire runs
// (on a timer's goroutine), which fails the transport with a timeout. Set
// Expire before the first Set.
type ReadDeadline struct {
	Expire func()

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// Set arms the deadline at at; the zero time disarms it.
func (d *ReadDeadline) Set(at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.stopped:
	case at.IsZero():
		if d.timer != nil {
			d.timer.Stop()
		}
	case d.timer == nil:
		d.timer = time.AfterFunc(time.Until(at), d.Expire)
	default:
		d.timer.Reset(time.Until(at))
	}
}

// Stop disarms the deadline for good.
func (d *ReadDeadline) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}
