package grafana

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// serviceMetricsMaxAgeSeconds is where HubprobeServiceMetricsStale fires.
const serviceMetricsMaxAgeSeconds = 900

// perTargetMax is a per-target gauge of the service's own metrics.
func perTargetMax(name string, matchers ...string) string {
	return fmt.Sprintf("max by (target) (%s)", targetOnly(name, matchers...))
}

// azureMonitorGraphs show what the service itself reports to Azure Monitor,
// for targets with azure_monitor.
func azureMonitorGraphs() []graph {
	return append(serviceUsageGraphs(), serviceHealthGraphs()...)
}

// serviceUsageGraphs are the service's usage against its tier.
func serviceUsageGraphs() []graph {
	share := func(metric, resource string) query {
		return query{fmt.Sprintf("%s / on (target) %s", perTargetMax(metric), tierLimit(resource)), "{{target}} " + resource}
	}
	return []graph{{
		title: "Tier utilization (reported by the service)",
		description: "What the service reports to Azure Monitor of each resource, as a share of the declared tier's " +
			"published limit: every client's connections and traffic, not only the probe's. HubprobeTierHeadroomLow " +
			"reads these where they exist. The red line is 70 %.",
		unit: units.PercentUnit, width: 12, min: ptr(0.0), limit: ptr(tierUsageMax),
		queries: []query{
			share("hubprobe_service_connections", "connections"),
			share("hubprobe_service_inbound_bytes_per_second", "inbound_bytes_per_second"),
			share("hubprobe_service_outbound_bytes_per_second", "outbound_bytes_per_second"),
			share("hubprobe_service_outbound_messages_per_second", "outbound_messages_per_second"),
		},
	}, {
		title: "Service connections",
		description: "Connections to the service, client and server ones, at their highest in each minute Azure Monitor " +
			"reports, next to the tier's connection limit.",
		unit: units.Short, width: 12, min: ptr(0.0),
		queries: []query{
			{perTargetMax("hubprobe_service_connections"), "{{target}}"},
			{tierLimit("connections"), "{{target}} tier limit"},
		},
	}, {
		title: "Service bandwidth",
		description: "Bytes per second the service received (inbound, from clients and app servers) and sent (outbound), " +
			"as Azure Monitor reports them, next to the tier's published limits.",
		unit: units.BytesPerSecondSI, width: 12, min: ptr(0.0),
		queries: []query{
			{perTargetMax("hubprobe_service_inbound_bytes_per_second"), "{{target}} inbound"},
			{perTargetMax("hubprobe_service_outbound_bytes_per_second"), "{{target}} outbound"},
			{fmt.Sprintf("max by (target, resource) (%s)",
				targetOnly("hubprobe_tier_limit", `resource=~"inbound_bytes_per_second|outbound_bytes_per_second"`)),
				"{{target}} tier {{resource}}"},
		},
	}, {
		title: "Service messages and closed connections",
		description: "Messages the service sent per second, in the 2 KB units it counts (SignalR only), and connections " +
			"it closed per second by category: throttled ones mean real clients are being throttled.",
		unit: units.CountsPerSecond, width: 12, min: ptr(0.0),
		queries: []query{
			{perTargetMax("hubprobe_service_outbound_messages_per_second"), "{{target}} messages out"},
			{fmt.Sprintf("max by (target, category) (%s)", targetOnly("hubprobe_service_connection_closes_per_second")),
				"{{target}} closed {{category}}"},
		},
	}}
}

// serviceHealthGraphs are the service's errors and how fresh its figures are.
func serviceHealthGraphs() []graph {
	return []graph{{
		title: "Service errors and connection quota",
		description: "Share of the service's operations that failed, its own (system) and its callers' (user), and " +
			"connections over its quota, at their highest in each minute (errors: SignalR only).",
		unit: units.PercentUnit, width: 12, min: ptr(0.0),
		queries: []query{
			{fmt.Sprintf("max by (target, kind) (%s)", targetOnly("hubprobe_service_errors_ratio")), "{{target}} {{kind}} errors"},
			{perTargetMax("hubprobe_service_connection_quota_utilization_ratio"), "{{target}} quota used"},
		},
	}, {
		title:       "App server connection latency",
		description: "Latency of the app servers' connections to the service, highest in each minute (SignalR only).",
		unit:        units.Seconds, width: 12, min: ptr(0.0),
		queries: []query{{perTargetMax("hubprobe_service_server_connection_latency_seconds"), "{{target}}"}},
	}, {
		title: "Azure Monitor data age",
		description: "Seconds since the end of the newest minute hubprobe read from Azure Monitor. Azure publishes a " +
			"minute a few minutes late; above the red line HubprobeServiceMetricsStale fires and the service's server " +
			"load is not known.",
		unit: units.Seconds, width: 12, min: ptr(0.0), limit: ptr(float64(serviceMetricsMaxAgeSeconds)),
		queries: []query{{perTargetMax("hubprobe_service_metrics_age_seconds"), "{{target}}"}},
	}, {
		title: "Azure Monitor reads",
		description: "Queries hubprobe sent to Azure Monitor per second, and the failed ones by reason: forbidden " +
			"(no Monitoring Reader role), throttled, not_found, auth, network, unknown_metric, empty_series, bad_response. " +
			"The status page names the last failure.",
		unit: units.RequestsPerSecond, width: 12, min: ptr(0.0),
		queries: []query{
			{fmt.Sprintf("sum by (target) (rate(%s[$__rate_interval]))", targetOnly("hubprobe_service_metrics_reads_total")), "{{target}} reads"},
			{fmt.Sprintf("sum by (target, reason) (rate(%s[$__rate_interval]))", targetOnly("hubprobe_service_metrics_read_failures_total")),
				"{{target}} failed: {{reason}}"},
		},
	}}
}
