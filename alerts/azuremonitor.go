package alerts

import "fmt"

// AlertServiceMetricsStale fires when a target's figures from Azure Monitor
// stop coming.
const AlertServiceMetricsStale = "HubprobeServiceMetricsStale"

// ServiceThrottledReason is the reason label HubprobeThrottled carries when
// Azure Monitor, not the probe, saw the throttling: the service closed
// connections (any client's) in its Throttled close category.
const ServiceThrottledReason = "service_closed_throttled"

// reportedUsage maps each tier resource the service reports in Azure
// Monitor to hubprobe's metric of it. The service reports no inbound
// message rate; Web PubSub no outbound one.
var reportedUsage = []struct{ resource, metric string }{
	{"connections", "hubprobe_service_connections"},
	{"inbound_bytes_per_second", "hubprobe_service_inbound_bytes_per_second"},
	{"outbound_bytes_per_second", "hubprobe_service_outbound_bytes_per_second"},
	{"outbound_messages_per_second", "hubprobe_service_outbound_messages_per_second"},
}

// reportedUsageRules write TierUsageReportedRecord from the service's own
// figures, so that the tier headroom compares the service's real usage
// with its tier. They come before the rules that read the record.
func (cfg Config) reportedUsageRules() []Rule {
	rules := make([]Rule, 0, len(reportedUsage))
	for _, u := range reportedUsage {
		rules = append(rules, Rule{
			Record: TierUsageReportedRecord,
			Expr:   fmt.Sprintf("max by (target) (%s)", cfg.selector(u.metric)),
			Labels: map[string]string{"resource": u.resource},
		})
	}
	return rules
}

// serviceThrottledExpr is the HubprobeThrottled part of the service's own
// throttled closes over ThrottleWindow: their highest rate per second.
func (cfg Config) serviceThrottledExpr() string {
	return fmt.Sprintf("label_replace(\n  max by (target) (max_over_time(%s[%s])) > 0,\n  \"reason\", %q, \"\", \"\"\n)",
		cfg.selector("hubprobe_service_connection_closes_per_second", `category="throttled"`), cfg.ThrottleWindow, ServiceThrottledReason)
}

// serviceMetricsStaleAlert fires when the newest figure read from Azure
// Monitor for a target is too old: reads fail (the status page says why),
// or the service stopped publishing. HubprobeServerLoadHigh and the
// service's part of HubprobeTierHeadroomLow are blind meanwhile.
func (cfg Config) serviceMetricsStaleAlert() alert {
	return alert{
		name: AlertServiceMetricsStale, severity: SeverityWarning, forDuration: "5m",
		expr: fmt.Sprintf("max by (target) (%s) > %d",
			cfg.selector("hubprobe_service_metrics_age_seconds"), cfg.ServiceMetricsMaxAgeSeconds),
		summary: "hubprobe has no fresh server load or usage of the service from Azure Monitor.",
		description: "The newest figures hubprobe read from Azure Monitor for target {{ $labels.target }} are " +
			"{{ $value | humanizeDuration }} old" + fmt.Sprintf(" (limit %ds)", cfg.ServiceMetricsMaxAgeSeconds) +
			": HubprobeServerLoadHigh and HubprobeTierHeadroomLow cannot see the service. " +
			"hubprobe_service_metrics_read_failures_total and the status page say why.",
	}
}
