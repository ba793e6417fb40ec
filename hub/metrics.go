package hub

import (
	"github.com/hubprobe/hubprobe/throttle"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the hub's own counters. The server load gauge is not here: the
// exporter publishes Load() per target, and NewLoadCollector serves the
// standalone hub.
type metrics struct {
	connections prometheus.Gauge
	received    prometheus.Counter
	sent        prometheus.Counter
	panics      prometheus.Counter
	throttled   *prometheus.CounterVec
	upstream    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hubprobe_hub_connections",
			Help: "Client connections of the embedded hub that completed the handshake and are open.",
		}),
		received: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hubprobe_hub_messages_received_total",
			Help: "Hub protocol messages the embedded hub received from clients, pings included.",
		}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hubprobe_hub_messages_sent_total",
			Help: "Hub protocol messages the embedded hub wrote to clients (a broadcast counts once per receiver), pings included.",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hubprobe_hub_panics_total",
			Help: "Panics recovered in the embedded hub; each closed the connection it happened on.",
		}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hubprobe_hub_throttled_total",
			Help: "Requests and connections the embedded hub refused or closed for its connection quota or message rate limit.",
		}, []string{"reason"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hubprobe_hub_event_handler_requests_total",
			Help: "Requests the embedded hub's Web PubSub emulation sent to its event handler, by request (validate, event) and result (ok, refused, error).",
		}, []string{"request", "result"}),
	}
	// Both reasons are exported from the start, so rate() sees the first one.
	for _, reason := range []string{throttle.ConnectionLimit, throttle.MessageLimit} {
		m.throttled.WithLabelValues(reason)
	}
	for _, request := range []string{"validate", "event"} {
		for _, result := range []string{upstreamOK, upstreamRefused, upstreamError} {
			m.upstream.WithLabelValues(request, result)
		}
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.connections, m.received, m.sent, m.panics, m.throttled, m.upstream} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
