package monitor

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons a read fails, the values of the reason label.
const (
	ReasonAuth          = "auth"           // the credential could not sign in, or Azure refused its token (401)
	ReasonForbidden     = "forbidden"      // 403: no Monitoring Reader role on the resource
	ReasonNotFound      = "not_found"      // 404: no such resource, group or subscription
	ReasonThrottled     = "throttled"      // 429 or 529
	ReasonNetwork       = "network"        // no answer: DNS, TCP, TLS, timeout
	ReasonUnknownMetric = "unknown_metric" // 400 naming a metric the resource does not have
	ReasonEmptySeries   = "empty_series"   // an answer without a value for some metric
	ReasonBadResponse   = "bad_response"   // any other status, or a body that does not parse
)

// Reasons lists every reason; each target's series exist from its start.
var Reasons = []string{
	ReasonAuth, ReasonForbidden, ReasonNotFound, ReasonThrottled,
	ReasonNetwork, ReasonUnknownMetric, ReasonEmptySeries, ReasonBadResponse,
}

// Metrics are the series of every target's reader. Make them once with
// NewMetrics and hand them to each Start.
type Metrics struct {
	reads    *prometheus.CounterVec
	failures *prometheus.CounterVec
	usage    *usageCollector
}

// NewMetrics builds the reader metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, fmt.Errorf("monitor: nil registerer")
	}
	m := &Metrics{
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hubprobe_service_metrics_reads_total",
			Help: "Reads of the service's metrics from Azure Monitor, one query each.",
		}, []string{"target"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hubprobe_service_metrics_read_failures_total",
			Help: "Reads of the service's metrics from Azure Monitor that failed or came back without a value for some metric, by reason.",
		}, []string{"target", "reason"}),
		usage: newUsageCollector(),
	}
	for _, c := range []prometheus.Collector{m.reads, m.failures, m.usage} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("monitor: registering metrics: %w", err)
		}
	}
	return m, nil
}

// Forget deletes every series of target, for targets removed on reload.
func (m *Metrics) Forget(target string) {
	m.reads.DeleteLabelValues(target)
	m.failures.DeletePartialMatch(prometheus.Labels{"target": target})
}

// start creates target's counters at 0 and makes r its usage source.
func (m *Metrics) start(target string, r *Reader) {
	m.reads.WithLabelValues(target)
	for _, reason := range Reasons {
		m.failures.WithLabelValues(target, reason)
	}
	m.usage.set(target, r)
}

// exported is where one usage goes: its metric and, for a split one, the
// value of its extra label.
type exported struct {
	desc  *prometheus.Desc
	label string
}

// usageCollector reports each reader's latest values at scrape time, and
// their age then.
type usageCollector struct {
	exports map[usage]exported
	closes  *prometheus.Desc
	age     *prometheus.Desc

	mu      sync.RWMutex
	readers map[string]*Reader
}

func newUsageCollector() *usageCollector {
	gauge := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append([]string{"target"}, labels...), nil)
	}
	errors := gauge("hubprobe_service_errors_ratio", "Share of the service's operations that failed (SystemErrors: its own fault; UserErrors: the callers'), highest in the newest time grain Azure Monitor reported. Azure SignalR Service only.", "kind")
	return &usageCollector{
		exports: map[usage]exported{
			usageConnections:             {desc: gauge("hubprobe_service_connections", "Connections to the service, client and server ones, at their highest in the newest time grain Azure Monitor reported.")},
			usageQuotaUtilization:        {desc: gauge("hubprobe_service_connection_quota_utilization_ratio", "Connections over the tier's connection quota, 0 to 1, at their highest in the newest time grain Azure Monitor reported.")},
			usageInboundBytes:            {desc: gauge("hubprobe_service_inbound_bytes_per_second", "Bytes the service received per second, over the newest time grain Azure Monitor reported.")},
			usageOutboundBytes:           {desc: gauge("hubprobe_service_outbound_bytes_per_second", "Bytes the service sent per second, over the newest time grain Azure Monitor reported.")},
			usageOutboundMessages:        {desc: gauge("hubprobe_service_outbound_messages_per_second", "Messages the service sent per second, in the 2 KB units it counts them in, over the newest time grain Azure Monitor reported. Azure SignalR Service only.")},
			usageServerConnectionLatency: {desc: gauge("hubprobe_service_server_connection_latency_seconds", "Latency of the app servers' connections to the service, highest in the newest time grain Azure Monitor reported. Azure SignalR Service only.")},
			usageSystemErrors:            {desc: errors, label: "system"},
			usageUserErrors:              {desc: errors, label: "user"},
		},
		closes:  gauge("hubprobe_service_connection_closes_per_second", "Connections the service closed per second, by category, over the newest time grain Azure Monitor reported.", "category"),
		age:     gauge("hubprobe_service_metrics_age_seconds", "Seconds since the end of the newest time grain read from Azure Monitor (before any, since hubprobe started reading)."),
		readers: map[string]*Reader{},
	}
}

func (c *usageCollector) set(target string, r *Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readers[target] = r
}

// remove drops target's reader, unless another one replaced it already.
func (c *usageCollector) remove(target string, r *Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readers[target] == r {
		delete(c.readers, target)
	}
}

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	seen := map[*prometheus.Desc]bool{}
	for _, e := range c.exports {
		if !seen[e.desc] {
			seen[e.desc] = true
			ch <- e.desc
		}
	}
	ch <- c.closes
	ch <- c.age
}

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	targets := make([]string, 0, len(c.readers))
	for t := range c.readers {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	readers := make([]*Reader, len(targets))
	for i, t := range targets {
		readers[i] = c.readers[t]
	}
	c.mu.RUnlock()
	now := time.Now()
	for i, r := range readers {
		c.collectOne(ch, targets[i], r.snapshot(now))
	}
}

func (c *usageCollector) collectOne(ch chan<- prometheus.Metric, target string, s snapshot) {
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, s.age.Seconds(), target)
	for key, v := range s.values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if key.usage == usageCloses {
			ch <- prometheus.MustNewConstMetric(c.closes, prometheus.GaugeValue, v, target, key.category)
			continue
		}
		e, ok := c.exports[key.usage]
		if !ok {
			continue // server load goes through the exporter's own series
		}
		labels := []string{target}
		if e.label != "" {
			labels = append(labels, e.label)
		}
		ch <- prometheus.MustNewConstMetric(e.desc, prometheus.GaugeValue, v, labels...)
	}
}
