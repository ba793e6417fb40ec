package scenarios

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// Endpoint is where and how a run reaches its hub, resolved from a target.
type Endpoint struct {
	// Wire reaches the target's service.
	Wire wire.Wire
	// Pause, shared by every scenario of the target, holds their sends
	// while the target throttles; nil gives each run its own.
	Pause *Pause
}

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
// shard running the scenario at that instant runs the same run. It opens
// the run's connections, paces its one sending window and closes them,
// whatever the scenario's mode: the scheduler gives a capacity_search
// scenario to package capacity instead.
func (rn *Runner) RunAt(ctx context.Context, at time.Time) Result {
	run, err := rn.Open(ctx, at, rn.Scenario, rn.Recorder)
	if err == nil {
		err = run.window(ctx)
	}
	return run.Finish(ctx, err)
}

// Connections is this shard's share of the scenario's connections.
func (rn *Runner) Connections() int { return rn.Shard.Share(rn.Scenario.Connections) }

// Senders is how many of this shard's connections send in a run: its share
// of senders, or all its connections when senders is 0.
func (rn *Runner) Senders() int {
	if s := rn.Scenario.Senders; s > 0 {
		return min(rn.Shard.Share(s), rn.Connections())
	}
	return rn.Connections()
}

// MaxSendLag is the scenario's max_send_lag, or its default for a scenario
// built without one.
func (rn *Runner) MaxSendLag() time.Duration {
	if d := rn.Scenario.MaxSendLag; d > 0 {
		return d
	}
	return config.DefaultScenario.MaxSendLag
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

// Bounds of stallWait.
const (
	minStallWait = time.Second
	maxStallWait = 5 * time.Second
)

// stallWait is how long a hub may leave a ping unanswered, or a write
// unread, before its connection counts as half-open: the loss timeout,
// within reason. A message held up longer would be lost anyway.
func (rn *Runner) stallWait() time.Duration {
	return min(max(rn.Scenario.LossTimeout, minStallWait), maxStallWait)
}

func (rn *Runner) connectConcurrency() int {
	return max(rn.Scenario.ConnectConcurrency, 1)
}
