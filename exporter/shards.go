package exporter

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
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
		step: gaugeVec("capacity_step",
			"This process's figures of the last finished step of a capacity search, by figure, for a sharded search to sum over its shards.",
			"target", "scenario", "run", "step", "figure"),
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

// Figures of hubprobe_capacity_step. Every one is a count that adds up over
// shards: shards is 1 on each, so the sum says how many shards published.
const (
	FigureShards            = "shards"
	FigureConnections       = "connections"
	FigureFailedConnections = "failed_connections"
	FigureSenders           = "senders"
	FigureSent              = "sent"
	FigureExpected          = "expected"
	FigureReceived          = "received"
	FigureSlow              = "slow"
	FigureUnsent            = "unsent"
	FigureThrottled         = "throttled"
	FigureSaturated         = "saturated"
)

// stepFigures are a step's figures by name, the values of the figure label.
func stepFigures(f capacity.StepFigures) map[string]float64 {
	s := f.Step
	saturated := 0.0
	if f.Saturated {
		saturated = 1
	}
	return map[string]float64{
		FigureShards: 1, FigureConnections: float64(f.Connections), FigureFailedConnections: float64(s.FailedConnections),
		FigureSenders: float64(s.Senders), FigureSent: float64(s.Sent), FigureExpected: float64(s.Expected),
		FigureReceived: float64(s.Received), FigureSlow: float64(s.Slow), FigureUnsent: float64(s.Unsent),
		FigureThrottled: float64(s.Throttled), FigureSaturated: saturated,
	}
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
	for figure, v := range stepFigures(f) {
		vec.WithLabelValues(t, s, f.Run, step, figure).Set(v)
	}
}
