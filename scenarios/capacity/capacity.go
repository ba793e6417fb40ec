// Package capacity finds how much a hub holds: the capacity search ramps
// a scenario's sending connections step by step until a step breaks the
// capacity definition (99 % of messages under 1 s, no failed connection,
// no throttling), and reports each step as a table, JSON and a plot. The
// shards of a sharded search step in lockstep and can be judged on their
// summed figures. A search runs on the scenario engine (package scenarios)
// and reports as one of its runs.
package capacity

import (
	"context"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

// Stop reasons of a capacity search: why the ramp ended. The first three
// are the capacity definition being broken; all_sending and max_steps mean
// the ramp ran out before the hub did, so the capacity is at least the
// last step; probe_saturated means the probe, not the hub, gave out.
const (
	StopSlowMessages       = "slow_messages"
	StopConnectionFailures = "connection_failures"
	StopThrottled          = "throttled"
	StopAllSending         = "all_sending"
	StopMaxSteps           = "max_steps"
	// StopProbeSaturated ends a search whose step the probe itself could
	// not drive: what it found is not the hub's capacity.
	StopProbeSaturated = "probe_saturated"
)

// StopReasons lists every stop reason, the bounded values of
// hubprobe_capacity_stop_reason{reason}.
var StopReasons = []string{StopSlowMessages, StopConnectionFailures, StopThrottled, StopAllSending, StopMaxSteps, StopProbeSaturated}

// capacityShareMax is the capacity definition's tolerance: more than 1 % of
// messages at 1 s or more, or of connections failed, ends the search.
const capacityShareMax = 0.01

// Step is what one step of a capacity search measured. Messages are
// counted by the step that sent them, wherever they arrive.
type Step struct {
	Number   int // 1-based
	Senders  int
	Duration time.Duration // the step's sending time, the denominator of its rates

	Sent     int64
	Expected int64
	// Received and Slow count the step's deliveries that arrived within 1 s
	// of the step's last send; Slow are those that took 1 s or more.
	Received int64
	Slow     int64

	SentBytes     int64 // wire bytes written during the step
	ReceivedBytes int64 // wire bytes read during the step and its settling
	Throttled     int64
	// FailedConnections counts connections dropped or unable to send so far.
	FailedConnections int
	Latency           scenarios.Quantiles
	MaxSendLag        time.Duration
	// SendLagP99 is the p99 of the pacer's lateness; Unsent, the sends the
	// pacer had not made when the step's window closed. A p99 over
	// max_send_lag, or any unsent, means the probe could not drive the step.
	SendLagP99 time.Duration
	Unsent     int64

	// Verdict is the stop reason the step broke, empty when it held.
	Verdict string
}

// Passed reports whether the step held to the capacity definition.
func (s Step) Passed() bool { return s.Verdict == "" }

// Missing counts messages of the step that had not arrived 1 s after it.
func (s Step) Missing() int64 { return max(s.Expected-s.Received, 0) }

// SlowShare is the share of the step's messages that took 1 s or more,
// missing ones included; 1 when the step expected nothing.
func (s Step) SlowShare() float64 {
	if s.Expected <= 0 {
		return 1
	}
	return float64(s.Slow+s.Missing()) / float64(s.Expected)
}

func (s Step) perSecond(n int64) float64 {
	if s.Duration <= 0 {
		return 0
	}
	return float64(n) / s.Duration.Seconds()
}

// InboundMessagesPerSecond is the rate the probe sent to the hub.
func (s Step) InboundMessagesPerSecond() float64 { return s.perSecond(s.Sent) }

// OutboundMessagesPerSecond is the rate of deliveries the hub made of the
// step's messages, fan-out counted per receiver.
func (s Step) OutboundMessagesPerSecond() float64 { return s.perSecond(s.Received) }

// InboundBytesPerSecond is the probe's wire bandwidth towards the hub.
func (s Step) InboundBytesPerSecond() float64 { return s.perSecond(s.SentBytes) }

// OutboundBytesPerSecond is the hub's wire bandwidth towards the probe.
func (s Step) OutboundBytesPerSecond() float64 { return s.perSecond(s.ReceivedBytes) }

// Capacity is the outcome of a capacity search.
type Capacity struct {
	// Result is the search as one run: what the history, the status page
	// and hubprobe_runs_total see.
	Result scenarios.Result
	// Scenario is the configuration the search ran with.
	Scenario config.Scenario
	Steps    []Step
	// StopReason is one of StopReasons; empty when the search could not
	// finish (Result.Error says why).
	StopReason string
}

// Found returns the last step that held: the capacity.
func (c Capacity) Found() (Step, bool) {
	for i := len(c.Steps) - 1; i >= 0; i-- {
		if c.Steps[i].Passed() {
			return c.Steps[i], true
		}
	}
	return Step{}, false
}

// Measured reports whether the search found the hub's capacity: it ended
// for one of StopReasons other than the probe's own saturation.
func (c Capacity) Measured() bool { return c.StopReason != "" && c.StopReason != StopProbeSaturated }

// Recorder is implemented by recorders that export capacity searches. A
// search calls it once it has measured the capacity.
type Recorder interface {
	CapacityFound(c Capacity)
}

// Search runs rn's capacity search now: one set of connections, and steps
// of ever more senders until a step breaks the capacity definition. Like
// a run it reports the search as a run, to rn's recorder, and closes
// everything it opened. opts tune a sharded search.
func Search(ctx context.Context, rn *scenarios.Runner, opts SearchOptions) Capacity {
	return SearchAt(ctx, rn, opts, time.Now())
}

// SearchAt runs the search scheduled to start at at. The shards of a
// sharded search step in lockstep from that instant (see stepClock).
func SearchAt(ctx context.Context, rn *scenarios.Runner, opts SearchOptions, at time.Time) Capacity {
	return (&searcher{Runner: rn, opts: opts}).search(ctx, newStepRecorder(rn.Recorder), at)
}

// searcher runs one scenario's capacity search.
type searcher struct {
	*scenarios.Runner
	opts SearchOptions
}

// search runs the capacity search with steps accounting for every step.
func (sr *searcher) search(ctx context.Context, steps *stepRecorder, at time.Time) Capacity {
	c := Capacity{Scenario: sr.Scenario}
	cfg := sr.Scenario
	// Any connection may send in a later step, so every one gets a route.
	cfg.Senders = 0
	run, err := sr.Open(ctx, at, cfg, steps)
	if err == nil {
		if err = sr.ramp(ctx, run, steps, &c, at); err != nil {
			c.StopReason = ""
		}
	}
	c.Result = run.Finish(ctx, err)
	if cr, ok := sr.Recorder.(Recorder); ok && c.Measured() {
		cr.CapacityFound(c)
	}
	return c
}

// ramp runs steps until one breaks the definition or the ramp is
// exhausted. A sharded search sizes its ramp and judges its failures by
// all the scenario's connections, every shard sending its share of each
// step's senders.
func (sr *searcher) ramp(ctx context.Context, run *scenarios.Run, rec *stepRecorder, c *Capacity, at time.Time) error {
	total := sr.Scenario.Connections
	search := config.CapacitySearchFor(total)
	if sr.Scenario.CapacitySearch != nil {
		search = *sr.Scenario.CapacitySearch
	}
	health := newConnHealth(run.Connections())
	n := search.Steps(total)
	clock, err := sr.stepClock(ctx, search, at, n)
	if err != nil {
		return err
	}
	for i := range n {
		if err := clock.begin(ctx, i); err != nil {
			return err
		}
		step, err := sr.step(ctx, run, rec, health, search, i)
		if err == nil {
			step.Verdict, err = sr.verdict(ctx, run, rec, step, clock.start(i+1))
		}
		if err != nil {
			return err
		}
		c.Steps = append(c.Steps, step)
		if !step.Passed() {
			c.StopReason = step.Verdict
			break
		}
	}
	if c.StopReason == "" {
		c.StopReason = StopAllSending
		if search.Senders(n) <= total {
			c.StopReason = StopMaxSteps
		}
	}
	run.Drain(ctx)
	return ctx.Err()
}

// step sends with this shard's share of search.Senders(i) connections for
// one step duration and waits for the step's messages to arrive or turn 1 s
// old; verdict then judges it.
func (sr *searcher) step(ctx context.Context, run *scenarios.Run, rec *stepRecorder, health *connHealth,
	search config.CapacitySearch, i int) (Step, error) {
	senders := sr.Shard.Share(search.Senders(i))
	sentBefore, expectedBefore := run.Sent(), run.Expected()
	stats := rec.begin()
	began := time.Now()
	paced := paceStep(ctx, run, senders, search.StepDuration, health)
	sendTime := max(time.Since(began), search.StepDuration)
	expected := run.Expected() - expectedBefore
	settle(ctx, rec, stats, expected, time.Now().Add(scenarios.SlowThreshold))
	if err := ctx.Err(); err != nil {
		return Step{}, err
	}
	rec.idle()
	failed, throttledDrops := health.check(run)
	step := rec.snapshot(stats)
	step.Number, step.Senders, step.Duration, step.MaxSendLag = i+1, senders, sendTime, paced.maxLag
	step.SendLagP99, step.Unsent = paced.lagP99, paced.unsent
	step.Sent, step.Expected = run.Sent()-sentBefore, expected
	step.FailedConnections, step.Throttled = failed, step.Throttled+throttledDrops
	return step, nil
}

// paceStep sends from senders connections for duration on the open-loop
// schedule. A sender whose send fails is marked failed and sends no more;
// it counts as a failed connection. It returns how the pacer kept to the
// schedule.
func paceStep(ctx context.Context, run *scenarios.Run, senders int, duration time.Duration, health *connHealth) pacing {
	var lags scenarios.DurationHistogram
	var maxLag time.Duration
	var buf []byte
	scheduled, made := run.Pace(ctx, senders, duration, func(sender int, lag time.Duration) {
		maxLag = max(maxLag, lag)
		lags.Record(lag)
		if health.failed[sender] {
			return
		}
		refused, err := run.Send(ctx, sender, lag, &buf)
		if refused {
			return // a throttle stops the search; the sender is not broken
		}
		if err != nil && ctx.Err() == nil {
			health.sendFailed(sender)
		}
	})
	return pacing{maxLag: maxLag, lagP99: lags.Quantiles().P99, unsent: scheduled - made}
}

// pacing is how a step's pacer kept to its schedule.
type pacing struct {
	maxLag, lagP99 time.Duration
	unsent         int64
}

// settle waits until every expected delivery of the step arrived, or until
// deadline: by then a message still missing has taken 1 s or more.
func settle(ctx context.Context, rec *stepRecorder, stats *stepStats, expected int64, deadline time.Time) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for rec.received(stats) < expected && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// judge returns the stop reason a step broke, or "" when it held. Failed
// connections come first: they make the other figures incomplete. A step
// with no senders (a shard's share of a small step) has no messages to
// judge.
func judge(s Step, connections int, maxSendLag time.Duration) string {
	switch {
	case probeSaturated(s, maxSendLag):
		return StopProbeSaturated
	case float64(s.FailedConnections) > capacityShareMax*float64(connections):
		return StopConnectionFailures
	case s.Throttled > 0:
		return StopThrottled
	case s.Senders > 0 && s.SlowShare() > capacityShareMax:
		return StopSlowMessages
	}
	return ""
}

// probeSaturated reports whether the probe could not drive the step.
func probeSaturated(s Step, maxSendLag time.Duration) bool {
	return s.SendLagP99 > maxSendLag || s.Unsent > 0
}

// connHealth remembers which connections failed during a search.
type connHealth struct {
	failed  []bool // the sender could not send
	dropped []bool // the hub closed the connection, already recorded
}

func newConnHealth(n int) *connHealth {
	return &connHealth{failed: make([]bool, n), dropped: make([]bool, n)}
}

func (h *connHealth) sendFailed(i int) { h.failed[i] = true }

// check notes connections the hub closed since the last check and returns
// how many connections have failed in all, and how many of the new closes
// were the hub throttling. Like the rest of the search they stay out of the
// scenario's connection failure and throttle series: the search provoked
// them.
func (h *connHealth) check(run *scenarios.Run) (failed int, throttled int64) {
	for i := range run.Connections() {
		if ended, byThrottle := run.Ended(i); ended && !h.dropped[i] {
			h.dropped[i] = true
			if byThrottle {
				throttled++
			}
		}
		if h.failed[i] || h.dropped[i] {
			failed++
		}
	}
	return failed, throttled
}
