// Package exporter is hubprobe's metric catalogue: it turns what scenario
// runs measure into Prometheus metrics and serves them at /metrics, beside
// the health, readiness and reload endpoints and whatever routes the
// daemon adds (the status pages of package statuspage). It knows nothing
// of wire protocols: scenarios report through scenarios.Recorder, which
// this package implements, and each finished run and capacity search also
// goes to the RunHistory and CapacityLog the pages show.
package exporter

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/scenarios"
)

const namespace = "hubprobe"

// Native histogram settings shared by every histogram: about 10 % relative
// resolution, bounded memory, and a reset at most once an hour so rate()
// over typical windows stays continuous.
const (
	nativeBucketFactor    = 1.1
	nativeMaxBucketNumber = 160
	nativeMinResetPeriod  = time.Hour
)

// latencyBuckets holds a bucket at exactly 1 s so the capacity rule
// ("99 % of messages under 1 s") is exact in PromQL, and one at 0.7 s for
// the warning threshold.
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, .7, 1, 2.5, 5, 10}

var connectBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// connectionAgeBuckets reach from a connection dropped at once to one
// that lived a day, through the minutes at which load balancers and
// proxies cut idle connections.
var connectionAgeBuckets = []float64{1, 10, 30, 60, 120, 300, 600, 1800, 3600, 14400, 43200, 86400}

// reconnectBuckets hold the official clients' retry delays (0, 2, 10 and
// 30 s) with room for a connect after each.
var reconnectBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 30, 45, 60, 120}

var sendLagBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

var scenarioLabels = []string{"target", "scenario"}

// ScenarioInfo names one configured scenario. Target and Scenario identify
// its series; Kind, Transport and Protocol only describe it and appear on
// hubprobe_scenario_info alone.
type ScenarioInfo struct {
	Target    string
	Scenario  string
	Kind      string
	Transport string
	Protocol  string
}

type scenarioKey struct{ target, scenario string }

func (s ScenarioInfo) key() scenarioKey { return scenarioKey{s.Target, s.Scenario} }

// Metrics is hubprobe's metric catalogue. Create it once with NewMetrics and
// hand each scenario the Recorder bound to its labels.
type Metrics struct {
	info          *prometheus.GaugeVec
	latency       *prometheus.HistogramVec
	sent          *prometheus.CounterVec
	received      *prometheus.CounterVec
	lost          *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	duplicated    *prometheus.CounterVec
	reordered     *prometheus.CounterVec
	sentBytes     *prometheus.CounterVec
	receivedBytes *prometheus.CounterVec
	throttled     *prometheus.CounterVec
	httpRequests  *prometheus.CounterVec
	connect       *prometheus.HistogramVec
	connectPhases *prometheus.HistogramVec
	roundTrip     *prometheus.HistogramVec
	hubTime       *prometheus.HistogramVec
	connFailures  *prometheus.CounterVec
	connsActive   *prometheus.GaugeVec
	reconnects    *prometheus.CounterVec
	drops         *prometheus.CounterVec
	dropAge       *prometheus.HistogramVec
	reconnectTime *prometheus.HistogramVec
	runs          *prometheus.CounterVec
	runSuccess    *prometheus.GaugeVec
	runDuration   *prometheus.GaugeVec
	lastRun       *prometheus.GaugeVec
	runConns      *prometheus.GaugeVec
	sendLag       *prometheus.HistogramVec
	runLatency    *runLatencySummary
	serverLoad    *serverLoadCollector
	buildInfo     prometheus.Gauge
	planning      *planningMetrics
	shards        shardMetrics
	objectives    objectiveMetrics

	shardIndex, shardCount int

	// webPubSubEvents counts the answers of the Web PubSub event handler.
	webPubSubEvents *prometheus.CounterVec
	history         RunHistory

	mu     sync.Mutex
	states map[scenarioKey]*scenarioState
}

// Option adjusts NewMetrics.
type Option func(*Metrics)

// RunHistory keeps finished runs for the status page
// (statuspage.History is one): a recorder adds every run it finishes, and
// Forget drops what the history keeps of a scenario.
type RunHistory interface {
	Add(res scenarios.Result)
	Forget(target, scenario string)
}

// WithHistory makes every finished run also land in h.
func WithHistory(h RunHistory) Option {
	return func(m *Metrics) { m.history = h }
}

// WithBuildInfo sets the labels of hubprobe_build_info. Without it they
// come from the binary's embedded build information.
func WithBuildInfo(b BuildInfo) Option {
	return func(m *Metrics) { m.buildInfo = newBuildInfoGauge(b) }
}

// NewMetrics builds the catalogue and registers it with reg.
func NewMetrics(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, fmt.Errorf("exporter: nil registerer")
	}
	m := newCatalogue()
	for _, opt := range opts {
		opt(m)
	}
	if m.buildInfo == nil {
		m.buildInfo = newBuildInfoGauge(ReadBuildInfo())
	}
	m.shards = newShardMetrics(m.shardIndex, m.shardCount)
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("exporter: registering metrics: %w", err)
		}
	}
	return m, nil
}

func newCatalogue() *Metrics {
	m := &Metrics{states: make(map[scenarioKey]*scenarioState)}
	m.info = gaugeVec("scenario_info", "What each configured scenario is; always 1.",
		"target", "scenario", "kind", "transport", "protocol")
	m.latency = histogramVec("message_latency_seconds",
		"Time from sending a message to receiving it, per delivered message.", latencyBuckets)
	m.sent = counterVec("messages_sent_total", "Messages the probe sent.")
	m.received = counterVec("messages_received_total", "Distinct expected message deliveries the probe received, fan-out counted per receiver.")
	m.lost = counterVec("messages_lost_total", "Expected deliveries, by message identity, not seen within the loss timeout.")
	m.deliveries = counterVec("expected_deliveries_total",
		"Expected deliveries by outcome: within_1s, over_1s, or lost (never seen within the loss timeout); the capacity SLI is within_1s over all.",
		"outcome")
	m.duplicated = counterVec("messages_duplicated_total", "Deliveries of a message the receiver had already seen.")
	m.reordered = counterVec("messages_reordered_total", "Deliveries behind a later message of the same sender to the same receiver.")
	m.sentBytes = counterVec("sent_bytes_total", "Bytes the probe wrote to the wire.")
	m.receivedBytes = counterVec("received_bytes_total", "Bytes the probe read from the wire.")
	m.throttled = counterVec("throttled_total", "Times the target throttled the probe, by reason.", "reason")
	m.httpRequests = counterVec("http_requests_total", "Negotiate and REST requests the probe made, by endpoint and status code.", "endpoint", "code")
	m.connect = histogramVec("connect_duration_seconds",
		"Time to open a probe connection: negotiate, transport and handshake.", connectBuckets)
	m.connectPhases = histogramVec("connect_phase_duration_seconds",
		"Time each phase of opening a probe connection took (0 for a phase it did not pass); the phases of a connection add up to its connect duration.",
		connectBuckets, "phase")
	m.roundTrip = histogramVec("network_round_trip_seconds",
		"Round trips of the probe connections' transport, measured with what the hub's code never sees: WebSocket ping to pong, or a request the connection dispatcher refuses at once.",
		latencyBuckets)
	m.hubTime = histogramVec("message_hub_time_seconds",
		"Time the hub itself took per delivered message: its latency less the network's share, half the sender's and half the receiver's latest round trip.",
		latencyBuckets)
	m.connFailures = counterVec("connection_failures_total", "Probe connections that failed to open or dropped, by reason.", "reason")
	m.connsActive = gaugeVec("connections_active", "Probe connections open now.", scenarioLabels...)
	m.reconnects = counterVec("reconnects_total", "Probe connections re-established after a drop.")
	m.drops = counterVec("connection_drops_total", "Probe connections that ended without the probe asking, by reason.", "reason")
	m.dropAge = histogramVec("connection_age_at_drop_seconds", "How long each dropped probe connection had been open.", connectionAgeBuckets)
	m.reconnectTime = histogramVec("reconnect_duration_seconds",
		"Time from a probe connection's drop until a message arrived on it again, once reconnected.", reconnectBuckets)
	m.runs = counterVec("runs_total", "Scenario runs by result: success, failure or skipped because the previous run overlapped.", "result")
	m.runSuccess = gaugeVec("run_success", "Whether the last run of the scenario succeeded (1) or failed (0).", scenarioLabels...)
	m.runDuration = gaugeVec("run_duration_seconds", "Wall time the last run of the scenario took.", scenarioLabels...)
	m.lastRun = gaugeVec("last_run_timestamp_seconds", "Unix time the last run of the scenario finished.", scenarioLabels...)
	m.runConns = gaugeVec("run_connections", "Connections the last run of the scenario opened: this shard's share when sharded.", scenarioLabels...)
	m.sendLag = histogramVec("send_lag_seconds",
		"How late the pacer sent each message against its schedule; high values mean the probe itself is saturated.", sendLagBuckets)
	m.runLatency = newRunLatencySummary()
	m.serverLoad = newServerLoadCollector()
	m.planning = newPlanningMetrics()
	m.webPubSubEvents = newWebPubSubEvents()
	m.objectives = newObjectiveMetrics()
	return m
}

func (m *Metrics) collectors() []prometheus.Collector {
	return append([]prometheus.Collector{
		m.info, m.latency, m.sent, m.received, m.lost, m.deliveries, m.duplicated, m.reordered, m.sentBytes, m.receivedBytes,
		m.throttled, m.httpRequests, m.connect, m.connectPhases, m.roundTrip, m.hubTime, m.connFailures, m.connsActive,
		m.reconnects, m.drops, m.dropAge, m.reconnectTime, m.runs, m.runSuccess, m.runDuration, m.lastRun, m.runConns, m.sendLag,
		m.runLatency, m.serverLoad, m.buildInfo, m.webPubSubEvents, m.objectives.ratio, m.objectives.window,
	}, append(m.planning.collectors(), m.shards.collectors()...)...)
}

// partialDeleter is what every client_golang vector offers to drop series.
type partialDeleter interface {
	DeletePartialMatch(prometheus.Labels) int
}

// vecs lists every vector whose series carry target and scenario labels,
// i.e. what Forget has to clean.
func (m *Metrics) vecs() []partialDeleter {
	return append([]partialDeleter{
		m.info, m.latency, m.sent, m.received, m.lost, m.deliveries, m.duplicated, m.reordered, m.sentBytes, m.receivedBytes,
		m.throttled, m.httpRequests, m.connect, m.connectPhases, m.roundTrip, m.hubTime, m.connFailures, m.connsActive,
		m.reconnects, m.drops, m.dropAge, m.reconnectTime, m.runs, m.runSuccess, m.runDuration, m.lastRun, m.runConns, m.sendLag,
		m.shards.step, m.objectives.ratio, m.objectives.window,
	}, m.planning.scenarioVecs()...)
}

// Recorder returns the recorder for one scenario, creating its series.
// Calling it again for the same target and scenario (e.g. after a reload
// that kept the scenario) shares the same series.
func (m *Metrics) Recorder(s ScenarioInfo) scenarios.Recorder {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[s.key()]
	if ok && st.info != s {
		m.info.DeleteLabelValues(infoLabelValues(st.info)...)
		st = nil
	}
	if st == nil {
		st = &scenarioState{info: s}
		m.states[s.key()] = st
	}
	m.info.WithLabelValues(infoLabelValues(s)...).Set(1)
	return newRecorder(m, st)
}

// Forget deletes every series of a scenario, for scenarios removed on
// reload. A recorder of the forgotten scenario used afterwards records
// nothing that is exported. If the same target and scenario were meanwhile
// registered with another kind, transport or protocol, the scenario lives
// on and only the old description is dropped, so a reload may call
// Recorder(new) and Forget(old) in either order.
func (m *Metrics) Forget(s ScenarioInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.states[s.key()]; ok {
		if st.info != s {
			m.info.DeleteLabelValues(infoLabelValues(s)...)
			return
		}
		st.forgotten.Store(true)
		delete(m.states, s.key())
	}
	labels := prometheus.Labels{"target": s.Target, "scenario": s.Scenario}
	for _, v := range m.vecs() {
		v.DeletePartialMatch(labels)
	}
	m.runLatency.forget(s.key())
	if m.history != nil {
		m.history.Forget(s.Target, s.Scenario)
	}
	if m.planning.log != nil {
		m.planning.log.Forget(s.Target, s.Scenario)
	}
}

// SetServerLoadSource makes hubprobe_server_load_ratio{target} report what
// load returns, read at every scrape. load must be cheap and safe for
// concurrent use; returning NaN means "unknown" and omits the series.
func (m *Metrics) SetServerLoadSource(target string, load func() float64) {
	m.serverLoad.set(target, load)
}

// RemoveServerLoadSource stops reporting the server load of target.
func (m *Metrics) RemoveServerLoadSource(target string) {
	m.serverLoad.remove(target)
}

func infoLabelValues(s ScenarioInfo) []string {
	return []string{s.Target, s.Scenario, s.Kind, s.Transport, s.Protocol}
}

func counterVec(name, help string, extraLabels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: name, Help: help,
	}, append(append([]string{}, scenarioLabels...), extraLabels...))
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: name, Help: help,
	}, labels)
}

func histogramVec(name, help string, buckets []float64, extraLabels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace:                       namespace,
		Name:                            name,
		Help:                            help,
		Buckets:                         buckets,
		NativeHistogramBucketFactor:     nativeBucketFactor,
		NativeHistogramMaxBucketNumber:  nativeMaxBucketNumber,
		NativeHistogramMinResetDuration: nativeMinResetPeriod,
	}, append(append([]string{}, scenarioLabels...), extraLabels...))
}
