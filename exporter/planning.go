package exporter

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/tiers"
)

// Directions of capacity figures: inbound is what clients send to the hub,
// outbound what the hub delivers to them (fan-out counted per receiver).
const (
	DirectionInbound  = "inbound"
	DirectionOutbound = "outbound"
)

// planningMetrics are the series that compare a hub with its capacity: what
// capacity searches found, and the published limits of declared tiers.
type planningMetrics struct {
	capacityMessages  *prometheus.GaugeVec
	capacityBandwidth *prometheus.GaugeVec
	capacitySteps     *prometheus.GaugeVec
	capacitySenders   *prometheus.GaugeVec
	capacityStop      *prometheus.GaugeVec
	tierLimit         *prometheus.GaugeVec
	tierInfo          *prometheus.GaugeVec

	log CapacityLog

	mu    sync.Mutex
	tiers map[string]tiers.TierLimits
}

func newPlanningMetrics() *planningMetrics {
	return &planningMetrics{
		capacityMessages: gaugeVec("capacity_messages_per_second",
			"Messages per second at the last step of the last capacity search that held to the capacity definition, by direction.",
			"target", "scenario", "direction"),
		capacityBandwidth: gaugeVec("capacity_bandwidth_bytes_per_second",
			"Wire bytes per second at the last step of the last capacity search that held to the capacity definition, by direction.",
			"target", "scenario", "direction"),
		capacitySteps: gaugeVec("capacity_steps",
			"Steps the last capacity search ran, the one that stopped it included.", scenarioLabels...),
		capacitySenders: gaugeVec("capacity_senders",
			"Sending connections at the capacity found by the last capacity search; 0 when its first step already failed.", scenarioLabels...),
		capacityStop: gaugeVec("capacity_stop_reason",
			"Why the last capacity search stopped: 1 for its reason, 0 for the others.", "target", "scenario", "reason"),
		tierLimit: gaugeVec("tier_limit",
			"Published limit of the target's declared tier, by resource (connections, or bytes or messages per second).",
			"target", "resource"),
		tierInfo: gaugeVec("tier_info", "The tier a target declares; always 1.", "target", "service", "units"),
		tiers:    map[string]tiers.TierLimits{},
	}
}

func (p *planningMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		p.capacityMessages, p.capacityBandwidth, p.capacitySteps, p.capacitySenders, p.capacityStop,
		p.tierLimit, p.tierInfo,
	}
}

// scenarioVecs are the vectors Forget cleans with the scenario's other series.
func (p *planningMetrics) scenarioVecs() []partialDeleter {
	return []partialDeleter{p.capacityMessages, p.capacityBandwidth, p.capacitySteps, p.capacitySenders, p.capacityStop}
}

// CapacityLog keeps the last capacity search of each scenario for the
// status page and its plots (statuspage.CapacityLog is one): a recorder
// adds every search it exports, and Forget drops a scenario's.
type CapacityLog interface {
	Add(target, scenario string, c capacity.Capacity)
	Forget(target, scenario string)
}

// WithCapacityLog makes every measured capacity search also land in l.
func WithCapacityLog(l CapacityLog) Option {
	return func(m *Metrics) { m.planning.log = l }
}

// SetTier exports the published limits of target's tier, replacing any it
// had; RemoveTier stops.
func (m *Metrics) SetTier(target string, l tiers.TierLimits) {
	p := m.planning
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.tiers[target]; ok && old != l {
		p.tierInfo.DeleteLabelValues(target, old.Service, strconv.Itoa(old.Units))
	}
	p.tiers[target] = l
	p.tierInfo.WithLabelValues(target, l.Service, strconv.Itoa(l.Units)).Set(1)
	for resource, v := range l.ByResource() {
		p.tierLimit.WithLabelValues(target, resource).Set(float64(v))
	}
}

// RemoveTier deletes the tier series of target.
func (m *Metrics) RemoveTier(target string) {
	p := m.planning
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.tiers, target)
	p.tierLimit.DeletePartialMatch(prometheus.Labels{"target": target})
	p.tierInfo.DeletePartialMatch(prometheus.Labels{"target": target})
}

// Tiers returns the targets with a declared tier and their limits.
func (m *Metrics) Tiers() map[string]tiers.TierLimits {
	p := m.planning
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]tiers.TierLimits, len(p.tiers))
	for t, l := range p.tiers {
		out[t] = l
	}
	return out
}

var _ capacity.Recorder = (*recorder)(nil)

// CapacityFound exports a measured capacity search. The figures are those
// of its last step that held; when none did they are 0.
func (r *recorder) CapacityFound(c capacity.Capacity) {
	if r.st.forgotten.Load() || !c.Measured() {
		return
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.st.forgotten.Load() {
		return
	}
	p, t, s := r.m.planning, r.st.info.Target, r.st.info.Scenario
	found, _ := c.Found()
	p.capacityMessages.WithLabelValues(t, s, DirectionInbound).Set(found.InboundMessagesPerSecond())
	p.capacityMessages.WithLabelValues(t, s, DirectionOutbound).Set(found.OutboundMessagesPerSecond())
	p.capacityBandwidth.WithLabelValues(t, s, DirectionInbound).Set(found.InboundBytesPerSecond())
	p.capacityBandwidth.WithLabelValues(t, s, DirectionOutbound).Set(found.OutboundBytesPerSecond())
	p.capacitySteps.WithLabelValues(t, s).Set(float64(len(c.Steps)))
	p.capacitySenders.WithLabelValues(t, s).Set(float64(found.Senders))
	for _, reason := range capacity.StopReasons {
		v := 0.0
		if reason == c.StopReason {
			v = 1
		}
		p.capacityStop.WithLabelValues(t, s, reason).Set(v)
	}
	if p.log != nil {
		p.log.Add(t, s, c)
	}
}
