package exporter

import (
	"math"
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// serverLoadCollector reads each target's load function at scrape time, so
// the value is as fresh as the scrape and nothing polls in between.
type serverLoadCollector struct {
	desc *prometheus.Desc

	mu      sync.RWMutex
	sources map[string]func() float64
}

func newServerLoadCollector() *serverLoadCollector {
	return &serverLoadCollector{
		desc: prometheus.NewDesc(namespace+"_server_load_ratio",
			"Server load the target reports, 0 to 1; the capacity guidance is to stay below 0.7.",
			[]string{"target"}, nil),
		sources: make(map[string]func() float64),
	}
}

func (c *serverLoadCollector) set(target string, load func() float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if load == nil {
		delete(c.sources, target)
		return
	}
	c.sources[target] = load
}

func (c *serverLoadCollector) remove(target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sources, target)
}

func (c *serverLoadCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect calls the sources outside the lock so a slow source cannot block
// SetServerLoadSource.
func (c *serverLoadCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	targets := make([]string, 0, len(c.sources))
	loads := make(map[string]func() float64, len(c.sources))
	for t, f := range c.sources {
		targets = append(targets, t)
		loads[t] = f
	}
	c.mu.RUnlock()
	sort.Strings(targets)
	for _, t := range targets {
		v := loads[t]()
		if math.IsNaN(v) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, t)
	}
}
