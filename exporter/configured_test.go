package exporter

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
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

func TestScenarioInfoFollowsTheConfig(t *testing.T) {
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind, s.Schedule, s.Transport, s.Protocol = "echo", "local", "echo", "@every 1m", "websockets", "json"
	if info := ScenarioInfoOf(s); info != (ScenarioInfo{Target: "local", Scenario: "echo", Kind: "echo", Transport: "websockets", Protocol: "json"}) {
		t.Errorf("info %+v", info)
	}
}

// A reload that drops one scenario and relabels another: the dropped one's
// series go, the relabelled one keeps only its new description, the one
// left alone keeps everything.
func TestForgetRemovedFollowsTheConfig(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped, relabelled := config.DefaultScenario, config.DefaultScenario, config.DefaultScenario
	kept.Name, dropped.Name, relabelled.Name = "kept", "dropped", "relabelled"
	for _, s := range []*config.Scenario{&kept, &dropped, &relabelled} {
		s.Target, s.Kind = "local", "echo"
	}
	before := []config.Scenario{kept, dropped, relabelled}
	for _, s := range before {
		m.ScenarioRecorder(s)
		m.RunFinished(scenarios.Result{Target: s.Target, Scenario: s.Name, Kind: s.Kind, Outcome: scenarios.ResultSuccess})
	}
	relabelled.Kind = "broadcast"
	now := []config.Scenario{kept, relabelled}
	m.ScenarioRecorder(relabelled)
	m.ForgetRemoved(before, now)
	if n := testutil.CollectAndCount(reg, "hubprobe_scenario_info"); n != 2 {
		t.Errorf("%d scenario_info series, want 2 (kept, relabelled as broadcast)", n)
	}
	if n := testutil.CollectAndCount(reg, "hubprobe_runs_total"); n != 8 {
		t.Errorf("%d runs_total series, want the four results of kept and of relabelled", n)
	}
	want := `# HELP hubprobe_scenario_info What each configured scenario is; always 1.
# TYPE hubprobe_scenario_info gauge
hubprobe_scenario_info{kind="broadcast",protocol="json",scenario="relabelled",target="local",transport="websockets"} 1
hubprobe_scenario_info{kind="echo",protocol="json",scenario="kept",target="local",transport="websockets"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "hubprobe_scenario_info"); err != nil {
		t.Error(err)
	}
}
