package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
)

// schedulerFixture runs a Scheduler whose runners report into one registry.
type schedulerFixture struct {
	reg     *prometheus.Registry
	metrics *exporter.Metrics
	sched   *scenarios.Scheduler
	url     string
}

func newSchedulerFixture(t *testing.T, url string) *schedulerFixture {
	t.Helper()
	f := &schedulerFixture{reg: prometheus.NewRegistry(), url: url}
	var err error
	if f.metrics, err = exporter.NewMetrics(f.reg); err != nil {
		t.Fatal(err)
	}
	f.sched = scenarios.NewScheduler(context.Background(), zerolog.Nop())
	return f
}

// oneJob is s resolved against a hub at url, reporting to m.
func oneJob(m *exporter.Metrics, url string, s config.Scenario) []scenarios.Job {
	info := exporter.ScenarioInfo{Target: s.Target, Scenario: s.Name, Kind: s.Kind}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenarios.Endpoint{URL: url}, Recorder: m.Recorder(info)}
	return []scenarios.Job{{Runner: runner, Target: &config.Target{Name: s.Target, URL: "http://unused"}}}
}

func TestSchedulerSkipsOverlappingRunsAndStopsPromptly(t *testing.T) {
	srv := startThirdParty(t)
	f := newSchedulerFixture(t, srv.URL)
	s := scenario("echo", 1, 1500*time.Millisecond, 500*time.Millisecond)
	s.Schedule, s.Timeout = "@every 1s", 10*time.Second
	if err := f.sched.Apply(oneJob(f.metrics, f.url, s), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 6*time.Second, func() bool {
		return counter(t, f.reg, "hubprobe_runs_total", "result", "skipped") >= 1 &&
			counter(t, f.reg, "hubprobe_runs_total", "result", "success") >= 1
	})
	stopped := make(chan struct{})
	go func() { f.sched.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return within 5 s")
	}
	if got := counter(t, f.reg, "hubprobe_connections_active"); got != 0 {
		t.Fatalf("connections_active = %v after Stop, want 0", got)
	}
}

func TestSchedulerApplyRemovesScenarios(t *testing.T) {
	srv := startThirdParty(t)
	f := newSchedulerFixture(t, srv.URL)
	defer f.sched.Stop()
	s := scenario("echo", 1, 30*time.Second, 500*time.Millisecond)
	s.Schedule, s.Timeout = "@every 1h", time.Minute
	if err := f.sched.Apply(oneJob(f.metrics, f.url, s), false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, func() bool { return counter(t, f.reg, "hubprobe_messages_sent_total") >= 2 })
	// Removing the scenario cancels its 30 s run: it ends as a failure now.
	if err := f.sched.Apply(nil, false); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, func() bool {
		return counter(t, f.reg, "hubprobe_runs_total", "result", "failure") == 1
	})
}

func waitUntil(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
