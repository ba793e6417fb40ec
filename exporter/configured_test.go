package exporter

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/config"
)

func TestApplyTiersFollowsTheConfig(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	targets := []config.Target{
		{Name: "local", Embedded: true, Tier: &config.Tier{Service: "signalr", Units: 1}},
		{Name: "untiered", Embedded: true},
	}
	m.ApplyTiers(targets)
	if n := testutil.CollectAndCount(reg, "hubprobe_tier_limit"); n != 5 {
		t.Errorf("%d tier limit series, want 5", n)
	}
	targets[0].Tier = nil // a reload that drops the tier
	m.ApplyTiers(targets)
	if n := testutil.CollectAndCount(reg, "hubprobe_tier_limit", "hubprobe_tier_info"); n != 0 {
		t.Errorf("%d tier series after the tier was removed, want 0", n)
	}
}

func TestScenarioStatusesAndInfoFollowTheConfig(t *testing.T) {
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind, s.Schedule, s.Transport, s.Protocol = "echo", "local", "echo", "@every 1m", "websockets", "json"
	got := ScenarioStatuses([]config.Scenario{s})
	want := ScenarioStatus{Name: "echo", Target: "local", Kind: "echo", Schedule: "@every 1m", Mode: s.Mode}
	if len(got) != 1 || got[0] != want {
		t.Errorf("statuses %+v, want [%+v]", got, want)
	}
	if info := ScenarioInfoOf(s); info != (ScenarioInfo{Target: "local", Scenario: "echo", Kind: "echo", Transport: "websockets", Protocol: "json"}) {
		t.Errorf("info %+v", info)
	}
}
