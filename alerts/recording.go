package alerts

import "fmt"

// sloBucket selects the le="1" bucket of hubprobe_message_latency_seconds.
// Prometheus 2 ingests that label as "1" from the text format but as "1.0"
// from protobuf, and Prometheus 3 always normalises it to "1.0"; matching
// both keeps the rule right on either.
const sloBucket = `le=~"1|1.0"`

// byTargetScenario is the aggregation every per-scenario rule uses: the
// scrape's job/instance labels are dropped, so two hubprobe replicas probing
// the same scenario add up instead of alerting twice.
const byTargetScenario = "sum by (target, scenario)"

// Names of the recorded series, level:metric:operation.
func (cfg Config) slowShareRecord() string {
	return "target_scenario:hubprobe_message_latency_slow:ratio_rate" + cfg.RateWindow
}

func (cfg Config) latencyP99Record() string {
	return "target_scenario:hubprobe_message_latency_seconds:p99_rate" + cfg.RateWindow
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
		{Record: cfg.latencyP99Record(), Expr: cfg.quantileExpr(0.99, "hubprobe_message_latency_seconds_bucket")},
		{Record: cfg.lostShareRecord(), Expr: cfg.shareExpr(
			"hubprobe_messages_lost_total", "hubprobe_messages_received_total")},
		{Record: cfg.connectFailureShareRecord(), Expr: cfg.shareExpr(
			"hubprobe_connection_failures_total", "hubprobe_connect_duration_seconds_count")},
		{Record: cfg.sendLagP99Record(), Expr: cfg.quantileExpr(0.99, "hubprobe_send_lag_seconds_bucket")},
		{Record: cfg.runFailureShareRecord(), Expr: cfg.runFailureShareExpr()},
		{Record: ServerLoadRecord, Expr: "max by (target) (" + cfg.selector("hubprobe_server_load_ratio") + ")"},
	}, cfg.tierRecordingRules()...)
}

// slowShareExpr is the share of delivered messages slower than 1 s. It is
// exact, not interpolated, because the histogram has a bucket at 1 s.
func (cfg Config) slowShareExpr() string {
	return fmt.Sprintf("1 - (\n  %s (%s)\n/\n  %s (%s)\n)",
		byTargetScenario, cfg.rate(cfg.RateWindow, "hubprobe_message_latency_seconds_bucket", sloBucket),
		byTargetScenario, cfg.rate(cfg.RateWindow, "hubprobe_message_latency_seconds_count"))
}

func (cfg Config) quantileExpr(q float64, bucket string) string {
	return fmt.Sprintf("histogram_quantile(%g, sum by (target, scenario, le) (%s))",
		q, cfg.rate(cfg.RateWindow, bucket))
}

// shareExpr is bad / (bad + good). The good side falls back to 0 × bad when
// its series does not exist yet (every attempt failed so far), otherwise the
// division would match nothing and hide exactly the worst case.
func (cfg Config) shareExpr(bad, good string) string {
	badRate := fmt.Sprintf("%s (%s)", byTargetScenario, cfg.rate(cfg.RateWindow, bad))
	goodRate := fmt.Sprintf("%s (%s)", byTargetScenario, cfg.rate(cfg.RateWindow, good))
	return fmt.Sprintf("%s\n/\n(\n  %s\n+\n  (%s or %s * 0)\n)", badRate, badRate, goodRate, badRate)
}

// runFailureShareExpr is the share of finished runs that failed; skipped
// runs (an overlap with the previous run) count neither way.
func (cfg Config) runFailureShareExpr() string {
	return fmt.Sprintf("%s (%s)\n/\n%s (%s)",
		byTargetScenario, cfg.rate(cfg.RunFailureWindow, "hubprobe_runs_total", `result="failure"`),
		byTargetScenario, cfg.rate(cfg.RunFailureWindow, "hubprobe_runs_total", `result=~"success|failure"`))
}
