package schedule_test

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/peerhub/peerhubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// A run ends once its last send's answer is in, and a send may leave up to
// a pass (100 ms) early: the last send here falls due at 1.5 s, so the
// first run is still on at the tick a second after it began.
func TestSchedulerSkipsOverlappingRunsAndStopsPromptly(t *testing.T) {
	srv := peerhubtest.Start(t)
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
	srv := peerhubtest.Start(t)
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

// A held scenario follows reloads in place: more connections are added,
// fewer closed, a new target reached one connection at a time, never with
// all of them gone at once; removed, it closes its connections and
// reports what it measured.
func TestSchedulerHoldsAndReloadsHeldScenarios(t *testing.T) {
	first, second := peerhubtest.Start(t), peerhubtest.Start(t)
	f := scenariostest.NewSchedulerFixture(t, first.URL)
	defer scenariostest.StopBounded(t, f.Sched)
	s := scenariostest.Scenario(config.KindHeld, 2, time.Second, 100*time.Millisecond)
	s.Held = &config.Held{ReportInterval: time.Second}
	apply := func(conns int, url string) {
		t.Helper()
		s.Connections = conns
		jobs := scenariostest.OneJob(f.Rec, url, s)
		jobs[0].Target.URL = url // the target changed, as a reload sees it
		if err := f.Sched.Apply(jobs, false); err != nil {
			t.Fatal(err)
		}
	}
	apply(2, first.URL)
	scenariostest.WaitUntil(t, 5*time.Second, func() bool { return f.Rec.Tally().Active() == 2 })
	apply(3, first.URL)
	scenariostest.WaitUntil(t, 5*time.Second, func() bool { return f.Rec.Tally().Active() == 3 })
	if got := f.Rec.Tally(); got.Opened != 3 || got.Closed != 0 {
		t.Fatalf("opened %d, closed %d after growing to 3; want 3 and 0", got.Opened, got.Closed)
	}
	least := watchActive(t, f.Rec, func() { apply(3, second.URL) }, func(tally scenariostest.Tally) bool { return tally.Opened == 6 })
	if least < 2 {
		t.Errorf("moving to a new target left %d connections open at one moment, want 2 or more", least)
	}
	apply(1, second.URL)
	scenariostest.WaitUntil(t, 5*time.Second, func() bool { return f.Rec.Tally().Active() == 1 })
	if err := f.Sched.Apply(nil, false); err != nil {
		t.Fatal(err)
	}
	scenariostest.WaitUntil(t, 5*time.Second, func() bool { return f.Rec.Tally().Active() == 0 })
	if got := f.Rec.Tally(); len(got.Dropped) != 0 || f.Results.Count(scenarios.ResultSuccess) < 1 {
		t.Errorf("dropped %v, %d reports; want no drop and the reports", got.Dropped, len(f.Results.All()))
	}
}

// watchActive runs change and watches rec's open connections until done
// holds, within 10 s, returning the fewest seen open.
func watchActive(t *testing.T, rec *scenariostest.Recorder, change func(), done func(scenariostest.Tally) bool) int64 {
	t.Helper()
	least := rec.Tally().Active()
	change()
	deadline := time.Now().Add(10 * time.Second)
	for tally := rec.Tally(); !done(tally); tally = rec.Tally() {
		least = min(least, tally.Active())
		if time.Now().After(deadline) {
			t.Fatalf("not done within 10 s: %+v", tally)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return min(least, rec.Tally().Active())
}
