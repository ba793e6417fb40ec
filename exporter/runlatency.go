package exporter

import (
	"math"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/scenarios"
)

// runLatencySummary exports hubprobe_run_latency_seconds as a summary whose
// window is one run: the quantiles are the last run's exact values, while
// _count and _sum accumulate every delivery like any summary's.
type runLatencySummary struct {
	desc *prometheus.Desc

	mu     sync.Mutex
	series map[scenarioKey]*runSummary
}

type runSummary struct {
	count     uint64
	sum       float64
	quantiles map[float64]float64
}

func newRunLatencySummary() *runLatencySummary {
	return &runLatencySummary{
		desc: prometheus.NewDesc(namespace+"_run_latency_seconds",
			"Exact message latency quantiles of the last run of the scenario (quantile 1 is the maximum; NaN when the run delivered nothing); count and sum cover every run.",
			scenarioLabels, nil),
		series: make(map[scenarioKey]*runSummary),
	}
}

// observe records a finished run.
func (c *runLatencySummary) observe(k scenarioKey, res scenarios.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.series[k]
	if s == nil {
		s = &runSummary{}
		c.series[k] = s
	}
	s.count += uint64(max(res.Received, 0))
	s.sum += res.LatencySum.Seconds()
	s.quantiles = runQuantiles(res)
}

func (c *runLatencySummary) forget(k scenarioKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.series, k)
}

func (c *runLatencySummary) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *runLatencySummary) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	keys := make([]scenarioKey, 0, len(c.series))
	for k := range c.series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].target < keys[j].target || keys[i].target == keys[j].target && keys[i].scenario < keys[j].scenario
	})
	metrics := make([]prometheus.Metric, 0, len(keys))
	for _, k := range keys {
		s := c.series[k]
		metrics = append(metrics, prometheus.MustNewConstSummary(c.desc, s.count, s.sum, s.quantiles, k.target, k.scenario))
	}
	c.mu.Unlock()
	for _, m := range metrics {
		ch <- m
	}
}

// runQuantiles are NaN when the run delivered nothing: a latency of 0 would
// read as a perfect run.
func runQuantiles(res scenarios.Result) map[float64]float64 {
	q := res.Latency
	if res.Received == 0 {
		nan := math.NaN()
		return map[float64]float64{0.5: nan, 0.9: nan, 0.99: nan, 1: nan}
	}
	return map[float64]float64{0.5: q.P50.Seconds(), 0.9: q.P90.Seconds(), 0.99: q.P99.Seconds(), 1: q.Max.Seconds()}
}
