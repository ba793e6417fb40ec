package scenarios

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Finish closes every connection of the run and returns its result,
// failed by err when err is set.
func (r *Run) Finish(ctx context.Context, err error) Result {
	r.closeAll(ctx)
	rn := r.rn
	res := Result{Scenario: rn.Scenario.Name, Target: rn.Scenario.Target, Kind: rn.Scenario.Kind,
		RunID: r.ID, Start: r.start, Duration: time.Since(r.start), Outcome: ResultSuccess,
		Connections: len(r.Clients)}
	res.Lost = r.tracker.close()
	r.tracker.fill(&res)
	if err == nil && res.Expected > 0 && res.Received == 0 {
		// Every connection stayed up, yet nothing came back: the hub
		// is not doing its job, whatever the transport says.
		err = fmt.Errorf("the hub delivered none of %d expected messages within loss_timeout %s", res.Expected, rn.Scenario.LossTimeout)
	}
	if err != nil {
		res.Outcome, res.Error = ResultFailure, err.Error()
		rn.Logger.Warn().Str("err", res.Error).Msg("run failed")
	} else if why := saturation(res, rn.MaxSendLag()); why != "" {
		res.Outcome, res.Error = ResultInconclusive, why
		rn.Logger.Warn().Str("why", why).Msg("run inconclusive")
	}
	return res
}

// closeAll closes every client, a bounded number at a time.
func (r *Run) closeAll(ctx context.Context) {
	// Closing must still happen when the run was cancelled (shutdown, timeout),
	// so the hub sees a clean Close rather than a dropped socket.
	ctx = context.WithoutCancel(ctx)
	r.forEachClient(r.rn.connectConcurrency(), func(c *Client) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = c.Conn.Close(ctx)
		r.rec.Event(Event{Kind: ConnectionClosed})
	})
}

// saturation says why a run the probe could not drive is inconclusive: its
// send lag's p99 passed bound, or the window closed on sends it
// had not made. Empty when the probe kept up.
func saturation(r Result, bound time.Duration) string {
	if r.SendLag.P99 <= bound && r.Unsent == 0 {
		return ""
	}
	window := max(r.SendWindow.Seconds(), 1e-9)
	return fmt.Sprintf("probe saturated: send lag p99 %s (bound %s); sent %d of %d scheduled sends, %.1f/s of %.1f/s",
		r.SendLag.P99.Round(time.Millisecond), bound, r.Sent, r.Scheduled,
		float64(r.Sent)/window, float64(r.Scheduled)/window)
}

// checkDropped reports connections the hub closed during the run.
func (r *Run) checkDropped() error {
	var dropped int
	var first error
	for _, c := range r.Clients {
		select {
		case <-c.Conn.Done():
		default:
			continue
		}
		err := c.Conn.Err()
		if err == nil {
			err = errors.New("connection closed by the hub")
		}
		r.recordFailure(err, FailClosed)
		r.recordDrop(c)
		dropped++
		if first == nil {
			first = err
		}
	}
	if dropped == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d connections closed during the run: %w", dropped, len(r.Clients), first)
}

// recordFailure counts a failed or dropped connection under its reason and,
// when the hub was throttling, under the throttle reason too.
func (r *Run) recordFailure(err error, fallback string) {
	if reason, ok := throttledBy(err); ok {
		r.tracker.throttle(reason)
		r.rec.Event(Event{Kind: ConnectionFailed, Reason: FailThrottled})
		return
	}
	r.rec.Event(Event{Kind: ConnectionFailed, Reason: failureReason(err, fallback)})
}

// recordDrop counts client c's drop by its reason, with its age.
func (r *Run) recordDrop(c *Client) {
	reason, at := c.Conn.Dropped()
	r.tracker.dropped(reason)
	r.rec.Event(Event{Kind: ConnectionDropped, Reason: reason, Duration: at.Sub(c.opened)})
}

func failureReason(err error, fallback string) string {
	var ae *azure.AuthError
	if errors.As(err, &ae) {
		return FailAuth
	}
	var ce *clientconn.ConnectError
	if errors.As(err, &ce) {
		switch ce.Phase {
		case clientconn.PhaseNegotiate, clientconn.PhaseTransport, clientconn.PhaseHandshake, clientconn.PhaseTimeout:
			return ce.Phase
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return FailTimeout
	}
	return fallback
}
