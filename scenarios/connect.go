package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/probe/signalrclient"
	"github.com/hubprobe/hubprobe/signalr"
)

// callbacks the benchmark hub invokes that carry nothing to measure; they are
// registered so the client knows them.
var quietCallbacks = []string{"JoinGroup", "LeaveGroup", "ConnectionId"}

// onConnectedWait bounds how long a run waits for the hub's OnConnected
// callbacks; a hub that does not send them costs a run this much once.
const onConnectedWait = 2 * time.Second

// dialFunc opens client i; ctx carries the connect timeout.
type dialFunc func(ctx context.Context, i int) (*Client, error)

// connectAll opens the run's connections, at most connect_concurrency at a
// time. Any failure fails the run: a canary with fewer clients than
// configured would measure a different workload.
func (rn *Runner) connectAll(ctx context.Context, run *Run) error {
	dial, err := rn.dialer(run)
	if err != nil {
		return err
	}
	n := rn.Connections()
	clients := make([]*Client, n)
	errs := make([]error, n)
	limit := make(chan struct{}, rn.connectConcurrency())
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
			clients[i], errs[i] = rn.connect(ctx, run, dial, i)
		}()
	}
	wg.Wait()
	for _, c := range clients {
		if c != nil {
			run.Clients = append(run.Clients, c)
		}
	}
	if err := summarizeConnectErrors(errs); err != nil {
		return err
	}
	if rn.Endpoint.service() == signalR {
		// A Web PubSub connection is registered once it is connected, a
		// classic one once its start request is answered.
		waitRegistered(ctx, run)
	}
	return nil
}

// dialer opens connections on the wire of the endpoint's service.
func (rn *Runner) dialer(run *Run) (dialFunc, error) {
	switch rn.Endpoint.service() {
	case webPubSub:
		return rn.webPubSubDialer(run)
	case aspNetSignalR:
		return rn.classicDialer(run), nil
	}
	opts, err := rn.dialOptions(run)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, i int) (*Client, error) {
		conn, err := rn.dialSignalR(ctx, run, opts, i)
		if err != nil {
			return nil, err
		}
		return &Client{Conn: conn, ID: conn.ConnectionID(), hub: coreHub{conn}}, nil
	}, nil
}

// waitRegistered waits until every client got OnConnected, so no broadcast
// or group send races the hub's registration of a new connection.
func waitRegistered(ctx context.Context, run *Run) {
	deadline := time.Now().Add(onConnectedWait)
	for run.onConnected.Load() < int64(len(run.Clients)) && time.Now().Before(deadline) {
		if sleep.For(ctx, 2*time.Millisecond) != nil {
			return
		}
	}
}

// connect opens client i within connect_timeout and records how it went.
func (rn *Runner) connect(parent context.Context, run *Run, dial dialFunc, i int) (*Client, error) {
	ctx, cancel := context.WithTimeout(parent, rn.Scenario.ConnectTimeout)
	defer cancel()
	c, err := dial(ctx, i)
	if err != nil {
		// A run cancelled from outside (Stop, reload) is no fault of the hub.
		if !errors.Is(parent.Err(), context.Canceled) {
			rn.recordFailure(run, err, FailTransport)
		}
		return nil, rn.describeConnectError(parent, ctx, err)
	}
	rn.Recorder.ConnectionOpened()
	return c, nil
}

// describeConnectError leads with what the status page reader needs: that
// the hub was throttling (in the bounded throttle vocabulary, not the
// server's words), or which setting ran out when an attempt timed out on
// connect_timeout rather than on the run's own timeout.
func (rn *Runner) describeConnectError(parent, ctx context.Context, err error) error {
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
		return fmt.Errorf("not connected within connect_timeout %s: %w", rn.Scenario.ConnectTimeout, err)
	}
	return err
}

func (rn *Runner) dialOptions(run *Run) (signalrclient.Options, error) {
	proto, err := signalr.ProtocolByName(rn.Scenario.Protocol)
	if err != nil {
		return signalrclient.Options{}, err
	}
	handlers := map[string]signalrclient.Handler{}
	// The benchmark hub sends OnConnected once the connection is registered
	// for broadcasts and groups, which can be after the handshake reply.
	handlers["OnConnected"] = func([]json.RawMessage) { run.onConnected.Add(1) }
	for _, name := range quietCallbacks {
		handlers[name] = func([]json.RawMessage) {}
	}
	return signalrclient.Options{
		URL:                rn.Endpoint.URL,
		Transport:          rn.Scenario.Transport,
		FallbackTransports: rn.Scenario.FallbackTransports,
		Protocol:           proto,
		AccessToken:        rn.Endpoint.AccessToken,
		Headers:            rn.Endpoint.Headers,
		SkipNegotiation:    rn.Endpoint.SkipNegotiation,
		Settings:           clientconn.Settings{WriteTimeout: rn.stallWait()},
		Handlers:           handlers,
	}, nil
}

// withReceiver gives connection i its own RecordLatency handler, so every
// delivery is counted against the receiver that got it, and its own
// observer, so are its round trips.
func withReceiver(opts signalrclient.Options, run *Run, i int) signalrclient.Options {
	opts.Observer = observer{t: run.tracker, conn: i}
	handlers := make(map[string]signalrclient.Handler, len(opts.Handlers)+1)
	for name, h := range opts.Handlers {
		handlers[name] = h
	}
	handlers["RecordLatency"] = func(args []json.RawMessage) { run.recordLatency(i, args) }
	opts.Handlers = handlers
	return opts
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
