package alerts

import "fmt"

// Names of the tier headroom series.
const (
	// TierUsageRecord is what a target uses of each resource its tier
	// limits, labelled with resource like hubprobe_tier_limit.
	TierUsageRecord = "target:hubprobe_tier_usage:current"
	// TierUsageReportedRecord is where usage reported by the service itself
	// goes: Azure Monitor's connection count and traffic, which hubprobe
	// reads for a target with azure_monitor (reportedUsageRules). Where it
	// exists it takes the place of what the probe observes.
	TierUsageReportedRecord = "target:hubprobe_tier_usage:reported"
	// TierUtilizationRecord is usage over the tier's published limit.
	TierUtilizationRecord = "target:hubprobe_tier_utilization:ratio"
)

// tierUsage is one resource of hubprobe_tier_limit and what the probe and
// the embedded hub observe of it.
type tierUsage struct {
	resource, observed string
}

// tierUsages says, per resource, what hubprobe itself knows of a target's
// usage: the embedded hub's own connection count (every client, not only
// the probe's) or else the probe's connections at their peak, and the
// probe's traffic in each direction.
func (cfg Config) tierUsages() []tierUsage {
	window := cfg.RateWindow
	sumRate := func(metric string) string {
		return fmt.Sprintf("sum by (target) (%s)", cfg.rate(window, metric))
	}
	connections := fmt.Sprintf("max by (target) (max_over_time(%s[%s]))\nor on (target)\n  sum by (target) (max_over_time(%s[%s]))",
		cfg.selector("hubprobe_hub_connections"), window, cfg.selector("hubprobe_connections_active"), window)
	return []tierUsage{
		{"connections", connections},
		{"inbound_bytes_per_second", sumRate("hubprobe_sent_bytes_total")},
		{"outbound_bytes_per_second", sumRate("hubprobe_received_bytes_total")},
		{"inbound_messages_per_second", sumRate("hubprobe_messages_sent_total")},
		{"outbound_messages_per_second", sumRate("hubprobe_messages_received_total")},
	}
}

// tierRecordingRules record usage per resource (reported by the service
// where that exists, else observed), then usage over the tier's limit.
func (cfg Config) tierRecordingRules() []Rule {
	rules := cfg.reportedUsageRules()
	for _, u := range cfg.tierUsages() {
		expr := fmt.Sprintf("max by (target) (%s{resource=%q})\nor on (target)\n  %s", TierUsageReportedRecord, u.resource, u.observed)
		rules = append(rules, Rule{Record: TierUsageRecord, Expr: expr, Labels: map[string]string{"resource": u.resource}})
	}
	return append(rules, Rule{
		Record: TierUtilizationRecord,
		Expr: fmt.Sprintf("%s\n/ on (target, resource)\n  max by (target, resource) (%s > 0)",
			TierUsageRecord, cfg.selector("hubprobe_tier_limit")),
	})
}

// unlessCapacitySearch drops the scenarios that run capacity searches,
// known by the step count their searches export.
func (cfg Config) unlessCapacitySearch() string {
	return fmt.Sprintf("unless on (target, scenario)\n  %s", cfg.selector("hubprobe_capacity_steps"))
}

func (cfg Config) tierHeadroomAlert() alert {
	return alert{
		name: AlertTierHeadroomLow, severity: SeverityWarning, forDuration: "15m",
		expr:    fmt.Sprintf("%s > %g", TierUtilizationRecord, cfg.TierUsageMax),
		summary: fmt.Sprintf("Hub usage is above %s of its tier's published limit.", percent(cfg.TierUsageMax)),
		description: fmt.Sprintf("Target {{ $labels.target }} uses {{ $value | humanizePercentage }} of its tier's "+
			"{{ $labels.resource }} limit; plan for the next tier before usage passes %s.", percent(cfg.TierUsageMax)),
	}
}
