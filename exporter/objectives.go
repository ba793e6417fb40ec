package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/config"
)

// objectiveMetrics are each scenario's SLO as the configuration sets it,
// for the rules to join: hubprobe_slo_objective_ratio and
// hubprobe_slo_window_seconds.
type objectiveMetrics struct {
	ratio, window *prometheus.GaugeVec
}

func newObjectiveMetrics() objectiveMetrics {
	return objectiveMetrics{
		ratio: gaugeVec("slo_objective_ratio",
			"The scenario's objective: the share of expected deliveries that must arrive within 1 s.", scenarioLabels...),
		window: gaugeVec("slo_window_seconds",
			"The window the scenario's error budget is measured over.", scenarioLabels...),
	}
}

// ApplyObjectives exports the objective of every scenario that runs at a
// fixed rate, and none for a capacity search, which saturates the hub on
// purpose. Removed scenarios lose theirs with the rest of their series
// (Forget).
func (m *Metrics) ApplyObjectives(list []config.Scenario) {
	for _, s := range list {
		if s.Mode != config.ModeRun {
			m.objectives.ratio.DeleteLabelValues(s.Target, s.Name)
			m.objectives.window.DeleteLabelValues(s.Target, s.Name)
			continue
		}
		m.objectives.ratio.WithLabelValues(s.Target, s.Name).Set(s.Objective.Ratio)
		m.objectives.window.WithLabelValues(s.Target, s.Name).Set(s.Objective.Window.Seconds())
	}
}
