package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// onConnectedWait bounds how long a run waits for the hub to register its
// connections (wire.Receiver.Registered); a hub that does not say so
// costs a run this much once.
const onConnectedWait = 2 * time.Second

// Open opens the run scheduled at at: it connects every client of this
// shard and prepares the kind. cfg is the runner's scenario as the
// caller needs it, rec gets what the run records. The run is returned
// even when opening failed, with what it opened: Finish closes that and
// reports the failure.
func (rn *Runner) Open(ctx context.Context, at time.Time, cfg config.Scenario, rec Recorder) (*Run, error) {
	run := rn.newRun(cfg, rec, at)
	factory, err := rn.kindFactory()
	if err != nil {
		return run, err
	}
	run.kind = factory(cfg)
	if b, ok := run.kind.(batchKind); ok {
		// Said before any client can receive one of its batches.
		run.batchSize = b.batchSize()
		run.tracker.countBatches()
	}
	if err := run.connectAll(ctx); err != nil {
		return run, err
	}
	run.routes = make([]route, len(run.Clients))
	if err := run.kind.Prepare(ctx, run); err != nil {
		return run, fmt.Errorf("prepare: %w", err)
	}
	return run, nil
}

// newRun starts the state of the run scheduled at at.
func (rn *Runner) newRun(cfg config.Scenario, rec Recorder, at time.Time) *Run {
	run := &Run{
		Config: cfg, ID: runID(cfg.Name, at), shard: rn.Shard, first: rn.Shard.First(cfg.Connections),
		rn: rn, rec: rec, start: time.Now(), tracker: newTracker(rec, rn.Connections()),
	}
	run.tracker.runID, run.tracker.first = run.ID, run.first
	run.payloads = newPayloadBuilder(runMarker(run.ID, rn.Shard), cfg.MessageSize)
	return run
}

// connectAll opens the run's connections, at most connect_concurrency at a
// time. Any failure fails the run: a canary with fewer clients than
// configured would measure a different workload.
func (r *Run) connectAll(ctx context.Context) error {
	spec := r.rn.Endpoint.Wire.Spec()
	var err error
	r.dialer, err = r.rn.Endpoint.Wire.Open(wire.Run{
		Scenario: r.Config, WriteTimeout: r.rn.stallWait(), RESTObserver: restObserver(r.tracker),
	})
	if err != nil {
		return err
	}
	n := r.rn.Connections()
	clients, errs := make([]*Client, n), make([]error, n)
	limit := make(chan struct{}, r.rn.connectConcurrency())
	var wg sync.WaitGroup
	for i := range n {
		select {
		case limit <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-limit; wg.Done() }()
			clients[i], errs[i] = r.connect(ctx, i)
		}()
	}
	wg.Wait()
	for _, c := range clients {
		if c != nil {
			r.Clients = append(r.Clients, c)
		}
	}
	if err := summarizeConnectErrors(errs); err != nil {
		return err
	}
	if spec.Registers {
		r.waitRegistered(ctx)
	}
	return nil
}

// waitRegistered waits until the hub registered every client, so no
// broadcast or group send races the hub's registration of a new
// connection.
func (r *Run) waitRegistered(ctx context.Context) {
	deadline := time.Now().Add(onConnectedWait)
	for r.onConnected.Load() < int64(len(r.Clients)) && time.Now().Before(deadline) {
		if sleep.For(ctx, 2*time.Millisecond) != nil {
			return
		}
	}
}

// connect opens client i within connect_timeout and records how it went.
// Its deliveries and round trips count against it.
func (r *Run) connect(parent context.Context, i int) (*Client, error) {
	ctx, cancel := context.WithTimeout(parent, r.rn.Scenario.ConnectTimeout)
	defer cancel()
	conn, err := r.dialer.Dial(ctx, r.UserID(i), receiver{observer: observer{t: r.tracker, conn: i}, run: r})
	if err != nil {
		// A run cancelled from outside (Stop, reload) is no fault of the hub.
		if !errors.Is(parent.Err(), context.Canceled) {
			r.recordFailure(err, FailTransport)
		}
		return nil, r.describeConnectError(parent, ctx, err)
	}
	r.rec.Event(Event{Kind: ConnectionOpened})
	return &Client{Conn: conn, ID: conn.ID(), opened: time.Now()}, nil
}

// describeConnectError leads with what the status page reader needs: that
// the hub was throttling (in the bounded throttle vocabulary, not the
// server's words), or which setting ran out when an attempt timed out on
// connect_timeout rather than on the run's own timeout.
func (r *Run) describeConnectError(parent, ctx context.Context, err error) error {
	if reason, ok := throttledBy(err); ok {
		return fmt.Errorf("throttled (%s): %w", reason, err)
	}
	var ce *clientconn.ConnectError
	if !errors.As(err, &ce) || ce.Phase != clientconn.PhaseTimeout || parent.Err() != nil {
		return err
	}
	// A read deadline taken from ctx can fire a moment before ctx itself
	// reports it, so the clock decides.
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return fmt.Errorf("not connected within connect_timeout %s: %w", r.rn.Scenario.ConnectTimeout, err)
	}
	return err
}

func summarizeConnectErrors(errs []error) error {
	var failed int
	var first error
	for _, err := range errs {
		if err != nil {
			failed++
			if first == nil {
				first = err
			}
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d connections failed: %w", failed, len(errs), first)
}
