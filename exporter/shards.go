package exporter

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/capacity/stepquery"
)

// shardMetrics say which shard of how many this process is, so that rules
// can tell a missing shard, and carry the step figures a sharded capacity
// search sums over its shards.
type shardMetrics struct {
	count prometheus.Gauge
	info  prometheus.Gauge
	step  *prometheus.GaugeVec
}

func newShardMetrics(index, count int) shardMetrics {
	m := shardMetrics{
		count: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "shard_count",
			Help: "How many processes share every scenario (--shard.count); 1 when unsharded.",
		}),
		info: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "shard_info",
			Help:        "This process's shard of every scenario (--shard.index); always 1.",
			ConstLabels: prometheus.Labels{"shard": strconv.Itoa(index)},
		}),
		// Named by package stepquery, which reads the series back.
		step: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: stepquery.Series,
			Help: "This process's figures of the last finished step of a capacity search, by figure, for a sharded search to sum over its shards.",
		}, []string{"target", "scenario", "run", "step", "figure"}),
	}
	m.count.Set(float64(max(count, 1)))
	m.info.Set(1)
	return m
}

// WithShard tells the exporter which of count shards this process is.
// Without it the process is shard 0 of 1.
func WithShard(index, count int) Option {
	return func(m *Metrics) { m.shardIndex, m.shardCount = index, count }
}

func (s shardMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.count, s.info, s.step}
}

var _ capacity.StepPublisher = (*recorder)(nil)

// PublishStep replaces the scenario's step series with those of f: one
// step of one search is exported at a time.
func (r *recorder) PublishStep(f capacity.StepFigures) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.st.forgotten.Load() {
		return
	}
	t, s := r.st.info.Target, r.st.info.Scenario
	vec := r.m.shards.step
	vec.DeletePartialMatch(prometheus.Labels{"target": t, "scenario": s})
	step := strconv.Itoa(f.Step.Number)
	for figure, v := range stepquery.Figures(f) {
		vec.WithLabelValues(t, s, f.Run, step, figure).Set(v)
	}
}
