// Package slo defines hubprobe's service level objective: the capacity
// definition (99 % of messages arrive in under 1 s) as an SLO on every
// scenario that runs at a fixed rate.
//
// The indicator is good expected deliveries over all expected deliveries:
// a delivery within 1 s is good, one later than 1 s is bad, and a message
// that never arrived within the scenario's loss timeout is bad too, not
// missing. hubprobe counts them in one counter, DeliveriesMetric, labelled
// with Outcome, so the ratio is exact whether Prometheus stores the latency
// histogram classic, native or both.
//
// The objective and its window come from the configuration (per target or
// scenario); hubprobe exports them as ObjectiveMetric and WindowMetric, so
// the shipped rules, which join them, follow a changed configuration
// without being regenerated.
package slo

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Names of the series the SLO is computed from.
const (
	// DeliveriesMetric counts expected deliveries by Outcome.
	DeliveriesMetric = "hubprobe_expected_deliveries_total"
	// ObjectiveMetric is each scenario's objective, 0 to 1.
	ObjectiveMetric = "hubprobe_slo_objective_ratio"
	// WindowMetric is each scenario's SLO window in seconds.
	WindowMetric = "hubprobe_slo_window_seconds"
)

// Outcomes of an expected delivery, the values of DeliveriesMetric's
// outcome label.
const (
	// OutcomeWithin: delivered in 1 s or less (the latency histogram's
	// le="1" bucket).
	OutcomeWithin = "within_1s"
	// OutcomeOver: delivered, later than 1 s.
	OutcomeOver = "over_1s"
	// OutcomeLost: never delivered within the loss timeout.
	OutcomeLost = "lost"
)

// Outcomes lists every outcome, in the order hubprobe creates them.
var Outcomes = []string{OutcomeWithin, OutcomeOver, OutcomeLost}

// LimitSeconds is the latency under which a delivery is good.
const LimitSeconds = 1.0

// OutcomeOf is the outcome of a delivery with this latency.
func OutcomeOf(latency time.Duration) string {
	if latency.Seconds() <= LimitSeconds {
		return OutcomeWithin
	}
	return OutcomeOver
}

// BadMatcher selects the bad outcomes of DeliveriesMetric.
const BadMatcher = `outcome=~"` + OutcomeOver + "|" + OutcomeLost + `"`

// Day is the unit SLO windows are written in.
const Day = 24 * time.Hour

// Defaults of a scenario's objective.
const (
	DefaultObjective = 0.99
	DefaultWindow    = 30 * Day
)

// Windows are the windows an objective may be measured over: the 4-week
// and 30-day windows of the SRE workbook's burn-rate alerting, which sloth
// also knows without a windows catalogue. The shipped rules compute the
// remaining budget over each (a range in PromQL is a constant, so a window
// must be one the rules were written with).
var Windows = []time.Duration{28 * Day, DefaultWindow}

// Objective is one scenario's objective: the share of expected deliveries
// that must arrive within 1 s, over Window.
type Objective struct {
	Ratio  float64
	Window time.Duration
}

// Default is the objective of a scenario that sets none.
var Default = Objective{Ratio: DefaultObjective, Window: DefaultWindow}

// Budget is the share of expected deliveries that may be bad.
func (o Objective) Budget() float64 { return 1 - o.Ratio }

// CheckRatio says what is wrong with a ratio, "" when nothing is.
func CheckRatio(ratio float64) string {
	if ratio <= 0 || ratio >= 1 || ratio != ratio {
		return fmt.Sprintf("must be greater than 0 and less than 1 (0.99 is 99 %%), got %g", ratio)
	}
	return ""
}

// CheckWindow says what is wrong with a window, "" when nothing is.
func CheckWindow(window time.Duration) string {
	if slices.Contains(Windows, window) {
		return ""
	}
	return fmt.Sprintf("must be one of %s, got %s", WindowList(), WindowName(window))
}

// WindowName writes a window in whole days where it is some ("28d", where
// PromQL would write "4w"), else as PromQL does ("1h30m").
func WindowName(d time.Duration) string {
	if d > 0 && d%Day == 0 {
		return fmt.Sprintf("%dd", d/Day)
	}
	return model.Duration(d).String()
}

// WindowList writes Windows as "28d or 30d".
func WindowList() string {
	names := make([]string, len(Windows))
	for i, w := range Windows {
		names[i] = WindowName(w)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseWindow reads a window written as PromQL writes durations ("30d").
func ParseWindow(s string) (time.Duration, error) {
	d, err := model.ParseDuration(s)
	return time.Duration(d), err
}
