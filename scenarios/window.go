package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/scenarios/internal/pacing"
)

// alivePings bounds the goroutines waiting for pongs at once.
const alivePings = 1000

// window is a run's one sending window: it paces the run, waits for what
// is in flight and checks every connection.
func (r *Run) window(ctx context.Context) error {
	sendErr := r.pace(ctx)
	// What has not arrived by now is lost, whatever comes while the run
	// pings its connections and closes them.
	r.Drain(ctx)
	if !r.tracker.complete() {
		r.checkAlive(ctx)
	}
	if err := r.checkDropped(); err != nil {
		return err
	}
	if sendErr != nil {
		return sendErr
	}
	return ctx.Err()
}

// pace sends on the open-loop schedule. A failed send is not counted as sent
// (nothing was expected from it); the first error is kept for the result.
// While the target throttles, sends that fall due are counted as throttled
// instead (see Pause). Every send is bounded by the window plus the stall
// wait, so a hub that blocks cannot stretch the run.
func (r *Run) pace(ctx context.Context) error {
	rn, senders, duration := r.rn, r.Senders(), r.rn.Scenario.Duration
	sendCtx, cancel := context.WithTimeout(ctx, duration+rn.MaxSendLag()+rn.stallWait())
	defer cancel()
	var firstErr error
	var refused refusedSends
	failed := make([]bool, senders)
	var buf []byte
	r.Pace(sendCtx, senders, duration, func(sender int, lag time.Duration) {
		if failed[sender] || refused.held(r, rn.pause(), time.Now()) {
			return
		}
		err := r.sendOne(sendCtx, sender, lag, &buf)
		if refused.add(r, rn.pause(), err) {
			return // counted as throttled, not as sent; the sender goes on
		}
		if err != nil {
			failed[sender] = true
			if firstErr == nil && ctx.Err() == nil {
				firstErr = fmt.Errorf("send from connection %d: %w", sender, err)
			}
		}
	})
	if firstErr == nil {
		firstErr = refused.err()
	}
	return firstErr
}

// Pace calls send on the open-loop schedule of senders connections, the
// first ones, each sending every send_interval for duration (see
// pacing.Pacer), and counts the window in the run's figures. It returns
// how many sends the schedule held and how many of them it made.
func (r *Run) Pace(ctx context.Context, senders int, duration time.Duration, send func(sender int, lag time.Duration)) (scheduled, made int64) {
	interval := r.rn.Scenario.SendInterval
	p := pacing.Pacer{Senders: senders, Interval: interval, Duration: duration, LateLimit: r.rn.MaxSendLag(), Slot: pacing.SendSlot(interval, senders)}
	began := time.Now()
	made = p.Run(ctx, send)
	r.tracker.paced(p.Total(), made, time.Since(began))
	return p.Total(), made
}

// Send sends sender's next message, lag late for its schedule, in buf. A
// message the hub refused for throttling is counted as throttled, not as
// sent, and pauses the target (see Pause): refused is then true and err
// the refusal.
func (r *Run) Send(ctx context.Context, sender int, lag time.Duration, buf *[]byte) (refused bool, err error) {
	err = r.sendOne(ctx, sender, lag, buf)
	return new(refusedSends).add(r, r.rn.pause(), err), err
}

// Ended reports whether connection i has ended, and whether the hub ended
// it for throttling.
func (r *Run) Ended(i int) (ended, throttled bool) {
	c := r.Clients[i].Conn
	select {
	case <-c.Done():
		_, throttled = throttledBy(c.Err())
		return true, throttled
	default:
		return false, false
	}
}

// Drain waits, at most the loss timeout, for the deliveries still in
// flight. What has not arrived by then is lost, whatever comes after.
func (r *Run) Drain(ctx context.Context) {
	r.drain(ctx)
	r.tracker.closed.Store(true)
}

func (r *Run) drain(ctx context.Context) {
	deadline := time.NewTimer(r.rn.Scenario.LossTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !r.tracker.complete() {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// checkAlive pings every connection after a run that lost messages. A hub
// that stopped reading and writing leaves its sockets open (half-open) and
// would pass for a slow or lossy one; a connection that cannot answer a
// WebSocket ping in time is ended, so checkDropped counts it. Hubs that
// merely lose or delay messages still answer pings and are left alone.
func (r *Run) checkAlive(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	wait := r.rn.stallWait()
	r.forEachClient(alivePings, func(c *Client) {
		if c.Conn.CheckAlive(ctx, wait) == nil || ctx.Err() != nil {
			return
		}
		// The connection is ending; let it finish so checkDropped sees it.
		select {
		case <-c.Conn.Done():
		case <-ctx.Done():
		}
	})
}

// forEachClient calls fn for every client, at most limit at a time.
func (r *Run) forEachClient(limit int, fn func(*Client)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, c := range r.Clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(c)
		}()
	}
	wg.Wait()
}
