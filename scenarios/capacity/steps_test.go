package capacity_test

import (
	"context"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/peerhub/peerhubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// A caller's stop rule ends the ramp where it says, and every step counts
// its deliveries by the caller's latency classes.
func TestSearchStepsTakesTheCallersRuleAndClasses(t *testing.T) {
	srv := peerhubtest.Start(t)
	srv.EchoDelay.Store(int64(120 * time.Millisecond))
	s := scenariostest.Scenario("echo", 4, time.Second, 100*time.Millisecond)
	s.Mode = config.ModeCapacitySearch
	s.CapacitySearch = &config.CapacitySearch{BaseSending: 1, Step: 1, StepDuration: 300 * time.Millisecond}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(srv.URL), Recorder: scenarios.Discard}
	var judged []int
	opts := capacity.StepOptions{
		Judge: func(step capacity.Step, connections int) string {
			judged = append(judged, step.Senders)
			if step.Senders == 2 {
				return capacity.StopSlowMessages
			}
			return ""
		},
		LatencyBounds: []time.Duration{100 * time.Millisecond, time.Second},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	steps := capacity.SearchSteps(ctx, runner, opts)
	if steps.StopReason != capacity.StopSlowMessages || len(steps.Steps) != 2 || len(judged) != 2 {
		t.Fatalf("stopped for %q after %d steps, judged %v (%s); want slow_messages after 2", steps.StopReason, len(steps.Steps), judged, steps.Result.Error)
	}
	if len(steps.Tallies) != 2 {
		t.Fatalf("%d tallies, want one per step", len(steps.Tallies))
	}
	// 1 then 2 senders every 100 ms for 300 ms, each echo held 120 ms:
	// all in the class from 100 ms to 1 s.
	for i, want := range []int64{3, 6} {
		tally := steps.Tallies[i]
		if tally.Delivered != want || len(tally.Classes) != 3 || tally.Classes[0] != 0 || tally.Classes[1] != want || tally.Classes[2] != 0 {
			t.Errorf("step %d: delivered %d, classes %v; want %d, all in [100 ms, 1 s)", i+1, tally.Delivered, tally.Classes, want)
		}
		// The last send is due 200 ms in but goes out in the pass on the
		// pacer's 100 ms grid before it, so at least 100 ms in; its echo
		// is held 120 ms.
		if span := tally.Settled.Sub(tally.Began); span < 220*time.Millisecond || span > 1400*time.Millisecond {
			t.Errorf("step %d: began to settled %s, want from its last send's echo (at least 220 ms) to its 300 ms of sending plus at most 1 s", i+1, span)
		}
	}
	if !steps.Tallies[1].Began.After(steps.Tallies[0].Settled.Add(-time.Millisecond)) {
		t.Error("the second step began before the first settled")
	}
}
