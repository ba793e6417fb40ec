package exporter

import "github.com/prometheus/client_golang/prometheus"

// newWebPubSubEvents counts the answers of hubprobe's Web PubSub event
// handler. Its labels come from the handler's fixed vocabulary and the
// status code, never from a request.
func newWebPubSubEvents() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "webpubsub_events_total",
		Help: "Requests hubprobe's Web PubSub event handler answered, by event (validate, connect, connected, disconnected, user, other) and status code.",
	}, []string{"event", "code"})
}

// EventAnswered counts one answer of the Web PubSub event handler; Metrics
// is its eventhandler.Observer.
func (m *Metrics) EventAnswered(event string, code int) {
	m.webPubSubEvents.WithLabelValues(event, codeLabel(code)).Inc()
}
