package grafana

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

const byScenario = "{{target}} / {{scenario}}"

// Overview is every target and scenario on one page, measured against the
// capacity definition: 99 % of messages under 1 s, server load under 70 %,
// and against the published limits of each target's tier.
func Overview() *dashboard.DashboardBuilder {
	d := newDashboard("hubprobe / overview", OverviewUID,
		"Every hub and scenario hubprobe probes, against the capacity definition: "+
			"99 % of messages under 1 s and server load under 70 %.").
		WithVariable(labelVariable("target", "target", "", true)).
		WithVariable(labelVariable("scenario", "scenario", `{target=~"$target"}`, true))
	d = d.WithRow(dashboard.NewRowBuilder("Capacity: 99 % of messages under 1 s, server load under 70 %"))
	for _, g := range append(capacityGraphs(), budgetOverviewGraph()) {
		d = d.WithPanel(g.panel())
	}
	d = d.WithRow(dashboard.NewRowBuilder("Traffic"))
	for _, g := range trafficGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithRow(dashboard.NewRowBuilder("Throttling, connections and runs"))
	for _, g := range connectionGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithPanel(runSuccessTimeline())
	d = d.WithRow(dashboard.NewRowBuilder("Tier headroom"))
	for _, g := range tierGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithPanel(tierTable())
	d = d.WithRow(dashboard.NewRowBuilder("Service (Azure Monitor)"))
	for _, g := range azureMonitorGraphs() {
		d = d.WithPanel(g.panel())
	}
	return d
}

func capacityGraphs() []graph {
	return []graph{{
		title: "p99 message latency",
		description: "99th percentile of send-to-receive latency over the rate interval, per target and scenario. " +
			"Capacity is exceeded when it crosses the red 1 s line; the orange line is the 0.7 s warning.",
		unit: units.Seconds, width: 12, min: ptr(0.0), limit: ptr(latencyLimitSeconds), warn: ptr(nearLimitSeconds),
		queries: []query{{quantile(0.99, latencyHistogram), byScenario}},
	}, {
		title: "Messages over 1 s",
		description: "Share of delivered messages that took more than 1 s, counted exactly at the histogram's 1 s bucket boundary " +
			"(native or classic, whichever Prometheus stores). " +
			"At most 1 % (red line) is within capacity.",
		unit: units.PercentUnit, width: 12, min: ptr(0.0), limit: ptr(slowShareMax),
		queries: []query{{slowShare(), byScenario}},
	}, {
		title: "Server load",
		description: "Server load the target reports (0–100 %): the embedded hub's own, or the service's ServerLoad from " +
			"Azure Monitor for a target with azure_monitor. Latency inside the service stays low below the 70 % line; " +
			"above it, scale up the unit count.",
		unit: units.PercentUnit, width: 12, min: ptr(0.0), max: ptr(1.0), limit: ptr(serverLoadMax),
		queries: []query{{`max by (target) (hubprobe_server_load_ratio{target=~"$target"})`, "{{target}}"}},
	}, {
		title: "Probe send lag (p99)",
		description: "How late hubprobe sent its messages against its own schedule (99th percentile). Above the 100 ms line " +
			"the probe is saturated and its latency figures measure itself, not the hub.",
		unit: units.Seconds, width: 12, min: ptr(0.0), limit: ptr(sendLagMaxSeconds),
		queries: []query{{quantile(0.99, sendLagHistogram), byScenario}},
	}}
}

func trafficGraphs() []graph {
	return []graph{{
		title:       "Messages per second",
		description: "Messages the probe sent, and deliveries it received (a broadcast counts once per receiving connection).",
		unit:        units.MessagesPerSecond, width: 12, min: ptr(0.0),
		queries: []query{
			{sumRate("hubprobe_messages_sent_total"), "sent " + byScenario},
			{sumRate("hubprobe_messages_received_total"), "received " + byScenario},
		},
	}, {
		title: "Lost messages",
		description: "Expected deliveries that did not arrive within the loss timeout, per second. " +
			"Lost messages never count as fast ones.",
		unit: units.MessagesPerSecond, width: 12, min: ptr(0.0),
		queries: []query{{sumRate("hubprobe_messages_lost_total"), byScenario}},
	}, {
		title: "Inbound bandwidth (probe to hub)",
		description: "Wire bits per second the probe sent to the hub: the hub's inbound traffic caused by the probe. " +
			"Compare the hub's total with its tier's inbound limit.",
		unit: units.BitsPerSecondSI, width: 12, min: ptr(0.0),
		queries: []query{{sumRate("hubprobe_sent_bytes_total") + " * 8", byScenario}},
	}, {
		title: "Outbound bandwidth (hub to probe)",
		description: "Wire bits per second the probe received from the hub: the hub's outbound traffic towards the probe. " +
			"Compare the hub's total with its tier's outbound limit.",
		unit: units.BitsPerSecondSI, width: 12, min: ptr(0.0),
		queries: []query{{sumRate("hubprobe_received_bytes_total") + " * 8", byScenario}},
	}}
}

func connectionGraphs() []graph {
	return []graph{{
		title: "Throttles",
		description: "Times per second the hub throttled the probe, by reason: HTTP 429, connection limit, " +
			"message limit, or a connection closed for throttling.",
		unit: units.CountsPerSecond, width: 12, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (target, scenario, reason) (%s)", rate("hubprobe_throttled_total")),
			byScenario + " {{reason}}"}},
	}, {
		title:       "Connect time",
		description: "Time from the start of negotiate to a completed handshake, for successful connections (median and p99).",
		unit:        units.Seconds, width: 12, min: ptr(0.0),
		queries: []query{
			{quantile(0.5, connectHistogram), "p50 " + byScenario},
			{quantile(0.99, connectHistogram), "p99 " + byScenario},
		},
	}, {
		title: "Connections of the last run",
		description: "Connections each scenario's last run opened, added up over every shard running it: " +
			"the scenario's configured connections when all shards ran.",
		unit: units.Short, width: 12, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (target, scenario) (%s)", metric("hubprobe_run_connections")), byScenario}},
	}, {
		title: "Shards",
		description: "Distinct shards reporting, against the shard count they were started with (1 for an unsharded hubprobe). " +
			"Fewer reporting than configured leaves a share of every scenario unprobed (HubprobeShardMissing).",
		unit: units.Short, width: 12, min: ptr(0.0),
		queries: []query{
			{"count by (job) (max by (job, shard) (hubprobe_shard_info))", "reporting {{job}}"},
			{"max by (job) (hubprobe_shard_count)", "configured {{job}}"},
		},
	}, {
		title: "Web PubSub event handler",
		description: "Requests hubprobe's Web PubSub event handler answered per second, by event and status: " +
			"the upstream echo's user events (200), the abuse-protection handshake (validate). 401 means the service " +
			"signs with an access key no target has (rotated?); 404, a hub no target names. Not per target: one handler serves every hub.",
		unit: units.RequestsPerSecond, width: 12, min: ptr(0.0),
		queries: []query{{"sum by (event, code) (rate(hubprobe_webpubsub_events_total[$__rate_interval]))", "{{event}} {{code}}"}},
	}}
}

// runSuccessTimeline shows whether each scenario's last run succeeded.
func runSuccessTimeline() *statetimeline.PanelBuilder {
	q := query{fmt.Sprintf("max by (target, scenario) (%s)", metric("hubprobe_run_success")), byScenario}
	return statetimeline.NewPanelBuilder().
		Title("Run success").
		Description("Outcome of each scenario's latest run: success, or failure (could not connect, or the run errored).").
		Unit(units.Bool).
		Datasource(datasourceRef()).
		Height(8).
		Span(24).
		ShowValue(common.VisibilityModeNever).
		Tooltip(multiTooltip()).
		Mappings(successMappings()).
		WithTarget(q.builder("A"))
}

func successMappings() []dashboard.ValueMapping {
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{
		Type: dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{
			"0": {Text: ptr("failure"), Color: ptr("red"), Index: ptr(int32(0))},
			"1": {Text: ptr("success"), Color: ptr("green"), Index: ptr(int32(1))},
		},
	}}}
}

// sumRate is the per-second rate of a counter, per target and scenario.
func sumRate(counter string) string {
	return fmt.Sprintf("sum by (target, scenario) (%s)", rate(counter))
}
