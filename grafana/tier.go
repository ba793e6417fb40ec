package grafana

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// tierUsageMax is where the tier headroom alert fires: 70 % of a limit.
const tierUsageMax = 0.70

// targetOnly restricts a per-target series (no scenario label) to the
// picked targets.
func targetOnly(name string, matchers ...string) string {
	s := name + `{target=~"$target"`
	for _, m := range matchers {
		s += ", " + m
	}
	return s + "}"
}

// tierLimit is the declared tier's limit of one resource, per target.
func tierLimit(resource string) string {
	return fmt.Sprintf("max by (target) (%s)", targetOnly("hubprobe_tier_limit", `resource="`+resource+`"`))
}

// perTargetRate is the probe's rate of a counter over all its scenarios.
func perTargetRate(counter string) string {
	return fmt.Sprintf("sum by (target) (rate(%s[$__rate_interval]))", targetOnly(counter))
}

// tierUtilization is what hubprobe observes of each resource over the
// tier's limit: the rules' view without usage the service reports itself.
func tierUtilization() []query {
	connections := fmt.Sprintf("(max by (target) (%s) or on (target) sum by (target) (%s))",
		targetOnly("hubprobe_hub_connections"), targetOnly("hubprobe_connections_active"))
	share := func(usage, resource string) query {
		return query{fmt.Sprintf("%s / on (target) %s", usage, tierLimit(resource)), "{{target}} " + resource}
	}
	return []query{
		share(connections, "connections"),
		share(perTargetRate("hubprobe_sent_bytes_total"), "inbound_bytes_per_second"),
		share(perTargetRate("hubprobe_received_bytes_total"), "outbound_bytes_per_second"),
		share(perTargetRate("hubprobe_messages_sent_total"), "inbound_messages_per_second"),
		share(perTargetRate("hubprobe_messages_received_total"), "outbound_messages_per_second"),
	}
}

func tierGraphs() []graph {
	capacity := func(name string) string {
		return fmt.Sprintf("max by (target, scenario, direction) (%s)", metric(name))
	}
	return []graph{{
		title: "Tier utilization (observed by hubprobe)",
		description: "What hubprobe sees of each resource as a share of the declared tier's published limit: the embedded " +
			"hub's connection count (else the probe's connections) and the probe's own traffic. For a hub with other " +
			"clients only the service's own metrics are complete; the alert uses them where they are recorded. " +
			"Capacity searches do not count. The red line is 70 %.",
		unit: units.PercentUnit, width: 12, min: ptr(0.0), limit: ptr(tierUsageMax),
		queries: tierUtilization(),
	}, {
		title: "Capacity found by search (messages)",
		description: "Messages per second at the last step of each scenario's last capacity search that held to the " +
			"capacity definition, inbound (sent to the hub) and outbound (delivered).",
		unit: units.MessagesPerSecond, width: 12, min: ptr(0.0),
		queries: []query{{capacity("hubprobe_capacity_messages_per_second"), byScenario + " {{direction}}"}},
	}, {
		title: "Capacity found by search vs. tier bandwidth",
		description: "Wire bandwidth at the capacity each search found, by direction, next to the declared tier's " +
			"published inbound and outbound bandwidth.",
		unit: units.BytesPerSecondSI, width: 12, min: ptr(0.0),
		queries: []query{
			{capacity("hubprobe_capacity_bandwidth_bytes_per_second"), byScenario + " {{direction}}"},
			{fmt.Sprintf("max by (target, resource) (%s)",
				targetOnly("hubprobe_tier_limit", `resource=~"inbound_bytes_per_second|outbound_bytes_per_second"`)),
				"{{target}} tier {{resource}}"},
		},
	}, {
		title:       "Capacity search steps",
		description: "Steps each scenario's last capacity search ran, and the sending connections at the capacity it found.",
		unit:        units.Short, width: 12, min: ptr(0.0),
		queries: []query{
			{fmt.Sprintf("max by (target, scenario) (%s)", metric("hubprobe_capacity_steps")), "steps " + byScenario},
			{fmt.Sprintf("max by (target, scenario) (%s)", metric("hubprobe_capacity_senders")), "sending " + byScenario},
		},
	}}
}

// tierTable lists the declared tiers and why each search stopped.
func tierTable() *table.PanelBuilder {
	targets := []query{
		{fmt.Sprintf("max by (target, service, units) (%s)", targetOnly("hubprobe_tier_info")), ""},
		{fmt.Sprintf("max by (target, scenario, reason) (%s == 1)", metric("hubprobe_capacity_stop_reason")), ""},
	}
	p := table.NewPanelBuilder().
		Title("Declared tiers and capacity search stops").
		Description("The tier each target declares (service and units), and the reason each scenario's last capacity " +
			"search stopped: slow_messages, connection_failures or throttled broke the capacity definition; " +
			"all_sending or max_steps mean the ramp ended first.").
		Unit(units.NoUnit).
		Datasource(datasourceRef()).
		Height(8).
		Span(24)
	for i, q := range targets {
		p = p.WithTarget(prometheus.NewDataqueryBuilder().
			Expr(q.expr).
			Instant().
			Format(prometheus.PromQueryFormatTable).
			RefId(refID(i)).
			Datasource(datasourceRef()))
	}
	return p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
}
