package exporter

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/slo"
	"github.com/hubprobe/hubprobe/throttle"
)

// throttle.Reasons and failureReasons are the bounded label values; their
// children are created up front so every series exists at 0, rate() works
// from the first scrape and alerts have something to evaluate.
var (
	failureReasons = [...]string{
		scenarios.FailNegotiate, scenarios.FailTransport, scenarios.FailHandshake,
		scenarios.FailTimeout, scenarios.FailThrottled, scenarios.FailClosed, scenarios.FailAuth,
	}
	runResults = [...]string{scenarios.ResultSuccess, scenarios.ResultFailure, scenarios.ResultSkipped, scenarios.ResultInconclusive}
)

// maxHTTPSeries bounds the cached (endpoint, code) children of one scenario.
const maxHTTPSeries = 64

// scenarioState is what all recorders of one (target, scenario) share.
type scenarioState struct {
	info      ScenarioInfo
	forgotten atomic.Bool

	httpMu    sync.Mutex
	httpCache atomic.Pointer[map[httpKey]prometheus.Counter]
}

type httpKey struct {
	endpoint string
	code     int
}

// recorder implements scenarios.Recorder with children resolved once, so a
// per-message call costs a few atomic operations and no allocation.
type recorder struct {
	m  *Metrics
	st *scenarioState

	sent, received, lost     prometheus.Counter
	duplicated, reordered    prometheus.Counter
	sentBytes, receivedBytes prometheus.Counter
	latency                  exemplarObserver
	sendLag, hubTime         prometheus.Observer
	connect, roundTrip       prometheus.Observer
	connectPhases            [len(clientconn.ConnectPhases)]prometheus.Observer
	active                   prometheus.Gauge
	reconnects               prometheus.Counter
	dropAge, reconnectTime   prometheus.Observer
	drops                    [len(clientconn.DropReasons)]prometheus.Counter
	throttled                [len(throttle.Reasons)]prometheus.Counter
	failures                 [len(failureReasons)]prometheus.Counter
	// within, over and lostDeliveries are hubprobe_expected_deliveries_total
	// by outcome.
	within, over, lostDeliveries prometheus.Counter
}

var _ scenarios.Recorder = (*recorder)(nil)

func newRecorder(m *Metrics, st *scenarioState) *recorder {
	t, s := st.info.Target, st.info.Scenario
	r := &recorder{
		m: m, st: st,
		sent:          m.sent.WithLabelValues(t, s),
		received:      m.received.WithLabelValues(t, s),
		lost:          m.lost.WithLabelValues(t, s),
		duplicated:    m.duplicated.WithLabelValues(t, s),
		reordered:     m.reordered.WithLabelValues(t, s),
		sentBytes:     m.sentBytes.WithLabelValues(t, s),
		receivedBytes: m.receivedBytes.WithLabelValues(t, s),
		latency:       m.latency.WithLabelValues(t, s).(exemplarObserver),
		sendLag:       m.sendLag.WithLabelValues(t, s),
		hubTime:       m.hubTime.WithLabelValues(t, s),
		connect:       m.connect.WithLabelValues(t, s),
		roundTrip:     m.roundTrip.WithLabelValues(t, s),
		active:        m.connsActive.WithLabelValues(t, s),
		reconnects:    m.reconnects.WithLabelValues(t, s),
		dropAge:       m.dropAge.WithLabelValues(t, s),
		reconnectTime: m.reconnectTime.WithLabelValues(t, s),

		within:         m.deliveries.WithLabelValues(t, s, slo.OutcomeWithin),
		over:           m.deliveries.WithLabelValues(t, s, slo.OutcomeOver),
		lostDeliveries: m.deliveries.WithLabelValues(t, s, slo.OutcomeLost),
	}
	for i, phase := range clientconn.ConnectPhases {
		r.connectPhases[i] = m.connectPhases.WithLabelValues(t, s, phase)
	}
	for i, reason := range throttle.Reasons {
		r.throttled[i] = m.throttled.WithLabelValues(t, s, reason)
	}
	for i, reason := range failureReasons {
		r.failures[i] = m.connFailures.WithLabelValues(t, s, reason)
	}
	for i, reason := range clientconn.DropReasons {
		r.drops[i] = m.drops.WithLabelValues(t, s, reason)
	}
	for _, result := range runResults {
		m.runs.WithLabelValues(t, s, result) // RunFinished counts them
	}
	return r
}

// Sent counts a message the hub took and observes its send lag.
func (r *recorder) Sent(lag time.Duration) {
	r.sent.Inc()
	r.sendLag.Observe(max(lag, 0).Seconds())
}

// Event counts what befell the scenario's connections and messages.
// Reasons outside the bounded sets (failureReasons, throttle.Reasons) are
// ignored so that the reason labels stay bounded.
func (r *recorder) Event(e scenarios.Event) {
	switch e.Kind {
	case scenarios.ConnectionOpened:
		r.active.Inc()
	case scenarios.ConnectionClosed:
		r.active.Dec()
	case scenarios.ConnectionFailed:
		countReason(r.failures[:], failureReasons[:], e.Reason)
	case scenarios.ConnectionDropped:
		if countReason(r.drops[:], clientconn.DropReasons[:], e.Reason) {
			r.dropAge.Observe(max(e.Duration, 0).Seconds())
		}
	case scenarios.Reconnected:
		r.reconnects.Inc()
		if e.Duration > 0 {
			r.reconnectTime.Observe(e.Duration.Seconds())
		}
	case scenarios.Throttled:
		countReason(r.throttled[:], throttle.Reasons[:], e.Reason)
	case scenarios.MessagesLost:
		addPositive(r.lost, e.Count)
		addPositive(r.lostDeliveries, e.Count)
	}
}

// countReason counts reason in the counter of its place in reasons, and
// nothing when it is not one of them; it reports whether it counted.
func countReason(counters []prometheus.Counter, reasons []string, reason string) bool {
	i := indexOf(reasons, reason)
	if i >= 0 {
		counters[i].Inc()
	}
	return i >= 0
}

// exemplarObserver is what a client_golang histogram is: an observer that
// can hang an exemplar on an observation.
type exemplarObserver interface {
	prometheus.Observer
	prometheus.ExemplarObserver
}

// Delivered counts a delivery and observes its latency and hub time, or
// counts a duplicate; the run's slowest deliveries carry an exemplar
// naming the message (exemplarLabels).
func (r *recorder) Delivered(d scenarios.Delivery) {
	if d.Duplicate {
		r.duplicated.Inc()
		return
	}
	r.received.Inc()
	if d.Reordered {
		r.reordered.Inc()
	}
	if slo.OutcomeOf(d.Latency) == slo.OutcomeWithin {
		r.within.Inc()
	} else {
		r.over.Inc()
	}
	if d.Slowest {
		r.latency.ObserveWithExemplar(d.Latency.Seconds(), exemplarLabels(d))
	} else {
		r.latency.Observe(d.Latency.Seconds())
	}
	if d.HasHubTime {
		r.hubTime.Observe(d.HubTime.Seconds())
	}
}

// exemplarLabels name a delivered message: its run (whose status page is
// /runs/{run_id}), its sender (the connection's index among the
// scenario's) and the sender's sequence number. Together they stay far
// below client_golang's 128 runes for an exemplar's labels.
func exemplarLabels(d scenarios.Delivery) prometheus.Labels {
	return prometheus.Labels{
		"run_id":   d.RunID,
		"sender":   strconv.Itoa(d.Sender),
		"sequence": strconv.FormatUint(uint64(d.Seq), 10),
	}
}

// Counters panic on negative increments; a zero or negative count carries
// no information, so such calls are dropped.
func (r *recorder) BytesSent(n int)           { addPositive(r.sentBytes, n) }
func (r *recorder) BytesReceived(n int)       { addPositive(r.receivedBytes, n) }
func (r *recorder) RoundTrip(d time.Duration) { r.roundTrip.Observe(max(d, 0).Seconds()) }

// Connected observes a connect's whole time and each phase's, every phase
// every time (0 for one it did not pass), so the phase histograms' sums
// add up to the connect histogram's.
func (r *recorder) Connected(t clientconn.ConnectTiming) {
	r.connect.Observe(max(t.Total(), 0).Seconds())
	for i, d := range t {
		r.connectPhases[i].Observe(max(d, 0).Seconds())
	}
}

func addPositive(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// HTTPResponse counts one negotiate or REST response. The code label is the
// numeric status; values outside 100–599 are recorded as "other".
func (r *recorder) HTTPResponse(endpoint string, code int) {
	key := httpKey{endpoint, code}
	if cache := r.st.httpCache.Load(); cache != nil {
		if c, ok := (*cache)[key]; ok {
			c.Inc()
			return
		}
	}
	r.httpCounter(key).Inc()
}

// httpCounter resolves and caches a child. The cache is copied on write:
// new (endpoint, code) pairs are rare, lookups are lock-free.
func (r *recorder) httpCounter(key httpKey) prometheus.Counter {
	r.st.httpMu.Lock()
	defer r.st.httpMu.Unlock()
	old := r.st.httpCache.Load()
	if old != nil {
		if c, ok := (*old)[key]; ok {
			return c
		}
	}
	c := r.m.httpRequests.WithLabelValues(r.st.info.Target, r.st.info.Scenario,
		endpointLabel(key.endpoint), codeLabel(key.code))
	if old != nil && len(*old) >= maxHTTPSeries {
		return c
	}
	next := make(map[httpKey]prometheus.Counter, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[key] = c
	r.st.httpCache.Store(&next)
	return c
}

func lenOf(m *map[httpKey]prometheus.Counter) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

func endpointLabel(endpoint string) string {
	if endpoint == "" {
		return "unknown"
	}
	return endpoint
}

func codeLabel(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

// RunFinished records a finished run of a scenario that has a recorder,
// as its Target and Scenario name it; the results of unknown or
// forgotten scenarios are dropped. Skipped runs only count; the last-run
// gauges keep describing the last run that actually ran. The last-run
// series are created here, not up front, so that no scenario looks
// failed (run_success 0) before its first run. Holding the catalogue
// lock keeps a concurrent Forget from being undone by the series
// created here.
func (m *Metrics) RunFinished(res scenarios.Result) {
	m.mu.Lock()
	st := m.states[scenarioKey{res.Target, res.Scenario}]
	if st == nil {
		m.mu.Unlock()
		return
	}
	if res.Kind == "" {
		res.Kind = st.info.Kind
	}
	m.runs.WithLabelValues(res.Target, res.Scenario, runResults[runResultIndex(res.Outcome)]).Inc()
	if res.Outcome != scenarios.ResultSkipped {
		m.setLastRun(st.info, res)
	}
	m.mu.Unlock()
	if m.history != nil {
		m.history.Add(res)
	}
}

// runResultIndex treats an unknown outcome as a failure: a run that cannot
// say it succeeded did not.
func runResultIndex(outcome string) int {
	if i := indexOf(runResults[:], outcome); i >= 0 {
		return i
	}
	return indexOf(runResults[:], scenarios.ResultFailure)
}

// setLastRun sets the last-run gauges of the scenario info names; the
// caller holds m.mu.
func (m *Metrics) setLastRun(info ScenarioInfo, res scenarios.Result) {
	t, s := info.Target, info.Scenario
	success := 0.0
	if res.Outcome == scenarios.ResultSuccess {
		success = 1
	}
	m.runSuccess.WithLabelValues(t, s).Set(success)
	m.runDuration.WithLabelValues(t, s).Set(res.Duration.Seconds())
	m.lastRun.WithLabelValues(t, s).Set(finishTime(res))
	m.runConns.WithLabelValues(t, s).Set(float64(res.Connections))
	m.runLatency.observe(info.key(), res)
}

func finishTime(res scenarios.Result) float64 {
	end := time.Now()
	if !res.Start.IsZero() {
		end = res.Start.Add(res.Duration)
	}
	return float64(end.UnixNano()) / 1e9
}
