package daemon

import (
	"maps"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/azure/monitor"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/statuspage"
)

// Handler serves /metrics (the daemon's registry and the embedded hubs'
// own metrics), the health, readiness and reload endpoints, the status
// pages and the Web PubSub event handler. Ready stays nil, always ready:
// New returns only once the configuration is applied.
func (d *Daemon) Handler() http.Handler {
	routes := statuspage.Routes(statuspage.Options{
		History:   d.history,
		Capacity:  d.capacity,
		Scenarios: d.statuses,
		ServiceMetrics: func() []monitor.Status {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.readers.statuses()
		},
		Version: d.opts.Build.Version,
	})
	maps.Copy(routes, d.parts.events.Routes())
	return exporter.NewHandler(exporter.HandlerOptions{
		Gatherer: prometheus.Gatherers{d.reg, d.parts.hubs},
		Reload:   d.Reload,
		Routes:   routes,
	})
}

// statuses lists the configured scenarios for the status page.
func (d *Daemon) statuses() []statuspage.ScenarioStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.applied == nil {
		return nil
	}
	return statuspage.ScenarioStatuses(d.applied.Scenarios)
}
