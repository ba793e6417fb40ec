package alerts

import (
	"fmt"

	"github.com/hubprobe/hubprobe/internal/histogramql"
)

// targetScenario are the labels every per-scenario rule keeps: the scrape's
// job/instance labels are dropped, so two hubprobe replicas probing the
// same scenario add up instead of alerting twice.
const targetScenario = "target, scenario"

// byTargetScenario is the aggregation every per-scenario rule uses.
const byTargetScenario = "sum by (" + targetScenario + ")"

// The histograms the rules read. Each is read through package histogramql,
// which answers whether Prometheus stored it classic, native or both.
const (
	latencyHistogram   = "hubprobe_message_latency_seconds"
	hubTimeHistogram   = "hubprobe_message_hub_time_seconds"
	roundTripHistogram = "hubprobe_network_round_trip_seconds"
	connectHistogram   = "hubprobe_connect_duration_seconds"
	sendLagHistogram   = "hubprobe_send_lag_seconds"
)

// Names of the recorded series, level:metric:operation.
func (cfg Config) slowShareRecord() string {
	return "target_scenario:hubprobe_message_latency_slow:ratio_rate" + cfg.RateWindow
}

func (cfg Config) latencyP99Record() string {
	return "target_scenario:hubprobe_message_latency_seconds:p99_rate" + cfg.RateWindow
}

// hubTimeP99Record and roundTripP99Record are the two sides of a
// message's latency, which the latency alerts' descriptions weigh.
func (cfg Config) hubTimeP99Record() string {
	return "target_scenario:hubprobe_message_hub_time_seconds:p99_rate" + cfg.RateWindow
}

func (cfg Config) roundTripP99Record() string {
	return "target_scenario:hubprobe_network_round_trip_seconds:p99_rate" + cfg.RateWindow
}

func (cfg Config) lostShareRecord() string {
	return "target_scenario:hubprobe_messages_lost:ratio_rate" + cfg.RateWindow
}

func (cfg Config) connectFailureShareRecord() string {
	return "target_scenario:hubprobe_connection_failures:ratio_rate" + cfg.RateWindow
}

func (cfg Config) sendLagP99Record() string {
	return "target_scenario:hubprobe_send_lag_seconds:p99_rate" + cfg.RateWindow
}

func (cfg Config) runFailureShareRecord() string {
	return "target_scenario:hubprobe_runs_failed:ratio_rate" + cfg.RunFailureWindow
}

// ServerLoadRecord is the one series the server-load alert reads. Rebinding
// the alert to another source of server load (for example Azure Monitor's
// ServerLoad metric) means replacing this one recording rule.
const ServerLoadRecord = "target:hubprobe_server_load:ratio"

func recordingRules(cfg Config) []Rule {
	return append([]Rule{
		{Record: cfg.slowShareRecord(), Expr: cfg.slowShareExpr()},
		{Record: cfg.latencyP99Record(), Expr: cfg.p99Expr(latencyHistogram)},
		{Record: cfg.hubTimeP99Record(), Expr: cfg.p99Expr(hubTimeHistogram)},
		{Record: cfg.roundTripP99Record(), Expr: cfg.p99Expr(roundTripHistogram)},
		{Record: cfg.lostShareRecord(), Expr: cfg.shareExpr(
			"hubprobe_messages_lost_total", cfg.sumRate("hubprobe_messages_received_total"))},
		{Record: cfg.connectFailureShareRecord(), Expr: cfg.shareExpr(
			"hubprobe_connection_failures_total", histogramql.Count(targetScenario, cfg.windowRate, connectHistogram).Or())},
		{Record: cfg.sendLagP99Record(), Expr: cfg.p99Expr(sendLagHistogram)},
		{Record: cfg.runFailureShareRecord(), Expr: cfg.runFailureShareExpr()},
		{Record: ServerLoadRecord, Expr: "max by (target) (" + cfg.selector("hubprobe_server_load_ratio") + ")"},
	}, append(append(cfg.tierRecordingRules(), cfg.shardTotalRules()...), cfg.sloRecordingRules()...)...)
}

// slowShareExpr is the share of delivered messages slower than 1 s. It is
// exact, not interpolated, in either form of the histogram (see
// histogramql.ShareUnderOneSecond).
func (cfg Config) slowShareExpr() string {
	return fmt.Sprintf("1 - (\n%s\n)", either("  ", histogramql.ShareUnderOneSecond(targetScenario, cfg.windowRate, latencyHistogram)))
}

// p99Expr is the p99 of histogram per target and scenario, over
// RateWindow, from whichever form Prometheus stores.
func (cfg Config) p99Expr(histogram string) string {
	return either("", histogramql.Quantile(0.99, targetScenario, cfg.windowRate, histogram))
}

// either lays out both forms of a histogram quantity joined by `or` (see
// histogramql.Forms.Or), each form on its own line after indent.
func either(indent string, f histogramql.Forms) string {
	return fmt.Sprintf("%s%s\nor\n%s%s", indent, f.Native, indent, f.Classic)
}

// windowRate is rate() over RateWindow, the histogramql.Rate of the rules.
func (cfg Config) windowRate(series string, matchers ...string) string {
	return cfg.rate(cfg.RateWindow, series, matchers...)
}

// sumRate is a counter's rate over RateWindow per target and scenario.
func (cfg Config) sumRate(counter string) string {
	return fmt.Sprintf("%s (%s)", byTargetScenario, cfg.windowRate(counter))
}

// shareExpr is bad / (bad + good), where good is already a rate per target
// and scenario. The good side falls back to 0 × bad when its series does
// not exist yet (every attempt failed so far), otherwise the division would
// match nothing and hide exactly the worst case.
func (cfg Config) shareExpr(bad, goodRate string) string {
	badRate := cfg.sumRate(bad)
	return fmt.Sprintf("%s\n/\n(\n  %s\n+\n  (%s or %s * 0)\n)", badRate, badRate, goodRate, badRate)
}

// runFailureShareExpr is the share of finished runs that failed; skipped
// runs (an overlap with the previous run) count neither way.
func (cfg Config) runFailureShareExpr() string {
	return fmt.Sprintf("%s (%s)\n/\n%s (%s)",
		byTargetScenario, cfg.rate(cfg.RunFailureWindow, "hubprobe_runs_total", `result="failure"`),
		byTargetScenario, cfg.rate(cfg.RunFailureWindow, "hubprobe_runs_total", `result=~"success|failure"`))
}
