package hub

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/hub/internal/core"
	"github.com/hubprobe/hubprobe/hub/internal/wpshub"
)

// newMetrics builds the hub's own counters and registers them with reg
// (none when reg is nil): those every protocol counts into, and the Web
// PubSub event handler's requests. The server load gauge is not here: the
// exporter publishes Load() per target, and NewLoadCollector serves the
// standalone hub.
func newMetrics(reg prometheus.Registerer) (*core.Metrics, *prometheus.CounterVec, error) {
	m, eventHandler := core.NewMetrics(), wpshub.NewEventHandlerMetric()
	if reg == nil {
		return m, eventHandler, nil
	}
	for _, c := range append(m.Collectors(), eventHandler) {
		if err := reg.Register(c); err != nil {
			return nil, nil, err
		}
	}
	return m, eventHandler, nil
}
