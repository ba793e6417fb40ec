package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Endpoint is where and how a run reaches its hub, resolved from a target.
type Endpoint struct {
	URL             string
	AccessToken     string
	Headers         http.Header
	SkipNegotiation bool
	// Pause, shared by every scenario of the target, holds their sends
	// while the target throttles; nil gives each run its own.
	Pause *Pause
	// Serverless, when set, connects every client straight to Azure
	// SignalR Service's client endpoint with a token hubprobe mints, and
	// gives the rest_* kinds their REST client; URL and AccessToken are
	// then not used.
	Serverless *Serverless
	// WebPubSub, when set, makes the target an Azure Web PubSub hub: every
	// kind speaks its wire (see webpubsub.go); URL, AccessToken, Headers'
	// Authorization, SkipNegotiation and Serverless are then not used.
	WebPubSub *WebPubSub
	// AspNetHub, when set, makes the target a classic ASP.NET SignalR app
	// server (or Azure SignalR Service in ASP.NET mode behind one), and
	// names the hub its connections subscribe to: the hub-method kinds
	// speak its wire (see classic.go).
	AspNetHub string
}

// service is the service whose wire the endpoint speaks.
func (ep Endpoint) service() string {
	switch {
	case ep.WebPubSub != nil:
		return webPubSub
	case ep.AspNetHub != "":
		return aspNetSignalR
	}
	return signalR
}

type route struct{ key, value string }

// Run is the state of one scenario run that kinds work with.
type Run struct {
	Config  config.Scenario
	Clients []*Client
	// ID names this run's groups and users on a hub shared with other runs.
	// It derives from the scenario and the run's scheduled start, so the
	// shards of a sharded scenario share it and their groups span shards.
	ID string
	// shard is this process's part of the scenario; first is the index,
	// among the scenario's connections, of Clients[0].
	shard Shard
	first int

	payloads    *payloadBuilder
	tracker     *tracker
	routes      []route
	onConnected atomic.Int64
	endpoint    Endpoint
	batchSize   int // messages per server_push batch; 0 for other kinds
}

// Senders is how many clients send, from the first one on: this shard's
// share of senders, or every client when senders is 0.
func (r *Run) Senders() int {
	if s := r.Config.Senders; s > 0 {
		return min(r.shard.Share(s), len(r.Clients))
	}
	return len(r.Clients)
}

// global is the index of client i among all the scenario's connections,
// whichever shard holds them.
func (r *Run) global(i int) int { return r.first + i }

// SetRoute makes every payload of sender carry key=value, which the hub uses
// to route it (a group name, a target connection id).
func (r *Run) SetRoute(sender int, key, value string) {
	r.routes[sender] = route{key, value}
}

// Delivered records a payload seen by the client at index receiver.
// Payloads of other runs and of other shards are ignored, so a broadcast
// from a neighbouring scenario is never counted, and each shard counts only
// the deliveries of its own sends.
func (r *Run) Delivered(receiver int, payload json.RawMessage) {
	if us, id, ok := r.payloads.Parse(payload); ok {
		_, seq := ledger.SplitMessageID(id)
		r.tracker.delivered(receiver, id, uint64(seq), sinceStamp(us))
	}
}

// recordLatency handles the hub's RecordLatency(p) to the client at index
// receiver and, from ServerPush, RecordLatency(p, i): one delivery of p (the
// i-th of its batch), and for the batch's last index the end of a batch.
// Payloads of other runs are ignored.
func (r *Run) recordLatency(receiver int, args []json.RawMessage) {
	if len(args) == 0 {
		return
	}
	us, id, ok := r.payloads.Parse(args[0])
	if !ok {
		return
	}
	_, seq := ledger.SplitMessageID(id)
	pos := uint64(seq)
	if r.batchSize > 0 {
		index, ok := batchIndex(args, r.batchSize)
		if !ok {
			return
		}
		pos = pos*uint64(r.batchSize) + uint64(index)
	}
	latency := sinceStamp(us)
	if r.tracker.delivered(receiver, id, pos, latency) && r.batchSize > 0 && pos%uint64(r.batchSize) == uint64(r.batchSize-1) {
		r.tracker.batchDone(latency)
	}
}

// batchIndex reads the index argument of a batch message, which must be
// below size.
func batchIndex(args []json.RawMessage, size int) (int, bool) {
	if len(args) < 2 {
		return 0, false
	}
	i, err := strconv.Atoi(string(bytes.TrimSpace(args[1])))
	return i, err == nil && i >= 0 && i < size
}

// sendOne sends sender's next message, in buf, and counts it as sent when
// the hub took it; a message whose send failed is expected nowhere.
func (r *Run) sendOne(ctx context.Context, kind Kind, sender int, lag time.Duration, buf *[]byte) error {
	id := r.tracker.ids.Assign(sender)
	rt := r.routes[sender]
	*buf = r.payloads.Append((*buf)[:0], rt.key, rt.value, id)
	expected, err := kind.Send(ctx, r, sender, *buf)
	if err != nil {
		r.tracker.ids.Unsent(id)
		return err
	}
	r.tracker.sentMessage(expected, lag)
	return nil
}

// Throttled records a throttle seen by a kind (for example a refused send).
func (r *Run) Throttled(reason string) { r.tracker.throttle(reason) }

// Runner runs one scenario against one endpoint.
type Runner struct {
	Scenario config.Scenario
	Endpoint Endpoint
	Recorder Recorder
	Logger   zerolog.Logger
	// Shard is this process's part of the scenario; the zero value runs
	// all of it.
	Shard Shard

	pauseOnce sync.Once
	pauseOwn  *Pause
}

// Run performs one full run now and returns its result. It never panics on
// bad input from the hub and always closes what it opened before returning.
func (rn *Runner) Run(ctx context.Context) Result { return rn.RunAt(ctx, time.Now()) }

// RunAt performs the run scheduled to start at at, which names it: every
// shard running the scenario at that instant runs the same run. It runs
// the scenario as a run whatever its mode: the scheduler gives a
// capacity_search scenario to package capacity instead.
func (rn *Runner) RunAt(ctx context.Context, at time.Time) Result {
	return rn.Drive(ctx, at, rn.Scenario, rn.Recorder, rn.execute)
}

// execute paces the run's one sending window, then waits for what is in
// flight and checks every connection.
func (rn *Runner) execute(ctx context.Context, s *Session) error {
	run := s.run
	sendErr := rn.pace(ctx, s)
	// What has not arrived by now is lost, whatever comes while the run
	// pings its connections and closes them.
	s.Drain(ctx)
	if !run.tracker.complete() {
		rn.checkAlive(ctx, run)
	}
	if err := rn.checkDropped(run); err != nil {
		return err
	}
	if sendErr != nil {
		return sendErr
	}
	return ctx.Err()
}

func (rn *Runner) finish(res Result, run *Run, err error) Result {
	res.Duration = time.Since(res.Start)
	res.Outcome = ResultSuccess
	if run != nil {
		res.RunID = run.ID
		res.Connections = len(run.Clients)
		res.Lost = run.tracker.close()
		run.tracker.fill(&res)
		if err == nil && res.Expected > 0 && res.Received == 0 {
			// Every connection stayed up, yet nothing came back: the hub
			// is not doing its job, whatever the transport says.
			err = fmt.Errorf("the hub delivered none of %d expected messages within loss_timeout %s", res.Expected, rn.Scenario.LossTimeout)
		}
	}
	if err != nil {
		res.Outcome, res.Error = ResultFailure, err.Error()
		rn.Logger.Warn().Str("err", res.Error).Msg("run failed")
	} else if why := saturation(res, rn.MaxSendLag()); why != "" {
		res.Outcome, res.Error = ResultInconclusive, why
		rn.Logger.Warn().Str("why", why).Msg("run inconclusive")
	}
	rn.Recorder.RunFinished(res)
	return res
}

// pace sends on the open-loop schedule. A failed send is not counted as sent
// (nothing was expected from it); the first error is kept for the result.
// While the target throttles, sends that fall due are counted as throttled
// instead (see Pause). Every send is bounded by the window plus the stall
// wait, so a hub that blocks cannot stretch the run.
func (rn *Runner) pace(ctx context.Context, s *Session) error {
	run, senders, duration := s.run, s.run.Senders(), rn.Scenario.Duration
	sendCtx, cancel := context.WithTimeout(ctx, duration+rn.MaxSendLag()+rn.stallWait())
	defer cancel()
	var firstErr error
	var refused refusedSends
	failed := make([]bool, senders)
	var buf []byte
	s.Pace(sendCtx, senders, duration, func(sender int, lag time.Duration) {
		if failed[sender] || refused.held(run, rn.pause(), time.Now()) {
			return
		}
		err := run.sendOne(sendCtx, s.kind, sender, lag, &buf)
		if refused.add(run, rn.pause(), err) {
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

// MaxSendLag is the scenario's max_send_lag, or its default for a scenario
// built without one.
func (rn *Runner) MaxSendLag() time.Duration {
	if d := rn.Scenario.MaxSendLag; d > 0 {
		return d
	}
	return config.DefaultScenario.MaxSendLag
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

// pause is the target's shared Pause, or the run's own when the endpoint
// has none.
func (rn *Runner) pause() *Pause {
	rn.pauseOnce.Do(func() {
		if rn.pauseOwn = rn.Endpoint.Pause; rn.pauseOwn == nil {
			rn.pauseOwn = &Pause{}
		}
	})
	return rn.pauseOwn
}

// drain waits, at most the loss timeout, for deliveries still in flight.
func (rn *Runner) drain(ctx context.Context, run *Run) {
	deadline := time.NewTimer(rn.Scenario.LossTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !run.tracker.complete() {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// Bounds of stallWait.
const (
	minStallWait = time.Second
	maxStallWait = 5 * time.Second
	// alivePings bounds the goroutines waiting for pongs at once.
	alivePings = 1000
)

// stallWait is how long a hub may leave a ping unanswered, or a write
// unread, before its connection counts as half-open: the loss timeout,
// within reason. A message held up longer would be lost anyway.
func (rn *Runner) stallWait() time.Duration {
	return min(max(rn.Scenario.LossTimeout, minStallWait), maxStallWait)
}

// checkAlive pings every connection after a run that lost messages. A hub
// that stopped reading and writing leaves its sockets open (half-open) and
// would pass for a slow or lossy one; a connection that cannot answer a
// WebSocket ping in time is ended, so checkDropped counts it. Hubs that
// merely lose or delay messages still answer pings and are left alone.
func (rn *Runner) checkAlive(ctx context.Context, run *Run) {
	if ctx.Err() != nil {
		return
	}
	wait := rn.stallWait()
	forEachClient(run, alivePings, func(c *Client) {
		if c.checkAlive(ctx, wait) == nil || ctx.Err() != nil {
			return
		}
		// The connection is ending; let it finish so checkDropped sees it.
		select {
		case <-c.done():
		case <-ctx.Done():
		}
	})
}

// forEachClient calls fn for every client, at most limit at a time.
func forEachClient(run *Run, limit int, fn func(*Client)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, c := range run.Clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(c)
		}()
	}
	wg.Wait()
}

// checkDropped reports connections the hub closed during the run.
func (rn *Runner) checkDropped(run *Run) error {
	var dropped int
	var first error
	for _, c := range run.Clients {
		select {
		case <-c.done():
		default:
			continue
		}
		err := c.err()
		if err == nil {
			err = errors.New("connection closed by the hub")
		}
		rn.recordFailure(run, err, FailClosed)
		dropped++
		if first == nil {
			first = err
		}
	}
	if dropped == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d connections closed during the run: %w", dropped, len(run.Clients), first)
}

// recordFailure counts a failed or dropped connection under its reason and,
// when the hub was throttling, under the throttle reason too.
func (rn *Runner) recordFailure(run *Run, err error, fallback string) {
	if reason, ok := throttledBy(err); ok {
		run.tracker.throttle(reason)
		rn.Recorder.ConnectionFailed(FailThrottled)
		return
	}
	rn.Recorder.ConnectionFailed(failureReason(err, fallback))
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

// closeAll closes every client, a bounded number at a time.
func (rn *Runner) closeAll(ctx context.Context, run *Run) {
	// Closing must still happen when the run was cancelled (shutdown, timeout),
	// so the hub sees a clean Close rather than a dropped socket.
	ctx = context.WithoutCancel(ctx)
	forEachClient(run, rn.connectConcurrency(), func(c *Client) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_ = c.close(ctx)
		rn.Recorder.ConnectionClosed()
	})
}

func (rn *Runner) connectConcurrency() int {
	return max(rn.Scenario.ConnectConcurrency, 1)
}
