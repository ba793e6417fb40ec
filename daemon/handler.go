package daemon

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/exporter"
)

// Handler serves /metrics (the daemon's registry and the embedded hubs'
// own metrics), the health, readiness and reload endpoints, the status
// page and the Web PubSub event handler. Ready stays nil, always ready:
// New returns only once the configuration is applied.
func (d *Daemon) Handler() http.Handler {
	return exporter.NewHandler(exporter.HandlerOptions{
		Gatherer:  prometheus.Gatherers{d.reg, d.parts.hubs},
		Reload:    d.Reload,
		History:   d.history,
		Capacity:  d.capacity,
		Scenarios: d.statuses,
		ServiceMetrics: func() []monitor.Status {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.readers.statuses()
		},
		Version: d.opts.Build.Version,
		Routes:  d.parts.events.Routes(),
	})
}

// statuses lists the configured scenarios for the status page.
func (d *Daemon) statuses() []exporter.ScenarioStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.applied == nil {
		return nil
	}
	return exporter.ScenarioStatuses(d.applied.Scenarios)
}
