package alerts

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hubprobe/hubprobe/slo"
)

// AlertErrorBudgetBurn pages (severity page) or opens a ticket (severity
// ticket) when a scenario spends its error budget too fast.
const AlertErrorBudgetBurn = "HubprobeErrorBudgetBurn"

// The burn-rate alerts' severities, the SRE workbook's words (sloth and
// pyrra use them too). The other alerts keep critical and warning; the
// example Alertmanager configuration routes page with critical and ticket
// with warning.
const (
	SeverityPage   = "page"
	SeverityTicket = "ticket"
)

// BurnRate is one multi-window burn-rate alert: it fires when the error
// ratio over both Long and Short is above Factor times the error budget
// (1 - objective). Long sees that enough budget is gone; Short that it is
// still going, so the alert resolves soon after the burn stops.
type BurnRate struct {
	Severity    string
	Factor      float64
	Long, Short string
	For         string
}

// DefaultBurnRates are the SRE workbook's four pairs for a 30-day budget:
// 14.4× over 1h and 5m spends 2 % of it in an hour, 6× over 6h and 30m
// 5 % in six hours (both page); 3× over 1d and 2h and 1× over 3d and 6h
// spend 10 % in a day or in three (both open a ticket). The factors are
// burn rates, the same whatever the window: 14.4× spends any budget in a
// fourteenth of its window.
var DefaultBurnRates = []BurnRate{
	{Severity: SeverityPage, Factor: 14.4, Long: "1h", Short: "5m", For: "2m"},
	{Severity: SeverityPage, Factor: 6, Long: "6h", Short: "30m", For: "15m"},
	{Severity: SeverityTicket, Factor: 3, Long: "1d", Short: "2h", For: "1h"},
	{Severity: SeverityTicket, Factor: 1, Long: "3d", Short: "6h", For: "3h"},
}

// Names of the SLO's recorded series.
const (
	// ObjectiveRecord is each scenario's objective, one series per target
	// and scenario whatever the scrape adds.
	ObjectiveRecord = "target_scenario:hubprobe_slo_objective:ratio"
	// BudgetRemainingRecord is the share of the error budget left over the
	// scenario's window: 1 at no bad delivery, 0 when spent, below 0 past it.
	BudgetRemainingRecord = "target_scenario:hubprobe_slo_error_budget_remaining:ratio"
)

// ErrorRatioRecord names the SLO's error ratio over window: bad expected
// deliveries (over 1 s or lost) over all of them.
func ErrorRatioRecord(window string) string {
	return "target_scenario:hubprobe_slo_errors:ratio_rate" + window
}

// ErrorRatioWindows are the windows the burn rates read, shortest first.
func (cfg Config) ErrorRatioWindows() []string {
	var windows []string
	for _, b := range cfg.BurnRates {
		for _, w := range []string{b.Short, b.Long} {
			if !slices.Contains(windows, w) {
				windows = append(windows, w)
			}
		}
	}
	slices.SortStableFunc(windows, func(a, b string) int { return int(mustDuration(a) - mustDuration(b)) })
	return windows
}

// mustDuration parses a window of the rules; the rules are code, so a bad
// one is a programming error that the tests meet first.
func mustDuration(window string) time.Duration {
	d, err := slo.ParseWindow(window)
	if err != nil {
		panic(fmt.Sprintf("alerts: window %q: %v", window, err))
	}
	return d
}

// sloRecordingRules record the objective, the error ratio over every
// window a burn rate reads, and the budget remaining.
func (cfg Config) sloRecordingRules() []Rule {
	rules := []Rule{{Record: ObjectiveRecord, Expr: fmt.Sprintf("max by (%s) (%s)", targetScenario, cfg.selector(slo.ObjectiveMetric))}}
	for _, w := range cfg.ErrorRatioWindows() {
		rules = append(rules, Rule{Record: ErrorRatioRecord(w), Expr: cfg.errorRatioExpr("rate", w)})
	}
	return append(rules, Rule{Record: BudgetRemainingRecord, Expr: cfg.budgetRemainingExpr()})
}

// errorRatioExpr is bad expected deliveries over all of them in window,
// nothing where there were none.
func (cfg Config) errorRatioExpr(fn, window string) string {
	return fmt.Sprintf("%s (%s(%s[%s]))\n/\n(%s (%s(%s[%s])) > 0)",
		byTargetScenario, fn, cfg.selector(slo.DeliveriesMetric, slo.BadMatcher), window,
		byTargetScenario, fn, cfg.selector(slo.DeliveriesMetric), window)
}

// budgetRemainingExpr is 1 - error ratio / budget over each scenario's own
// window: one term per window the configuration accepts, each kept for the
// scenarios whose hubprobe_slo_window_seconds names it.
func (cfg Config) budgetRemainingExpr() string {
	terms := make([]string, 0, len(slo.Windows))
	for _, w := range slo.Windows {
		terms = append(terms, fmt.Sprintf("(\n  1 - (\n%s\n  ) / on (%s) (1 - %s)\n)\nand on (%s)\n  max by (%s) (%s) == %d",
			indent(cfg.errorRatioExpr("increase", slo.WindowName(w)), "    "), targetScenario, ObjectiveRecord,
			targetScenario, targetScenario, cfg.selector(slo.WindowMetric), int64(w.Seconds())))
	}
	return strings.Join(terms, "\nor\n")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// burnRateExpr is the burn rate over window: its error ratio over the
// budget.
func burnRateExpr(window string) string {
	return fmt.Sprintf("%s / on (%s) (1 - %s)", ErrorRatioRecord(window), targetScenario, ObjectiveRecord)
}

// burnAlerts are the multi-window burn-rate alerts, one per pair. Each
// holds back, like the other latency alerts, while the probe is behind its
// own schedule.
func (cfg Config) burnAlerts() []alert {
	alerts := make([]alert, 0, len(cfg.BurnRates))
	for _, b := range cfg.BurnRates {
		expr := fmt.Sprintf("%s > %g\nand on (%s)\n  %s > %g", burnRateExpr(b.Long), b.Factor, targetScenario, burnRateExpr(b.Short), b.Factor)
		alerts = append(alerts, alert{
			name: AlertErrorBudgetBurn, severity: b.Severity, forDuration: b.For,
			expr:   cfg.unlessSaturated(expr),
			labels: map[string]string{"long_window": b.Long, "short_window": b.Short},
			summary: fmt.Sprintf("A scenario spends its error budget at %g times the sustainable rate or more (%s over %s and %s).",
				b.Factor, b.Severity, b.Long, b.Short),
			description: fmt.Sprintf("Scenario {{ $labels.scenario }} on target {{ $labels.target }} spent its error budget "+
				"at {{ $value | printf \"%%.3g\" }} times the sustainable rate over the last %s, and still more than %g times over the last %s "+
				"(bad: expected deliveries later than 1 s or lost).", b.Long, b.Factor, b.Short) + budgetLeft() + cfg.whereTheTimeGoes(),
		})
	}
	return alerts
}

// budgetLeft says how much of the budget remains, from its record.
func budgetLeft() string {
	return ` {{ with printf "` + BudgetRemainingRecord + `{target=%q,scenario=%q}" $labels.target $labels.scenario | query }}` +
		`{{ . | first | value | humanizePercentage }} of the budget remains over the window.{{ end }}`
}
