package capacity

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

// fakeAggregator answers with the totals of its answers in turn, the last
// one for ever after.
type fakeAggregator struct {
	answers []StepTotals
	asked   int
}

func (f *fakeAggregator) SumStep(_ context.Context, key StepKey) (StepTotals, error) {
	t := f.answers[min(f.asked, len(f.answers)-1)]
	f.asked++
	t.Step.Number = key.Step
	return t, nil
}

// A sharded step is judged by the totals once every shard is in them, and
// fails when some never come or too many do.
func TestAwaitShardsJudgesTheTotals(t *testing.T) {
	sr := &searcher{Runner: &scenarios.Runner{Scenario: config.Scenario{Name: "ramp", Target: "hub"}, Shard: scenarios.Shard{Index: 1, Count: 3}}}
	key := StepKey{Target: "hub", Scenario: "ramp", Run: "r", Step: 2}
	slow := StepTotals{Shards: 3, Connections: 300, Step: Step{Senders: 6, Expected: 1000, Received: 1000, Slow: 11}}
	sr.opts.Aggregator = &fakeAggregator{answers: []StepTotals{{Shards: 1}, {Shards: 2}, slow}}
	got, err := sr.awaitShards(context.Background(), key, time.Now().Add(5*time.Second))
	if err != nil || got.Shards != 3 || got.verdict(100*time.Millisecond) != StopSlowMessages {
		t.Errorf("totals %+v, %v; want 3 shards and slow_messages", got, err)
	}
	for _, tc := range []struct {
		answer StepTotals
		want   string
	}{
		{StepTotals{Shards: 2}, "step 2: only 2 of 3 shards' figures reached the aggregator before the next step was due"},
		{StepTotals{Shards: 4}, "step 2: 4 shards published figures for this search, more than the 3 shards there are"},
	} {
		sr.opts.Aggregator = &fakeAggregator{answers: []StepTotals{tc.answer}}
		if _, err := sr.awaitShards(context.Background(), key, time.Now().Add(600*time.Millisecond)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d shards: %v, want %q", tc.answer.Shards, err, tc.want)
		}
	}
	verdicts := map[string]StepTotals{
		"":                     {Shards: 3, Connections: 300, Step: Step{Senders: 6, Expected: 100, Received: 100, FailedConnections: 3}},
		StopConnectionFailures: {Shards: 3, Connections: 300, Step: Step{Senders: 6, Expected: 100, Received: 100, FailedConnections: 4}},
		StopProbeSaturated:     {Shards: 3, Connections: 300, Saturated: 1, Step: Step{Senders: 6, Expected: 100, Received: 100}},
		StopThrottled:          {Shards: 3, Connections: 300, Step: Step{Senders: 6, Expected: 100, Received: 100, Throttled: 1}},
	}
	for want, totals := range verdicts {
		if got := totals.verdict(100 * time.Millisecond); got != want {
			t.Errorf("totals %+v: verdict %q, want %q", totals, got, want)
		}
	}
}

// Sharded steps start on the clock; a shard late for one is out of step,
// and a ramp that cannot end within the run's deadline does not begin.
func TestStepClock(t *testing.T) {
	sr := &searcher{Runner: &scenarios.Runner{Scenario: config.Scenario{ConnectTimeout: 2 * time.Second, MaxSendLag: 100 * time.Millisecond}, Shard: scenarios.Shard{Index: 0, Count: 2}}}
	search := config.CapacitySearch{BaseSending: 1, Step: 1, StepDuration: time.Second}
	at := time.Now().Add(-4900 * time.Millisecond) // step 1 was due 2.9 s ago, step 2 is due in 0.2 s
	c, err := sr.stepClock(context.Background(), search, at, 4)
	if err != nil || c.period != 3100*time.Millisecond || !c.start(1).Equal(at.Add(5100*time.Millisecond)) {
		t.Fatalf("clock %+v, %v; want steps every 3.1 s from 2 s after the start", c, err)
	}
	if err := c.begin(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "longer than connect_timeout") {
		t.Errorf("step 1, 2.9 s late: %v", err)
	}
	if err := c.begin(context.Background(), 1); err != nil || time.Now().Before(c.start(1)) {
		t.Errorf("step 2: %v, or begun before it was due", err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), at.Add(10*time.Second))
	defer cancel()
	if _, err := sr.stepClock(ctx, search, at, 4); err == nil || !strings.Contains(err.Error(), "after its timeout") {
		t.Errorf("4 steps of 3.1 s in a 10 s run: %v", err)
	}
	if c, err := (&searcher{Runner: &scenarios.Runner{}}).stepClock(context.Background(), search, at, 4); c != nil || err != nil || c.begin(context.Background(), 3) != nil {
		t.Errorf("an unsharded search has a clock %+v (%v)", c, err)
	}
}
