package core

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/throttle"
)

// Metrics are the counters every protocol of the hub counts into. The
// hub package registers them; the server load gauge is not here (the
// exporter publishes the hub's Load per target).
type Metrics struct {
	Connections prometheus.Gauge
	Received    prometheus.Counter
	Sent        prometheus.Counter
	Panics      prometheus.Counter
	Throttled   *prometheus.CounterVec
}

// NewMetrics builds the counters, unregistered.
func NewMetrics() *Metrics {
	m := &Metrics{
		Connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hubprobe_hub_connections",
			Help: "Client connections of the embedded hub that completed the handshake and are open.",
		}),
		Received: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hubprobe_hub_messages_received_total",
			Help: "Hub protocol messages the embedded hub received from clients, pings included.",
		}),
		Sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hubprobe_hub_messages_sent_total",
			Help: "Hub protocol messages the embedded hub wrote to clients (a broadcast counts once per receiver), pings included.",
		}),
		Panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hubprobe_hub_panics_total",
			Help: "Panics recovered in the embedded hub; each closed the connection it happened on.",
		}),
		Throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hubprobe_hub_throttled_total",
			Help: "Requests and connections the embedded hub refused or closed for its connection quota or message rate limit.",
		}, []string{"reason"}),
	}
	// Both reasons are exported from the start, so rate() sees the first one.
	for _, reason := range []string{throttle.ConnectionLimit, throttle.MessageLimit} {
		m.Throttled.WithLabelValues(reason)
	}
	return m
}

// Collectors are the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Connections, m.Received, m.Sent, m.Panics, m.Throttled}
}
