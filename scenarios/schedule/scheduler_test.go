package schedule_test

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/bench/benchtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// A run ends once its last send's answer is in, and a send may leave up to
// a pass (100 ms) early: the last send here falls due at 1.5 s, so the
// first run is still on at the tick a second after it began.
func TestSchedulerSkipsOverlappingRunsAndStopsPromptly(t *testing.T) {
	srv := benchtest.StartTest(t)
	f := scenariostest.NewSchedulerFixture(t, srv.URL)
	s := scenariostest.Scenario("echo", 1, 1800*time.Millisecond, 300*time.Millisecond)
	s.Schedule, s.Timeout = "@every 1s", 10*time.Second
	if err := f.Sched.Apply(scenariostest.OneJob(f.Rec, f.URL, s), false); err != nil {
		t.Fatal(err)
	}
	scenariostest.WaitUntil(t, 6*time.Second, func() bool {
		return f.Results.Count(scenarios.ResultSkipped) >= 1 && f.Results.Count(scenarios.ResultSuccess) >= 1
	})
	scenariostest.StopBounded(t, f.Sched)
	if got := f.Rec.Tally().Active(); got != 0 {
		t.Fatalf("%d connections open after Stop, want 0", got)
	}
}

func TestSchedulerApplyRemovesScenarios(t *testing.T) {
	srv := benchtest.StartTest(t)
	f := scenariostest.NewSchedulerFixture(t, srv.URL)
	defer f.Sched.Stop()
	s := scenariostest.Scenario("echo", 1, 30*time.Second, 500*time.Millisecond)
	s.Schedule, s.Timeout = "@every 1h", time.Minute
	if err := f.Sched.Apply(scenariostest.OneJob(f.Rec, f.URL, s), false); err != nil {
		t.Fatal(err)
	}
	scenariostest.WaitUntil(t, 5*time.Second, func() bool { return f.Rec.Tally().Sent >= 2 })
	// Removing the scenario cancels its 30 s run: it ends as a failure now.
	if err := f.Sched.Apply(nil, false); err != nil {
		t.Fatal(err)
	}
	scenariostest.WaitUntil(t, 5*time.Second, func() bool {
		return f.Results.Count(scenarios.ResultFailure) == 1
	})
}
