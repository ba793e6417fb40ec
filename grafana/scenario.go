package grafana

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/units"

	"github.com/hubprobe/hubprobe/internal/histogramql"
)

// Scenario is the drill-down into one scenario of one target: the whole
// latency distribution, per-run quantiles, connections and HTTP calls.
func Scenario() *dashboard.DashboardBuilder {
	d := newDashboard("hubprobe / scenario", ScenarioUID,
		"One hubprobe scenario in detail: latency distribution, exact per-run quantiles, connections and HTTP calls.").
		WithVariable(labelVariable("target", "target", "", false)).
		WithVariable(labelVariable("scenario", "scenario", `{target=~"$target"}`, false))
	d = d.WithRow(dashboard.NewRowBuilder("Latency")).
		WithPanel(scenarioInfoTable()).
		WithPanel(latencyHeatmap())
	for _, g := range latencyGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithRow(dashboard.NewRowBuilder("Error budget"))
	for _, g := range errorBudgetGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithPanel(objectiveTable())
	d = d.WithRow(dashboard.NewRowBuilder("Where the time goes"))
	for _, g := range whereTheTimeGoesGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithRow(dashboard.NewRowBuilder("Connections"))
	for _, g := range scenarioConnectionGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithRow(dashboard.NewRowBuilder("Drops and reconnects"))
	for _, g := range dropGraphs() {
		d = d.WithPanel(g.panel())
	}
	d = d.WithRow(dashboard.NewRowBuilder("Runs and probe health"))
	for _, g := range runGraphs() {
		d = d.WithPanel(g.panel())
	}
	return d
}

// scenarioInfoTable shows what the scenario is: kind, transport, protocol.
func scenarioInfoTable() *table.PanelBuilder {
	expr := fmt.Sprintf("max by (target, scenario, kind, transport, protocol) (%s)", metric("hubprobe_scenario_info"))
	return table.NewPanelBuilder().
		Title("Scenario").
		Description("What this scenario is: its kind (echo, broadcast, group, …), transport and hub protocol.").
		Unit(units.NoUnit).
		Datasource(datasourceRef()).
		Height(8).
		Span(8).
		WithTarget(prometheus.NewDataqueryBuilder().
			Expr(expr).
			Instant().
			Format(prometheus.PromQueryFormatTable).
			RefId("A").
			Datasource(datasourceRef()))
}

// latencyHeatmap draws the latency histogram's buckets over time: the
// native histogram's where Prometheus stores it, else the classic ones.
// Grafana's heatmap draws either kind of answer.
func latencyHeatmap() *heatmap.PanelBuilder {
	expr := histogramql.Distribution(rate, latencyHistogram)
	return heatmap.NewPanelBuilder().
		Title("Message latency distribution").
		Description("Delivered messages per second in each latency bucket of the histogram: the fine native buckets " +
			"where Prometheus stores native histograms, else the classic ones. " +
			"Everything above 1 s counts against the 1 % capacity budget.").
		Unit(units.Seconds).
		Datasource(datasourceRef()).
		Height(8).
		Span(16).
		Calculate(false).
		YAxis(heatmap.NewYAxisConfigBuilder().Unit(units.Seconds)).
		CellValues(heatmap.NewCellValuesBuilder().Unit(units.MessagesPerSecond)).
		Color(heatmap.NewHeatmapColorOptionsBuilder().
			Mode(heatmap.HeatmapColorModeScheme).
			Scheme("Oranges").
			Fill("dark-orange").
			Scale(heatmap.HeatmapColorScaleExponential).
			Exponent(0.5).
			Steps(64)).
		Tooltip(heatmap.NewHeatmapTooltipBuilder().Mode(common.TooltipDisplayModeSingle).YHistogram(true)).
		RowsFrame(heatmap.NewRowsHeatmapOptionsBuilder().Layout(common.HeatmapCellLayoutLe)).
		WithTarget(prometheus.NewDataqueryBuilder().
			Expr(expr).
			LegendFormat("{{le}}").
			Format(prometheus.PromQueryFormatHeatmap).
			RefId("A").
			Datasource(datasourceRef()))
}

func latencyGraphs() []graph {
	// The max is quantile "1", which Prometheus 3 stores as "1.0".
	perRun := func(q string) string {
		return fmt.Sprintf("max(%s)", metric("hubprobe_run_latency_seconds", `quantile=~"`+q+`"`))
	}
	return []graph{{
		title: "Latency quantiles per run",
		description: "Exact latency quantiles of each run (p50, p90, p99 and the maximum), held until the next run. " +
			"The red line is the 1 s capacity limit for p99.",
		unit: units.Seconds, width: 12, min: ptr(0.0), limit: ptr(latencyLimitSeconds), warn: ptr(nearLimitSeconds),
		queries: []query{
			{perRun("0.5"), "p50"}, {perRun("0.9"), "p90"}, {perRun("0.99"), "p99"}, {perRun("1|1.0"), "max"},
		},
	}, {
		title: "Latency quantiles over time",
		description: "p50, p90 and p99 estimated from the histogram over the rate interval, " +
			"so they cover every run in the window. The dots on p99 are exemplars, each run's slowest messages: " +
			"their run_id links to the run's page on hubprobe's status page.",
		unit: units.Seconds, width: 12, min: ptr(0.0), limit: ptr(latencyLimitSeconds), warn: ptr(nearLimitSeconds),
		exemplarsOn: "p99",
		queries: []query{
			{quantile(0.5, latencyHistogram), "p50"},
			{quantile(0.9, latencyHistogram), "p90"},
			{quantile(0.99, latencyHistogram), "p99"},
		},
	}, {
		title:       "Messages over 1 s",
		description: "Exact share of delivered messages slower than 1 s; at most 1 % (red line) is within capacity.",
		unit:        units.PercentUnit, width: 12, min: ptr(0.0), limit: ptr(slowShareMax),
		queries: []query{{slowShare(), "over 1 s"}},
	}, {
		title:       "Messages",
		description: "Messages sent, deliveries received, lost, duplicated and reordered per second, each delivery counted by message identity.",
		unit:        units.MessagesPerSecond, width: 12, min: ptr(0.0),
		queries: []query{
			{sumRate("hubprobe_messages_sent_total"), "sent"},
			{sumRate("hubprobe_messages_received_total"), "received"},
			{sumRate("hubprobe_messages_lost_total"), "lost"},
			{sumRate("hubprobe_messages_duplicated_total"), "duplicated"},
			{sumRate("hubprobe_messages_reordered_total"), "reordered"},
		},
	}}
}

// whereTheTimeGoesGraphs split the scenario's time between the network and
// the hub, and its connects by phase.
func whereTheTimeGoesGraphs() []graph {
	return []graph{{
		title: "Network round trip against hub time",
		description: "Where a message's latency goes. Network: the connections' transport round trip (WebSocket ping to pong, " +
			"or for SSE and long polling a request the connection dispatcher refuses at once; on classic ASP.NET SignalR over SSE, " +
			"long polling and Forever Frame, its ping request). Hub: each message's latency " +
			"less the network's share (half the sender's and half the receiver's round trip). The side that grows is the slow one.",
		unit: units.Seconds, width: 12, min: ptr(0.0), limit: ptr(latencyLimitSeconds), warn: ptr(nearLimitSeconds),
		queries: []query{
			{quantile(0.5, roundTripHistogram), "network p50"},
			{quantile(0.99, roundTripHistogram), "network p99"},
			{quantile(0.5, hubTimeHistogram), "hub p50"},
			{quantile(0.99, hubTimeHistogram), "hub p99"},
		},
	}, {
		title: "Connect phases",
		description: "Mean time of each phase of opening a connection, stacked: they add up to the mean connect time. " +
			"dns, tcp and tls wherever a request opened a new connection; negotiate; redirect (an app server's hand-over " +
			"to Azure SignalR Service); upgrade (WebSocket 101, event stream, Forever Frame page or first poll, up to a classic " +
			"connection's init message); handshake (on classic ASP.NET SignalR, the start request).",
		unit: units.Seconds, width: 12, min: ptr(0.0), stacked: true,
		queries: []query{{histogramql.Mean("phase", rate, connectPhaseHistogram).Or(), "{{phase}}"}},
	}}
}

func scenarioConnectionGraphs() []graph {
	return []graph{{
		title:       "Connect time",
		description: "Negotiate, transport connect and handshake together, for successful connections (p50, p90, p99).",
		unit:        units.Seconds, width: 8, min: ptr(0.0),
		queries: []query{
			{quantile(0.5, connectHistogram), "p50"},
			{quantile(0.9, connectHistogram), "p90"},
			{quantile(0.99, connectHistogram), "p99"},
		},
	}, {
		title: "Connection failures by reason",
		description: "Failed connection attempts per second, by the phase that failed: negotiate, transport, handshake, " +
			"timeout, throttled or closed.",
		unit: units.CountsPerSecond, width: 8, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (reason) (%s)", rate("hubprobe_connection_failures_total")), "{{reason}}"}},
	}, {
		title: "Reconnects",
		description: "Connections the probe re-established per second after the hub or the network dropped them " +
			"(classic ASP.NET SignalR connections reconnect a dropped transport).",
		unit: units.CountsPerSecond, width: 8, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum(%s)", rate("hubprobe_reconnects_total")), "reconnects"}},
	}, {
		title:       "Open connections",
		description: "Probe connections to the hub open now; between runs this drops to zero for scenarios that reconnect each run.",
		unit:        units.Short, width: 8, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum(%s)", metric("hubprobe_connections_active")), "open"}},
	}, {
		title: "HTTP responses by endpoint and code",
		description: "Negotiate and REST API calls per second, by endpoint and status code. 429 means throttled; " +
			"401/403 usually means an expired or wrong access key or token.",
		unit: units.RequestsPerSecond, width: 8, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (endpoint, code) (%s)", rate("hubprobe_http_requests_total")),
			"{{endpoint}} {{code}}"}},
	}, {
		title:       "Throttles by reason",
		description: "Times per second the hub throttled this scenario: HTTP 429, connection limit, message limit, closed.",
		unit:        units.CountsPerSecond, width: 8, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (reason) (%s)", rate("hubprobe_throttled_total")), "{{reason}}"}},
	}}
}

// dropGraphs show the connections that ended without the probe asking,
// mostly held ones (kind: held), beside the service's own count of the
// connections it closed.
func dropGraphs() []graph {
	return []graph{{
		title: "Connection drops by reason",
		description: "Probe connections per second that ended without the probe asking, by why: the server's close " +
			"(server_close, server_error, server_reconnect, disconnected), a quota (throttled), silence (server_timeout, " +
			"keepalive), an HTTP status, a refused reconnect, bad bytes (protocol) or the transport.",
		unit: units.CountsPerSecond, width: 12, min: ptr(0.0), stacked: true,
		queries: []query{{fmt.Sprintf("sum by (reason) (%s)", rate("hubprobe_connection_drops_total")), "{{reason}}"}},
	}, {
		title: "Probe drops beside the service's closes",
		description: "The probe's drops per second, all reasons, beside the connections Azure Monitor says the " +
			"service closed per second by category (targets with azure_monitor): drops the service counts as " +
			"normal closes are the network's or the client's, throttled ones hit real clients too.",
		unit: units.CountsPerSecond, width: 12, min: ptr(0.0),
		queries: []query{
			{fmt.Sprintf("sum(%s)", rate("hubprobe_connection_drops_total")), "probe drops"},
			{fmt.Sprintf("max by (category) (%s)", targetOnly("hubprobe_service_connection_closes_per_second")),
				"service closed {{category}}"},
		},
	}, {
		title:       "Connection age at the drop",
		description: "How long the dropped connections had been open (p50, p90): drops at a steady age point at an idle or lifetime limit on the path.",
		unit:        units.Seconds, width: 12, min: ptr(0.0),
		queries: []query{
			{quantile(0.5, dropAgeHistogram), "p50"},
			{quantile(0.9, dropAgeHistogram), "p90"},
		},
	}, {
		title:       "Time to reconnect",
		description: "From a held connection's drop to the first message it received again (p50, p99), on its official client's retry schedule.",
		unit:        units.Seconds, width: 12, min: ptr(0.0),
		queries: []query{
			{quantile(0.5, reconnectHistogram), "p50"},
			{quantile(0.99, reconnectHistogram), "p99"},
		},
	}}
}

func runGraphs() []graph {
	return []graph{{
		title:       "Runs by result",
		description: "Runs started per second by result: success, failure, or skipped because the previous run was still going.",
		unit:        units.OpsPerSecond, width: 8, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (result) (%s)", rate("hubprobe_runs_total")), "{{result}}"}},
	}, {
		title:       "Run duration and age",
		description: "Wall-clock duration of the latest run, and the time since it finished; a growing age means the scenario stopped running.",
		unit:        units.Seconds, width: 8, min: ptr(0.0),
		queries: []query{
			{fmt.Sprintf("max(%s)", metric("hubprobe_run_duration_seconds")), "duration"},
			{fmt.Sprintf("time() - max(%s)", metric("hubprobe_last_run_timestamp_seconds")), "since last run"},
		},
	}, {
		title: "Probe send lag",
		description: "How late the probe sent messages against its schedule (p50 and p99). Above the 100 ms line the probe " +
			"is saturated: check its CPU before trusting the latency panels.",
		unit: units.Seconds, width: 8, min: ptr(0.0), limit: ptr(sendLagMaxSeconds),
		queries: []query{
			{quantile(0.5, sendLagHistogram), "p50"},
			{quantile(0.99, sendLagHistogram), "p99"},
		},
	}, {
		title: "Capacity search: last step",
		description: "For a capacity_search scenario, the messages of the last step its search finished, added up over every " +
			"shard: sent, expected, received, and received after 1 s or more.",
		unit: units.Short, width: 24, min: ptr(0.0),
		queries: []query{{fmt.Sprintf("sum by (step, figure) (%s)", metric("hubprobe_capacity_step", `figure=~"sent|expected|received|slow"`)),
			"step {{step}} {{figure}}"}},
	}}
}
