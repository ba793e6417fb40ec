package exporter

import (
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
)

// ScenarioInfoOf is how a configured scenario is labelled.
func ScenarioInfoOf(s config.Scenario) ScenarioInfo {
	return ScenarioInfo{Target: s.Target, Scenario: s.Name, Kind: s.Kind, Transport: s.Transport, Protocol: s.Protocol}
}

// ScenarioRecorder is Recorder for a configured scenario, the form a
// scenarios.Resolver takes.
func (m *Metrics) ScenarioRecorder(s config.Scenario) scenarios.Recorder {
	return m.Recorder(ScenarioInfoOf(s))
}

// ApplyTiers exports the published limits of every target that declares a
// tier and drops those of targets that no longer do.
func (m *Metrics) ApplyTiers(targets []config.Target) {
	declared := map[string]bool{}
	for _, t := range targets {
		if t.Tier == nil {
			continue
		}
		limits, err := t.Tier.Limits()
		if err != nil {
			continue // Load checked the tier; only a hand-built config gets here
		}
		declared[t.Name] = true
		m.SetTier(t.Name, limits)
	}
	for target := range m.Tiers() {
		if !declared[target] {
			m.RemoveTier(target)
		}
	}
}

// ForgetRemoved forgets the series of every scenario of before that now no
// longer has as it was (removed, or labelled otherwise), so dashboards do
// not show ghosts after a reload.
func (m *Metrics) ForgetRemoved(before, now []config.Scenario) {
	kept := map[ScenarioInfo]bool{}
	for _, s := range now {
		kept[ScenarioInfoOf(s)] = true
	}
	for _, s := range before {
		if info := ScenarioInfoOf(s); !kept[info] {
			m.Forget(info)
		}
	}
}
