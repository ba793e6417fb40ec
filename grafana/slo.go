package grafana

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/units"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/slo"
)

// The burn rates the error budget panels draw lines at: the fastest pair
// pages, 1× spends the budget exactly over its window.
const (
	pageBurnRate      = 14.4
	sustainedBurnRate = 1.0
)

// budgetRemaining is the remaining error budget per target and scenario,
// from the shipped rules' record: its window is the scenario's own, which a
// dashboard range could not follow.
func budgetRemaining() string {
	return fmt.Sprintf("max by (target, scenario) (%s)", metric(alerts.BudgetRemainingRecord))
}

// burnRate is the burn rate over one window: the recorded error ratio over
// the scenario's budget.
func burnRate(window string) string {
	return fmt.Sprintf("max by (target, scenario) (%s) / on (target, scenario) (1 - max by (target, scenario) (%s))",
		metric(alerts.ErrorRatioRecord(window)), metric(alerts.ObjectiveRecord))
}

// errorBudgetGraphs are the scenario dashboard's error budget row.
func errorBudgetGraphs() []graph {
	burns := []query{}
	for _, w := range alerts.DefaultConfig.ErrorRatioWindows() {
		burns = append(burns, query{burnRate(w), w})
	}
	return []graph{{
		title: "Error budget remaining",
		description: "The share of the error budget left over the scenario's window (slo: in the configuration, 30 days by " +
			"default): 100 % with no bad delivery, 0 % when bad ones (over 1 s, or lost) reach 1 - objective of the " +
			"expected ones, below 0 past it. Needs Prometheus to keep the window's data.",
		unit: units.PercentUnit, width: 8,
		queries: []query{{budgetRemaining(), "remaining"}},
	}, {
		title: "Burn rate by window",
		description: "How fast the budget goes, over each window the burn-rate alerts read: the error ratio over the budget. " +
			"At 1 (orange) the budget lasts exactly its window; the fastest page fires at 14.4 (red) over 1h and 5m together, " +
			"the others at 6 (6h and 30m), 3 (1d and 2h) and 1 (3d and 6h).",
		unit: units.Short, width: 16, min: ptr(0.0), limit: ptr(pageBurnRate), warn: ptr(sustainedBurnRate),
		queries: burns,
	}, {
		title: "Expected deliveries by outcome",
		description: "Expected deliveries per second by outcome: within 1 s (good), over 1 s and lost (bad), stacked. " +
			"The SLI is the good share.",
		unit: units.MessagesPerSecond, width: 16, min: ptr(0.0), stacked: true,
		queries: []query{{fmt.Sprintf("sum by (outcome) (%s)", rate(slo.DeliveriesMetric)), "{{outcome}}"}},
	}}
}

// objectiveTable shows the scenario's objective and window, as the
// configuration sets them.
func objectiveTable() *table.PanelBuilder {
	p := table.NewPanelBuilder().
		Title("Objective").
		Description("The scenario's objective (the share of expected deliveries that must arrive within 1 s) and the " +
			"window of its budget, in seconds, from slo: in hubprobe's configuration.").
		Unit(units.NoUnit).
		Datasource(datasourceRef()).
		Height(8).
		Span(8)
	for i, m := range []string{slo.ObjectiveMetric, slo.WindowMetric} {
		p = p.WithTarget(prometheus.NewDataqueryBuilder().
			Expr(fmt.Sprintf("max by (target, scenario) (%s)", metric(m))).
			Instant().
			Format(prometheus.PromQueryFormatTable).
			RefId(refID(i)).
			Datasource(datasourceRef()))
	}
	return p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
}

// budgetOverviewGraph is the overview's error budget column: what is
// left of every scenario's budget.
func budgetOverviewGraph() graph {
	return graph{
		title: "Error budget remaining",
		description: "What is left of each scenario's error budget over its window: bad deliveries (over 1 s, or lost) " +
			"spend it. 0 % is the objective missed. The scenario dashboard shows the burn rate over every window.",
		unit: units.PercentUnit, width: 24,
		queries: []query{{budgetRemaining(), byScenario}},
	}
}
