package exporter

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/slo"
)

// Every delivery counts once by outcome, at 1 s or less as within_1s (the
// latency histogram's le="1" bucket), and every lost message as lost: the
// outcomes add up to received + lost.
func TestExpectedDeliveriesByOutcome(t *testing.T) {
	_, m := newTestMetrics(t)
	rec := m.Recorder(echoWS)
	feed(m, rec, echoWS) // nine deliveries, one of them over 1 s, and one lost
	rec.Delivered(delivery(0, time.Second))
	rec.Delivered(delivery(0, time.Second+time.Nanosecond))
	rec.Event(scenarios.Event{Kind: scenarios.MessagesLost, Count: 2})
	rec.Event(scenarios.Event{Kind: scenarios.MessagesLost})
	rec.Event(scenarios.Event{Kind: scenarios.MessagesLost, Count: -1})
	outcome := func(o string) float64 {
		return testutil.ToFloat64(m.deliveries.WithLabelValues(echoWS.Target, echoWS.Scenario, o))
	}
	if within, over, lost := outcome(slo.OutcomeWithin), outcome(slo.OutcomeOver), outcome(slo.OutcomeLost); within != 9 || over != 2 || lost != 3 {
		t.Errorf("within_1s %g, over_1s %g, lost %g; want 9, 2 and 3", within, over, lost)
	}
	received := testutil.ToFloat64(m.received.WithLabelValues(echoWS.Target, echoWS.Scenario))
	lost := testutil.ToFloat64(m.lost.WithLabelValues(echoWS.Target, echoWS.Scenario))
	if sum := outcome(slo.OutcomeWithin) + outcome(slo.OutcomeOver) + outcome(slo.OutcomeLost); sum != received+lost {
		t.Errorf("outcomes add up to %g, received + lost is %g", sum, received+lost)
	}
}

// A fresh scenario has all three outcomes at 0, so that rate() over them
// answers from the first scrape.
func TestOutcomesExistFromStart(t *testing.T) {
	reg, m := newTestMetrics(t)
	m.Recorder(echoWS)
	if n, err := testutil.GatherAndCount(reg, slo.DeliveriesMetric); err != nil || n != len(slo.Outcomes) {
		t.Errorf("%s has %d series (%v), want %d", slo.DeliveriesMetric, n, err, len(slo.Outcomes))
	}
}

// Each fixed-rate scenario exports its objective and window; a capacity
// search none; a scenario that becomes a capacity search loses them, one
// that is forgotten too.
func TestApplyObjectives(t *testing.T) {
	reg, m := newTestMetrics(t)
	echo := config.Scenario{Name: "echo", Target: "hub", Mode: config.ModeRun, Objective: slo.Objective{Ratio: 0.995, Window: 28 * slo.Day}}
	search := config.Scenario{Name: "search", Target: "hub", Mode: config.ModeCapacitySearch, Objective: slo.Default}
	m.ApplyObjectives([]config.Scenario{echo, search})
	if got := testutil.ToFloat64(m.objectives.ratio.WithLabelValues("hub", "echo")); got != 0.995 {
		t.Errorf("objective %g, want 0.995", got)
	}
	if got := testutil.ToFloat64(m.objectives.window.WithLabelValues("hub", "echo")); got != 28*86400 {
		t.Errorf("window %g s, want %d", got, 28*86400)
	}
	count := func() int {
		n, err := testutil.GatherAndCount(reg, slo.ObjectiveMetric, slo.WindowMetric)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 2 {
		t.Errorf("%d objective and window series, want the echo's 2 only", n)
	}
	echo.Mode = config.ModeCapacitySearch
	m.ApplyObjectives([]config.Scenario{echo, search})
	if n := count(); n != 0 {
		t.Errorf("%d objective and window series after echo became a capacity search, want 0", n)
	}
	echo.Mode = config.ModeRun
	m.ApplyObjectives([]config.Scenario{echo})
	m.Forget(ScenarioInfo{Target: "hub", Scenario: "echo"})
	if n := count(); n != 0 {
		t.Errorf("%d objective and window series after echo was forgotten, want 0", n)
	}
}
