package alerts

import "fmt"

// AlertShardMissing is the alert for a sharded hubprobe with a shard gone.
const AlertShardMissing = "HubprobeShardMissing"

// perShard are the labels one shard's series carry and the others' do
// not: the scrape's instance, the Kubernetes pod, and hubprobe's own
// shard. Dropping them, and only them, adds a sharded scenario up to the
// one scenario it is, whatever else the scrape adds (job, namespace).
const perShard = "instance, pod, shard"

// shardTotals are the series whose sum over shards is what one unsharded
// process reports (see docs/scale-out.md): messages sent, received and lost
// since each shard started, and the connections of the last run.
var shardTotals = []string{"hubprobe_messages_sent_total", "hubprobe_messages_received_total", "hubprobe_messages_lost_total", "hubprobe_run_connections"}

// ShardTotalRecord names the record of metric's total over shards.
func ShardTotalRecord(metric string) string { return "target_scenario:" + metric + ":sum_shards" }

func (cfg Config) shardTotalRules() []Rule {
	rules := make([]Rule, 0, len(shardTotals))
	for _, m := range shardTotals {
		rules = append(rules, Rule{Record: ShardTotalRecord(m), Expr: fmt.Sprintf("sum without (%s) (%s)", perShard, cfg.selector(m))})
	}
	return rules
}

// shardMissingAlert fires when fewer distinct shards report than the
// shard count they were started with: a shard that is down leaves its
// share of every scenario unprobed, and every sum over shards short.
func (cfg Config) shardMissingAlert() alert {
	return alert{
		name: AlertShardMissing, severity: SeverityWarning, forDuration: "5m",
		expr: fmt.Sprintf("count without (shard) (max without (instance, pod) (%s))\n<\nmax without (instance, pod) (%s)",
			cfg.selector("hubprobe_shard_info"), cfg.selector("hubprobe_shard_count")),
		summary: "A shard of a sharded hubprobe is not reporting.",
		description: "Only {{ $value }} distinct shards of hubprobe job {{ $labels.job }} report, fewer than its shard count: " +
			"the missing shards' connections and senders are not probed and every total over shards is short.",
	}
}
