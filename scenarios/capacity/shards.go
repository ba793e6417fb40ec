package capacity

import (
	"context"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/sleep"
	"github.com/hubprobe/hubprobe/scenarios"
)

// A sharded capacity search steps in lockstep: step i starts at the same
// instant on every shard, the search's scheduled start plus connect_timeout
// (for every shard to connect and prepare) plus i periods. A period is the
// step, the pacer's allowed lateness, the second its last messages may take,
// a margin, and, when an aggregator judges the steps, the wait for it to see
// every shard's figures.
const (
	stepMargin = time.Second
	// maxStepLateness is how late a shard may begin a step and still count
	// as in step with the others.
	maxStepLateness = 500 * time.Millisecond
	// DefaultAggregateWait is SearchOptions.Wait's default: twice the
	// scrape interval of the Helm chart's PodMonitor.
	DefaultAggregateWait = 30 * time.Second
	aggregatePoll        = 250 * time.Millisecond
)

// SearchOptions tune a sharded capacity search.
type SearchOptions struct {
	// Aggregator, when set, judges every step of a sharded search from the
	// figures of all shards summed; without it each shard judges its own.
	Aggregator StepAggregator
	// Wait is how long each step leaves the aggregator to see every
	// shard's figures: at least the scrape interval. 0 means
	// DefaultAggregateWait.
	Wait time.Duration
}

func (o SearchOptions) wait() time.Duration {
	if o.Wait > 0 {
		return o.Wait
	}
	return DefaultAggregateWait
}

// StepFigures is one shard's account of one step, published for the
// aggregator to sum.
type StepFigures struct {
	// Run is the search's run id, the same on every shard.
	Run  string
	Step Step
	// Connections are the shard's connections; Saturated says its probe
	// could not drive the step.
	Connections int
	Saturated   bool
}

// StepPublisher is implemented by recorders that make a search's step
// figures visible to an aggregator (the exporter does, as
// hubprobe_capacity_step).
type StepPublisher interface {
	PublishStep(f StepFigures)
}

// StepKey names one step of one search.
type StepKey struct {
	Target, Scenario, Run string
	Step                  int // 1-based
}

// StepTotals are the figures of one step summed over the shards that
// published them so far.
type StepTotals struct {
	Shards      int
	Connections int
	// Saturated counts the shards whose probe could not drive the step.
	Saturated int
	// Step holds the summed Senders, Sent, Expected, Received, Slow,
	// Throttled, Unsent and FailedConnections.
	Step Step
}

// verdict judges the totals as one process's step.
func (t StepTotals) verdict(maxSendLag time.Duration) string {
	if t.Saturated > 0 {
		return StopProbeSaturated
	}
	s := t.Step
	s.SendLagP99 = 0
	return judge(s, t.Connections, maxSendLag)
}

// StepAggregator sums the figures every shard published for a step.
type StepAggregator interface {
	SumStep(ctx context.Context, key StepKey) (StepTotals, error)
}

// stepClock is when a sharded search's steps start; nil for an unsharded
// search, whose steps follow each other at once.
type stepClock struct {
	first  time.Time
	period time.Duration
}

// stepClock returns the search's step clock, after checking that a ramp of
// n steps ends within the run's deadline.
func (sr *searcher) stepClock(ctx context.Context, search config.CapacitySearch, at time.Time, n int) (*stepClock, error) {
	if !sr.Shard.Sharded() {
		return nil, nil
	}
	gather := stepMargin
	if sr.opts.Aggregator != nil {
		gather += sr.opts.wait()
	}
	c := &stepClock{
		first:  at.Add(max(sr.Scenario.ConnectTimeout, time.Second)),
		period: search.StepDuration + sr.MaxSendLag() + scenarios.SlowThreshold + gather,
	}
	if deadline, ok := ctx.Deadline(); ok && c.start(n).After(deadline) {
		return nil, fmt.Errorf("a sharded search of %d steps of %s ends %s after its start, after its timeout: raise timeout (and the schedule's interval)",
			n, c.period, c.start(n).Sub(at))
	}
	return c, nil
}

// start is when step i (0-based) starts; the zero time without a clock.
func (c *stepClock) start(i int) time.Time {
	if c == nil {
		return time.Time{}
	}
	return c.first.Add(time.Duration(i) * c.period)
}

// begin waits for step i's start. A shard that is already too late for it
// is out of step with the others, and its search fails.
func (c *stepClock) begin(ctx context.Context, i int) error {
	if c == nil {
		return nil
	}
	due := c.start(i)
	if late := time.Since(due); late > maxStepLateness {
		if i == 0 {
			return fmt.Errorf("connecting and preparing took %s longer than connect_timeout, when step 1 began on every shard", late.Round(time.Millisecond))
		}
		return fmt.Errorf("step %d began on every shard %s before this shard could: the shards are out of step", i+1, late.Round(time.Millisecond))
	}
	return sleep.Until(ctx, due)
}

// verdict publishes the step and judges it: from the totals of every shard
// when the search is sharded and has an aggregator, from this shard's own
// figures otherwise. The totals must be complete by deadline, the next
// step's start.
func (sr *searcher) verdict(ctx context.Context, run *scenarios.Run, rec *stepRecorder, step Step, deadline time.Time) (string, error) {
	if p, ok := sr.Recorder.(StepPublisher); ok {
		p.PublishStep(StepFigures{Run: run.ID, Step: step, Connections: run.Connections(), Saturated: probeSaturated(step, sr.MaxSendLag())})
	}
	if !sr.Shard.Sharded() || sr.opts.Aggregator == nil {
		return rec.judge(step, run.Connections(), sr.MaxSendLag()), nil
	}
	key := StepKey{Target: sr.Scenario.Target, Scenario: sr.Scenario.Name, Run: run.ID, Step: step.Number}
	totals, err := sr.awaitShards(ctx, key, deadline)
	if err != nil {
		return "", err
	}
	return totals.verdict(sr.MaxSendLag()), nil
}

// awaitShards asks the aggregator for the step's totals until every shard
// is in them, or deadline passes.
func (sr *searcher) awaitShards(ctx context.Context, key StepKey, deadline time.Time) (StepTotals, error) {
	waitCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	tick := time.NewTicker(aggregatePoll)
	defer tick.Stop()
	want := sr.Shard.Count
	for {
		t, last := sr.opts.Aggregator.SumStep(waitCtx, key)
		switch {
		case last == nil && t.Shards == want:
			return t, nil
		case last == nil && t.Shards > want:
			return t, fmt.Errorf("step %d: %d shards published figures for this search, more than the %d shards there are: "+
				"another deployment runs a scenario of the same name at the same time", key.Step, t.Shards, want)
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return t, ctx.Err()
			}
			err := fmt.Errorf("step %d: only %d of %d shards' figures reached the aggregator before the next step was due", key.Step, t.Shards, want)
			if last != nil {
				err = fmt.Errorf("%w (last error: %v)", err, last)
			}
			return t, err
		case <-tick.C:
		}
	}
}
