package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/hubprobe/hubprobe/config"
)

// The shares of every shard add up to n exactly and tile 0…n-1 in order.
func TestShardSharesAddUpAndTile(t *testing.T) {
	for count := 1; count <= 7; count++ {
		for _, n := range []int{0, 1, 2, 3, 10, 11, 100, 100001} {
			sum, next := 0, 0
			for i := range count {
				s := Shard{Index: i, Count: count}
				if s.First(n) != next {
					t.Errorf("%d shards, n %d: shard %d starts at %d, want %d", count, n, i, s.First(n), next)
				}
				if want := n/count + btoi(i < n%count); s.Share(n) != want {
					t.Errorf("%d shards, n %d: shard %d has %d, want %d", count, n, i, s.Share(n), want)
				}
				sum += s.Share(n)
				next += s.Share(n)
			}
			if sum != n {
				t.Errorf("%d shards, n %d: shares add up to %d", count, n, sum)
			}
		}
	}
	if (Shard{}).Share(10) != 10 || (Shard{}).First(10) != 0 || (Shard{}).Sharded() {
		t.Error("the zero Shard is not one process doing everything")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestShardValidate(t *testing.T) {
	for _, s := range []Shard{{0, 1}, {2, 3}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for s, want := range map[Shard]string{
		{0, 0}:  "shard count 0 must be at least 1",
		{3, 3}:  "shard index 3 must be at least 0 and below the shard count 3",
		{-1, 2}: "shard index -1 must be at least 0 and below the shard count 2",
	} {
		if err := s.Validate(); err == nil || err.Error() != want {
			t.Errorf("%+v: %v, want %q", s, err, want)
		}
	}
}

// "@every 30s" fires at multiples of 30 s since the Unix epoch, whenever it
// is asked; robfig/cron's own schedule counts from the moment asked.
func TestEveryScheduleFollowsTheClock(t *testing.T) {
	raw, err := config.Scenario{Schedule: "@every 30s"}.CronSchedule()
	if err != nil {
		t.Fatal(err)
	}
	s := alignToClock(raw)
	for _, asked := range []int64{1_699_999_981, 1_699_999_995, 1_700_000_009} {
		at := time.Unix(asked, 123)
		if got := s.Next(at); got.Unix() != 1_700_000_010 || got.Nanosecond() != 0 {
			t.Errorf("Next(%d s + 123 ns) = %s, want 1700000010 exactly", asked, got)
		}
		if raw.Next(at).Unix() == 1_700_000_010 {
			t.Errorf("robfig's schedule already followed the clock for %d; this test no longer shows why alignToClock exists", asked)
		}
	}
	if got := s.Next(time.Unix(1_700_000_010, 0)); got.Unix() != 1_700_000_040 {
		t.Errorf("Next on an instant = %d, want the one after", got.Unix())
	}
	if p := period(s); p != 30*time.Second {
		t.Errorf("period %s", p)
	}
	cronSpec, _ := config.Scenario{Schedule: "*/5 * * * *"}.CronSchedule()
	if alignToClock(cronSpec) != cronSpec || period(cronSpec) != 5*time.Minute {
		t.Errorf("a cron spec is changed, or its period is %s", period(cronSpec))
	}
}

// The start offset is a function of the name and the schedule alone, below
// half the period and at most 10 s; the run clock moves every instant by it.
func TestStartOffsetComesFromTheName(t *testing.T) {
	every := func(spec string) cron.Schedule {
		s, err := config.Scenario{Schedule: spec}.CronSchedule()
		if err != nil {
			t.Fatal(err)
		}
		return alignToClock(s)
	}
	offsets := map[time.Duration]bool{}
	for _, name := range []string{"echo", "broadcast", "send_to_group", "send_to_client", "capacity"} {
		o := startOffset(name, every("@every 1m"))
		if o != startOffset(name, every("@every 1m")) || o < 0 || o >= 10*time.Second || o%time.Millisecond != 0 {
			t.Errorf("%s: offset %s is not a fixed whole millisecond below 10 s", name, o)
		}
		if short := startOffset(name, every("@every 4s")); short >= 2*time.Second {
			t.Errorf("%s: offset %s for a 4 s period, want below 2 s", name, short)
		}
		offsets[o] = true
	}
	if len(offsets) < 4 {
		t.Errorf("five names share %d offsets", len(offsets))
	}
	sc := config.Scenario{Name: "echo", Schedule: "@every 1m"}
	at, err := NextStart(sc, true, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1_700_000_040, 0).Add(startOffset("echo", every("@every 1m"))); !at.Equal(want) {
		t.Errorf("NextStart = %s, want %s", at, want)
	}
	if again, _ := NextStart(sc, true, at.Add(-time.Nanosecond)); !again.Equal(at) {
		t.Errorf("NextStart just before a start = %s, want that start %s", again, at)
	}
}

// Every shard names a run and its groups alike; each marks its payloads
// differently, and ignores the others'.
func TestShardsShareRunIDsAndGroupsButNotPayloads(t *testing.T) {
	at := time.Unix(1_700_000_010, 0)
	if runID("echo", at) != runID("echo", at) || runID("echo", at) == runID("echo", at.Add(time.Second)) ||
		runID("echo", at) == runID("broadcast", at) {
		t.Error("runID is not a function of the scenario and the instant alone")
	}
	cfg := config.Scenario{Name: "group", Connections: 31, GroupSize: 10}
	var names [3]map[string]int // per shard: group name → members there
	for i := range 3 {
		rn := &Runner{Scenario: cfg, Shard: Shard{Index: i, Count: 3}}
		run := rn.newRun(cfg, nil, newSendToGroup(cfg), at)
		run.Clients = make([]*Client, rn.connections())
		g := newGroupLayout(cfg)
		g.first = run.first
		names[i] = map[string]int{}
		for c := range run.Clients {
			names[i][g.groupName(run, c)]++
		}
	}
	// 31 connections over 3 shards: 0–10, 11–20, 21–30; groups of 10.
	id := runID("group", at)
	want := [3]map[string]int{
		{"hubprobe-" + id + "-0": 10, "hubprobe-" + id + "-1": 1},
		{"hubprobe-" + id + "-1": 9, "hubprobe-" + id + "-2": 1},
		{"hubprobe-" + id + "-2": 9, "hubprobe-" + id + "-3": 1},
	}
	for i := range 3 {
		if len(names[i]) != len(want[i]) {
			t.Errorf("shard %d groups %v, want %v", i, names[i], want[i])
		}
		for n, m := range want[i] {
			if names[i][n] != m {
				t.Errorf("shard %d groups %v, want %v", i, names[i], want[i])
			}
		}
	}
	a := newPayloadBuilder(runMarker(id, Shard{0, 3}), 16)
	b := newPayloadBuilder(runMarker(id, Shard{1, 3}), 16)
	p := a.Append(nil, "", "", messageID(2, 7))
	if _, got, ok := a.Parse(p); !ok || got != messageID(2, 7) {
		t.Errorf("shard 0 does not read its own payload: %v %d", ok, got)
	}
	if _, _, ok := b.Parse(p); ok {
		t.Error("shard 1 counts shard 0's payload")
	}
}

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
	rn := &Runner{Scenario: config.Scenario{Name: "ramp", Target: "hub"}, Shard: Shard{Index: 1, Count: 3}}
	key := StepKey{Target: "hub", Scenario: "ramp", Run: "r", Step: 2}
	slow := StepTotals{Shards: 3, Connections: 300, Step: CapacityStep{Senders: 6, Expected: 1000, Received: 1000, Slow: 11}}
	rn.Search.Aggregator = &fakeAggregator{answers: []StepTotals{{Shards: 1}, {Shards: 2}, slow}}
	got, err := rn.awaitShards(context.Background(), key, time.Now().Add(5*time.Second))
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
		rn.Search.Aggregator = &fakeAggregator{answers: []StepTotals{tc.answer}}
		if _, err := rn.awaitShards(context.Background(), key, time.Now().Add(600*time.Millisecond)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d shards: %v, want %q", tc.answer.Shards, err, tc.want)
		}
	}
	verdicts := map[string]StepTotals{
		"":                     {Shards: 3, Connections: 300, Step: CapacityStep{Senders: 6, Expected: 100, Received: 100, FailedConnections: 3}},
		StopConnectionFailures: {Shards: 3, Connections: 300, Step: CapacityStep{Senders: 6, Expected: 100, Received: 100, FailedConnections: 4}},
		StopProbeSaturated:     {Shards: 3, Connections: 300, Saturated: 1, Step: CapacityStep{Senders: 6, Expected: 100, Received: 100}},
		StopThrottled:          {Shards: 3, Connections: 300, Step: CapacityStep{Senders: 6, Expected: 100, Received: 100, Throttled: 1}},
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
	rn := &Runner{Scenario: config.Scenario{ConnectTimeout: 2 * time.Second, MaxSendLag: 100 * time.Millisecond}, Shard: Shard{Index: 0, Count: 2}}
	search := config.CapacitySearch{BaseSending: 1, Step: 1, StepDuration: time.Second}
	at := time.Now().Add(-4900 * time.Millisecond) // step 1 was due 2.9 s ago, step 2 is due in 0.2 s
	c, err := rn.stepClock(context.Background(), search, at, 4)
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
	if _, err := rn.stepClock(ctx, search, at, 4); err == nil || !strings.Contains(err.Error(), "after its timeout") {
		t.Errorf("4 steps of 3.1 s in a 10 s run: %v", err)
	}
	if c, err := (&Runner{}).stepClock(context.Background(), search, at, 4); c != nil || err != nil || c.begin(context.Background(), 3) != nil {
		t.Errorf("an unsharded search has a clock %+v (%v)", c, err)
	}
}
