package exporter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/statuspage"
	"github.com/hubprobe/hubprobe/throttle"
)

var echoWS = ScenarioInfo{Target: "hub-a", Scenario: "echo-ws", Kind: "echo", Transport: "websockets", Protocol: "json"}

// latencies of the nine delivered messages: one of them (1.2 s) breaks the
// 1 s capacity threshold, one sits exactly on the 0.7 s warning bucket.
var latencies = []time.Duration{
	3 * time.Millisecond, 8 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond,
	90 * time.Millisecond, 200 * time.Millisecond, 600 * time.Millisecond, 700 * time.Millisecond,
	1200 * time.Millisecond,
}

var runStart = time.Unix(1700000000, 0)

func failedRun() scenarios.Result {
	return scenarios.Result{
		Target: echoWS.Target, Scenario: echoWS.Scenario, Kind: echoWS.Kind, RunID: "r1",
		Start: runStart, Duration: 5 * time.Second,
		Connections: 2, Sent: 10, Received: 9, Expected: 10, Lost: 1,
		SlowMessages: 1,
		Latency: scenarios.Quantiles{
			P50: 90 * time.Millisecond, P90: 700 * time.Millisecond,
			P99: 1200 * time.Millisecond, Max: 1200 * time.Millisecond,
		},
		LatencySum: 2500 * time.Millisecond,
		Outcome:    scenarios.ResultFailure,
		Error:      `1 of 10 messages lost; server said <closed> & "throttled"`,
	}
}

// feed plays one run's worth of events into rec, the recorder of info's
// scenario, and the run's result, failedRun, into m.
func feed(m *Metrics, rec scenarios.Recorder, info ScenarioInfo) {
	rec.HTTPResponse("negotiate", 429)
	rec.Event(scenarios.Event{Kind: scenarios.Throttled, Reason: throttle.HTTP429})
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionFailed, Reason: scenarios.FailThrottled})
	rec.HTTPResponse("negotiate", 200)
	rec.HTTPResponse("negotiate", 200)
	for _, timing := range connectTimings {
		rec.Connected(timing)
	}
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionOpened})
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionOpened})
	for i := range 10 {
		rec.Sent(sendLags[i])
		rec.BytesSent(100)
	}
	for _, d := range roundTrips {
		rec.RoundTrip(d)
	}
	for i, l := range latencies {
		rec.Delivered(delivery(i, l))
		rec.BytesReceived(120)
	}
	rec.Event(scenarios.Event{Kind: scenarios.MessagesLost, Count: 1})
	rec.Delivered(scenarios.Delivery{Duplicate: true})
	rec.Delivered(scenarios.Delivery{Duplicate: true})
	rec.Event(scenarios.Event{Kind: scenarios.Throttled, Reason: throttle.ConnectionLimit})
	rec.Event(scenarios.Event{Kind: scenarios.Throttled, Reason: "made_up_reason"}) // ignored: keeps the label bounded
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionFailed, Reason: scenarios.FailClosed})
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionClosed})
	rec.Event(scenarios.Event{Kind: scenarios.Reconnected})
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionDropped, Reason: clientconn.DropServerReconnect, Duration: 90 * time.Second})
	rec.Event(scenarios.Event{Kind: scenarios.ConnectionDropped, Reason: "made_up_reason", Duration: time.Hour}) // ignored, age too
	rec.Event(scenarios.Event{Kind: scenarios.Reconnected, Duration: 2500 * time.Millisecond})
	res := failedRun()
	res.Target, res.Scenario, res.Kind = info.Target, info.Scenario, info.Kind
	m.RunFinished(res)
}

// sendLags are the lags of feed's ten sends: all on time but two, 2 ms
// and 300 ms late.
var sendLags = [10]time.Duration{8: 2 * time.Millisecond, 9: 300 * time.Millisecond}

// connectTimings are the phases of the two connects: one on a warm
// connection with no lookup, one through a negotiate redirect that
// dialled everything anew. 30 and 120 ms in all.
var connectTimings = []clientconn.ConnectTiming{
	{0, 5 * time.Millisecond, 0, 10 * time.Millisecond, 0, 10 * time.Millisecond, 5 * time.Millisecond},
	{20 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond},
}

// roundTrips the connections measured, 2 ms each; from the second
// delivery on, each delivery's hub time is its latency less 2 ms.
var roundTrips = []time.Duration{2 * time.Millisecond, 2 * time.Millisecond}

// delivery is the i-th delivery of feed: the first arrives before any
// round trip was measured, the fourth behind a later message of its
// sender, and the last, the slowest, carries an exemplar.
func delivery(i int, latency time.Duration) scenarios.Delivery {
	d := scenarios.Delivery{Latency: latency, RunID: "r1", Sender: 1, Seq: uint32(i), Slowest: i == len(latencies)-1, Reordered: i == 3}
	if i > 0 {
		d.HubTime, d.HasHubTime = latency-2*time.Millisecond, true
	}
	return d
}

// histogramText is the text exposition of a histogram observed with
// values: its classic buckets and their cumulative counts, its sum and
// count. labels come before le.
func histogramText(name, labels string, buckets []float64, values ...float64) string {
	var b strings.Builder
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	for _, le := range append(buckets, math.Inf(1)) {
		n := 0
		for _, v := range values {
			if v <= le {
				n++
			}
		}
		fmt.Fprintf(&b, "%s_bucket{%s,le=%q} %d\n", name, labels, strconv.FormatFloat(le, 'g', -1, 64), n)
	}
	fmt.Fprintf(&b, "%s_sum{%s} %s\n%s_count{%s} %d\n", name, labels, strconv.FormatFloat(sum, 'g', -1, 64), name, labels, len(values))
	return b.String()
}

// connectPhaseExposition is hubprobe_connect_phase_duration_seconds after
// feed: every phase observed at every connect.
func connectPhaseExposition() string {
	text := "# HELP hubprobe_connect_phase_duration_seconds Time each phase of opening a probe connection took (0 for a phase it did not pass); the phases of a connection add up to its connect duration.\n" +
		"# TYPE hubprobe_connect_phase_duration_seconds histogram\n"
	for i, phase := range clientconn.ConnectPhases {
		var values []float64
		for _, timing := range connectTimings {
			values = append(values, timing[i].Seconds())
		}
		text += histogramText("hubprobe_connect_phase_duration_seconds", `phase="`+phase+`",`+wantLabels, connectBuckets, values...)
	}
	return text
}

// hubTimeExposition and roundTripExposition are the hub time and round
// trip histograms after feed.
func hubTimeExposition() string {
	var values []float64
	for i, l := range latencies {
		if d := delivery(i, l); d.HasHubTime {
			values = append(values, d.HubTime.Seconds())
		}
	}
	return "# HELP hubprobe_message_hub_time_seconds Time the hub itself took per delivered message: its latency less the network's share, half the sender's and half the receiver's latest round trip.\n" +
		"# TYPE hubprobe_message_hub_time_seconds histogram\n" +
		histogramText("hubprobe_message_hub_time_seconds", wantLabels, latencyBuckets, values...)
}

// dropExposition is what feed's drop and reconnects leave: one drop for a
// server's close allowing reconnect after 90 s, every other reason at 0,
// and one reconnect timed at 2.5 s (the other came without a time).
func dropExposition() string {
	var b strings.Builder
	b.WriteString("# HELP hubprobe_connection_drops_total Probe connections that ended without the probe asking, by reason.\n" +
		"# TYPE hubprobe_connection_drops_total counter\n")
	for _, reason := range clientconn.DropReasons {
		n := 0
		if reason == clientconn.DropServerReconnect {
			n = 1
		}
		fmt.Fprintf(&b, "hubprobe_connection_drops_total{reason=%q,%s} %d\n", reason, wantLabels, n)
	}
	b.WriteString("# HELP hubprobe_connection_age_at_drop_seconds How long each dropped probe connection had been open.\n" +
		"# TYPE hubprobe_connection_age_at_drop_seconds histogram\n" +
		histogramText("hubprobe_connection_age_at_drop_seconds", wantLabels, connectionAgeBuckets, 90))
	b.WriteString("# HELP hubprobe_reconnect_duration_seconds Time from a probe connection's drop until a message arrived on it again, once reconnected.\n" +
		"# TYPE hubprobe_reconnect_duration_seconds histogram\n" +
		histogramText("hubprobe_reconnect_duration_seconds", wantLabels, reconnectBuckets, 2.5))
	return b.String()
}

func roundTripExposition() string {
	var values []float64
	for _, d := range roundTrips {
		values = append(values, d.Seconds())
	}
	return "# HELP hubprobe_network_round_trip_seconds Round trips of the probe connections' transport, measured with what the hub's code never sees: WebSocket ping to pong, or a request the connection dispatcher refuses at once.\n" +
		"# TYPE hubprobe_network_round_trip_seconds histogram\n" +
		histogramText("hubprobe_network_round_trip_seconds", wantLabels, latencyBuckets, values...)
}

func latencySum() string {
	sum := 0.0
	for _, l := range latencies {
		sum += l.Seconds()
	}
	return strconv.FormatFloat(sum, 'g', -1, 64)
}

func newTestMetrics(t *testing.T, opts ...Option) (*prometheus.Registry, *Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	opts = append([]Option{WithBuildInfo(BuildInfo{Version: "1.2.3", Revision: "abc123", GoVersion: "go1.26.8"})}, opts...)
	m, err := NewMetrics(reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// wantLabels is in the order the text format prints labels: by name, with
// le and quantile last.
const wantLabels = `scenario="echo-ws",target="hub-a"`

// recorderExposition is all that /metrics shows after feed: every series of
// the scenario, and the build info.
var recorderExposition = `
# HELP hubprobe_scenario_info What each configured scenario is; always 1.
# TYPE hubprobe_scenario_info gauge
hubprobe_scenario_info{kind="echo",protocol="json",scenario="echo-ws",target="hub-a",transport="websockets"} 1
# HELP hubprobe_message_latency_seconds Time from sending a message to receiving it, per delivered message.
# TYPE hubprobe_message_latency_seconds histogram
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.005"} 1
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.01"} 2
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.025"} 3
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.05"} 4
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.1"} 5
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.25"} 6
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.5"} 6
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="0.7"} 8
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="1"} 8
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="2.5"} 9
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="5"} 9
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="10"} 9
hubprobe_message_latency_seconds_bucket{` + wantLabels + `,le="+Inf"} 9
hubprobe_message_latency_seconds_sum{` + wantLabels + `} ` + latencySum() + `
hubprobe_message_latency_seconds_count{` + wantLabels + `} 9
# HELP hubprobe_messages_sent_total Messages the probe sent.
# TYPE hubprobe_messages_sent_total counter
hubprobe_messages_sent_total{` + wantLabels + `} 10
# HELP hubprobe_messages_received_total Distinct expected message deliveries the probe received, fan-out counted per receiver.
# TYPE hubprobe_messages_received_total counter
hubprobe_messages_received_total{` + wantLabels + `} 9
# HELP hubprobe_messages_lost_total Expected deliveries, by message identity, not seen within the loss timeout.
# TYPE hubprobe_messages_lost_total counter
hubprobe_messages_lost_total{` + wantLabels + `} 1
# HELP hubprobe_expected_deliveries_total Expected deliveries by outcome: within_1s, over_1s, or lost (never seen within the loss timeout); the capacity SLI is within_1s over all.
# TYPE hubprobe_expected_deliveries_total counter
hubprobe_expected_deliveries_total{outcome="lost",` + wantLabels + `} 1
hubprobe_expected_deliveries_total{outcome="over_1s",` + wantLabels + `} 1
hubprobe_expected_deliveries_total{outcome="within_1s",` + wantLabels + `} 8
# HELP hubprobe_messages_duplicated_total Deliveries of a message the receiver had already seen.
# TYPE hubprobe_messages_duplicated_total counter
hubprobe_messages_duplicated_total{` + wantLabels + `} 2
# HELP hubprobe_messages_reordered_total Deliveries behind a later message of the same sender to the same receiver.
# TYPE hubprobe_messages_reordered_total counter
hubprobe_messages_reordered_total{` + wantLabels + `} 1
# HELP hubprobe_sent_bytes_total Bytes the probe wrote to the wire.
# TYPE hubprobe_sent_bytes_total counter
hubprobe_sent_bytes_total{` + wantLabels + `} 1000
# HELP hubprobe_received_bytes_total Bytes the probe read from the wire.
# TYPE hubprobe_received_bytes_total counter
hubprobe_received_bytes_total{` + wantLabels + `} 1080
# HELP hubprobe_throttled_total Times the target throttled the probe, by reason.
# TYPE hubprobe_throttled_total counter
hubprobe_throttled_total{reason="http_429",` + wantLabels + `} 1
hubprobe_throttled_total{reason="connection_limit",` + wantLabels + `} 1
hubprobe_throttled_total{reason="message_limit",` + wantLabels + `} 0
hubprobe_throttled_total{reason="closed_throttled",` + wantLabels + `} 0
# HELP hubprobe_http_requests_total Negotiate and REST requests the probe made, by endpoint and status code.
# TYPE hubprobe_http_requests_total counter
hubprobe_http_requests_total{code="200",endpoint="negotiate",` + wantLabels + `} 2
hubprobe_http_requests_total{code="429",endpoint="negotiate",` + wantLabels + `} 1
# HELP hubprobe_connect_duration_seconds Time to open a probe connection: negotiate, transport and handshake.
# TYPE hubprobe_connect_duration_seconds histogram
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="0.01"} 0
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="0.025"} 0
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="0.05"} 1
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="0.1"} 1
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="0.25"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="0.5"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="1"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="2.5"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="5"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="10"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="30"} 2
hubprobe_connect_duration_seconds_bucket{` + wantLabels + `,le="+Inf"} 2
hubprobe_connect_duration_seconds_sum{` + wantLabels + `} 0.15
hubprobe_connect_duration_seconds_count{` + wantLabels + `} 2
# HELP hubprobe_connection_failures_total Probe connections that failed to open or dropped, by reason.
# TYPE hubprobe_connection_failures_total counter
hubprobe_connection_failures_total{reason="auth",` + wantLabels + `} 0
hubprobe_connection_failures_total{reason="negotiate",` + wantLabels + `} 0
hubprobe_connection_failures_total{reason="transport",` + wantLabels + `} 0
hubprobe_connection_failures_total{reason="handshake",` + wantLabels + `} 0
hubprobe_connection_failures_total{reason="timeout",` + wantLabels + `} 0
hubprobe_connection_failures_total{reason="throttled",` + wantLabels + `} 1
hubprobe_connection_failures_total{reason="closed",` + wantLabels + `} 1
# HELP hubprobe_connections_active Probe connections open now.
# TYPE hubprobe_connections_active gauge
hubprobe_connections_active{` + wantLabels + `} 1
# HELP hubprobe_reconnects_total Probe connections re-established after a drop.
# TYPE hubprobe_reconnects_total counter
hubprobe_reconnects_total{` + wantLabels + `} 2
# HELP hubprobe_runs_total Scenario runs by result: success, failure or skipped because the previous run overlapped.
# TYPE hubprobe_runs_total counter
hubprobe_runs_total{result="success",` + wantLabels + `} 0
hubprobe_runs_total{result="failure",` + wantLabels + `} 1
hubprobe_runs_total{result="inconclusive",` + wantLabels + `} 0
hubprobe_runs_total{result="skipped",` + wantLabels + `} 0
# HELP hubprobe_run_success Whether the last run of the scenario succeeded (1) or failed (0).
# TYPE hubprobe_run_success gauge
hubprobe_run_success{` + wantLabels + `} 0
# HELP hubprobe_run_duration_seconds Wall time the last run of the scenario took.
# TYPE hubprobe_run_duration_seconds gauge
hubprobe_run_duration_seconds{` + wantLabels + `} 5
# HELP hubprobe_last_run_timestamp_seconds Unix time the last run of the scenario finished.
# TYPE hubprobe_last_run_timestamp_seconds gauge
hubprobe_last_run_timestamp_seconds{` + wantLabels + `} 1700000005
# HELP hubprobe_run_latency_seconds Exact message latency quantiles of the last run of the scenario (quantile 1 is the maximum; NaN when the run delivered nothing); count and sum cover every run.
# TYPE hubprobe_run_latency_seconds summary
hubprobe_run_latency_seconds{` + wantLabels + `,quantile="0.5"} 0.09
hubprobe_run_latency_seconds{` + wantLabels + `,quantile="0.9"} 0.7
hubprobe_run_latency_seconds{` + wantLabels + `,quantile="0.99"} 1.2
hubprobe_run_latency_seconds{` + wantLabels + `,quantile="1"} 1.2
hubprobe_run_latency_seconds_sum{` + wantLabels + `} 2.5
hubprobe_run_latency_seconds_count{` + wantLabels + `} 9
# HELP hubprobe_send_lag_seconds How late the pacer sent each message against its schedule; high values mean the probe itself is saturated.
# TYPE hubprobe_send_lag_seconds histogram
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.001"} 8
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.0025"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.005"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.01"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.025"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.05"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.1"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.25"} 9
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="0.5"} 10
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="1"} 10
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="2.5"} 10
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="5"} 10
hubprobe_send_lag_seconds_bucket{` + wantLabels + `,le="+Inf"} 10
hubprobe_send_lag_seconds_sum{` + wantLabels + `} 0.302
hubprobe_send_lag_seconds_count{` + wantLabels + `} 10
# HELP hubprobe_build_info Version, revision and Go version hubprobe was built with; always 1.
# TYPE hubprobe_build_info gauge
hubprobe_build_info{goversion="go1.26.8",revision="abc123",version="1.2.3"} 1
# HELP hubprobe_run_connections Connections the last run of the scenario opened: this shard's share when sharded.
# TYPE hubprobe_run_connections gauge
hubprobe_run_connections{` + wantLabels + `} 2
# HELP hubprobe_shard_count How many processes share every scenario (--shard.count); 1 when unsharded.
# TYPE hubprobe_shard_count gauge
hubprobe_shard_count 1
# HELP hubprobe_shard_info This process's shard of every scenario (--shard.index); always 1.
# TYPE hubprobe_shard_info gauge
hubprobe_shard_info{shard="0"} 1
`

func TestRecorderExposition(t *testing.T) {
	reg, m := newTestMetrics(t)
	feed(m, m.Recorder(echoWS), echoWS)
	want := recorderExposition + connectPhaseExposition() + hubTimeExposition() + roundTripExposition() + dropExposition()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// TestCapacityRuleFromBuckets checks the PromQL capacity rule reads the
// exported buckets right: 1 of 9 deliveries took 1 s or more.
func TestCapacityRuleFromBuckets(t *testing.T) {
	reg, m := newTestMetrics(t)
	feed(m, m.Recorder(echoWS), echoWS)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var under1s, total uint64
	for _, mf := range mfs {
		if mf.GetName() != "hubprobe_message_latency_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		total = h.GetSampleCount()
		for _, b := range h.GetBucket() {
			if b.GetUpperBound() == 1 {
				under1s = b.GetCumulativeCount()
			}
		}
	}
	if total != 9 || under1s != 8 {
		t.Fatalf("le=\"1\" bucket %d of %d, want 8 of 9", under1s, total)
	}
}

func TestRunFinishedSuccessAfterFailure(t *testing.T) {
	_, m := newTestMetrics(t)
	m.Recorder(echoWS)
	m.RunFinished(failedRun())
	ok := failedRun()
	ok.Outcome, ok.Error, ok.Lost = scenarios.ResultSuccess, "", 0
	ok.Start = runStart.Add(time.Minute)
	m.RunFinished(ok)
	m.RunFinished(scenarios.Result{Target: echoWS.Target, Scenario: echoWS.Scenario, Outcome: scenarios.ResultSkipped, Start: runStart.Add(2 * time.Minute)})

	checks := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"run_success", m.runSuccess.WithLabelValues("hub-a", "echo-ws"), 1},
		{"runs failure", m.runs.WithLabelValues("hub-a", "echo-ws", "failure"), 1},
		{"runs success", m.runs.WithLabelValues("hub-a", "echo-ws", "success"), 1},
		{"runs skipped", m.runs.WithLabelValues("hub-a", "echo-ws", "skipped"), 1},
		// the skipped run does not move the last-run timestamp
		{"last run", m.lastRun.WithLabelValues("hub-a", "echo-ws"), 1700000065},
	}
	for _, c := range checks {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNoLastRunSeriesBeforeFirstRun(t *testing.T) {
	reg, m := newTestMetrics(t)
	m.Recorder(echoWS)
	for _, name := range []string{"hubprobe_run_success", "hubprobe_last_run_timestamp_seconds", "hubprobe_run_latency_seconds"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 0 {
			t.Errorf("%s: %d series (err %v) before any run, want 0", name, n, err)
		}
	}
	if n, _ := testutil.GatherAndCount(reg, "hubprobe_runs_total"); n != 4 {
		t.Errorf("hubprobe_runs_total has %d series, want 4 pre-initialised", n)
	}
}

func TestRunWithoutDeliveriesHasNaNQuantiles(t *testing.T) {
	_, m := newTestMetrics(t)
	m.Recorder(echoWS)
	m.RunFinished(scenarios.Result{Target: echoWS.Target, Scenario: echoWS.Scenario, Outcome: scenarios.ResultFailure, Error: "connect refused"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.runLatency)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v (err %v), want one run latency series", families, err)
	}
	summary := families[0].GetMetric()[0].GetSummary()
	if summary.GetSampleCount() != 0 || len(summary.GetQuantile()) != 4 {
		t.Fatalf("summary %v, want count 0 and 4 quantiles", summary)
	}
	for _, q := range summary.GetQuantile() {
		if !math.IsNaN(q.GetValue()) {
			t.Errorf("quantile %v = %v, want NaN", q.GetQuantile(), q.GetValue())
		}
	}
}

func TestHTTPCodeAndEndpointLabelsBounded(t *testing.T) {
	_, m := newTestMetrics(t)
	rec := m.Recorder(echoWS)
	rec.HTTPResponse("", 0)
	rec.HTTPResponse("rest_send", 1000)
	rec.HTTPResponse("rest_send", 503)
	for _, c := range []struct {
		endpoint, code string
		want           float64
	}{{"unknown", "other", 1}, {"rest_send", "other", 1}, {"rest_send", "503", 1}} {
		got := testutil.ToFloat64(m.httpRequests.WithLabelValues("hub-a", "echo-ws", c.endpoint, c.code))
		if got != c.want {
			t.Errorf("endpoint=%s code=%s: %v, want %v", c.endpoint, c.code, got, c.want)
		}
	}
}

func TestNegativeCountsIgnored(t *testing.T) {
	_, m := newTestMetrics(t)
	rec := m.Recorder(echoWS)
	rec.BytesSent(-5) // a Counter would panic on a negative Add
	rec.Event(scenarios.Event{Kind: scenarios.MessagesLost})
	if got := testutil.ToFloat64(m.sentBytes.WithLabelValues("hub-a", "echo-ws")); got != 0 {
		t.Fatalf("sent bytes = %v, want 0", got)
	}
}

func TestForgetRemovesScenarioSeries(t *testing.T) {
	h := statuspage.NewHistory(10)
	reg, m := newTestMetrics(t, WithHistory(h))
	other := ScenarioInfo{Target: "hub-b", Scenario: "broadcast", Kind: "broadcast", Transport: "sse", Protocol: "json"}
	rec := m.Recorder(echoWS)
	feed(m, rec, echoWS)
	feed(m, m.Recorder(other), other)
	before := countScenarioSeries(t, reg, "echo-ws")
	if before < 20 {
		t.Fatalf("only %d series for echo-ws before Forget", before)
	}

	m.Forget(echoWS)
	if n := countScenarioSeries(t, reg, "echo-ws"); n != 0 {
		t.Fatalf("%d series left for echo-ws after Forget", n)
	}
	if _, ok := h.Last("hub-a", "echo-ws"); ok {
		t.Error("history still reports a last run for the forgotten scenario")
	}
	// A recorder still running after Forget must not bring series back.
	feed(m, rec, echoWS)
	if n := countScenarioSeries(t, reg, "echo-ws"); n != 0 {
		t.Fatalf("%d series resurrected by a stale recorder", n)
	}
	if n := countScenarioSeries(t, reg, "broadcast"); n != before {
		t.Fatalf("other scenario has %d series, want %d", n, before)
	}
}

func countScenarioSeries(t *testing.T, g prometheus.Gatherer, scenario string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		for _, metric := range mf.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "scenario" && l.GetValue() == scenario {
					n++
				}
			}
		}
	}
	return n
}

func TestRecorderAgainReplacesChangedInfo(t *testing.T) {
	reg, m := newTestMetrics(t)
	m.Recorder(echoWS).Sent(0)
	changed := echoWS
	changed.Transport = "longpolling"
	m.Recorder(changed).Sent(0)
	want := `
# HELP hubprobe_scenario_info What each configured scenario is; always 1.
# TYPE hubprobe_scenario_info gauge
hubprobe_scenario_info{kind="echo",protocol="json",scenario="echo-ws",target="hub-a",transport="longpolling"} 1
# HELP hubprobe_messages_sent_total Messages the probe sent.
# TYPE hubprobe_messages_sent_total counter
hubprobe_messages_sent_total{` + wantLabels + `} 2
`
	err := testutil.GatherAndCompare(reg, strings.NewReader(want), "hubprobe_scenario_info", "hubprobe_messages_sent_total")
	if err != nil {
		t.Fatal(err)
	}
}

// TestForgetOldDescriptionKeepsScenario mirrors a reload that changes a
// scenario's transport: the new recorder is made first, then the old
// description is forgotten. The scenario must keep recording.
func TestForgetOldDescriptionKeepsScenario(t *testing.T) {
	reg, m := newTestMetrics(t)
	m.Recorder(echoWS).Sent(0)
	changed := echoWS
	changed.Transport = "sse"
	rec := m.Recorder(changed)
	m.Forget(echoWS)
	rec.Sent(0)
	m.RunFinished(failedRun())
	want := `
# HELP hubprobe_scenario_info What each configured scenario is; always 1.
# TYPE hubprobe_scenario_info gauge
hubprobe_scenario_info{kind="echo",protocol="json",scenario="echo-ws",target="hub-a",transport="sse"} 1
# HELP hubprobe_messages_sent_total Messages the probe sent.
# TYPE hubprobe_messages_sent_total counter
hubprobe_messages_sent_total{` + wantLabels + `} 2
# HELP hubprobe_run_success Whether the last run of the scenario succeeded (1) or failed (0).
# TYPE hubprobe_run_success gauge
hubprobe_run_success{` + wantLabels + `} 0
`
	names := []string{"hubprobe_scenario_info", "hubprobe_messages_sent_total", "hubprobe_run_success"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}

func TestServerLoadReadAtScrape(t *testing.T) {
	reg, m := newTestMetrics(t)
	var load atomic.Uint64
	load.Store(math.Float64bits(0.25))
	m.SetServerLoadSource("hub-a", func() float64 { return math.Float64frombits(load.Load()) })

	expect := func(text string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(text), "hubprobe_server_load_ratio"); err != nil {
			t.Fatal(err)
		}
	}
	header := "# HELP hubprobe_server_load_ratio Server load the target reports, 0 to 1; the capacity guidance is to stay below 0.7.\n# TYPE hubprobe_server_load_ratio gauge\n"
	expect(header + `hubprobe_server_load_ratio{target="hub-a"} 0.25` + "\n")
	load.Store(math.Float64bits(0.75))
	expect(header + `hubprobe_server_load_ratio{target="hub-a"} 0.75` + "\n")
	load.Store(math.Float64bits(math.NaN()))
	expect("")
	load.Store(math.Float64bits(0.5))
	m.RemoveServerLoadSource("hub-a")
	expect("")
}

func TestMetricsLintClean(t *testing.T) {
	reg, m := newTestMetrics(t)
	feed(m, m.Recorder(echoWS), echoWS)
	m.SetServerLoadSource("hub-a", func() float64 { return 0.4 })
	feedPlanning(t, m)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		// hubprobe_shard_count is named by the design's metric catalogue,
		// a contract with rules and dashboards; promlint reserves _count
		// for histograms and summaries, and that is its only finding.
		if p.Metric == "hubprobe_shard_count" && strings.Contains(p.Text, `"_count" suffix`) {
			continue
		}
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

func TestNewMetricsRejectsDoubleRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Fatal("second NewMetrics on the same registry succeeded")
	}
	if _, err := NewMetrics(nil); err == nil {
		t.Fatal("NewMetrics(nil) succeeded")
	}
}

func TestReadBuildInfoHasGoVersion(t *testing.T) {
	b := ReadBuildInfo()
	if !strings.HasPrefix(b.GoVersion, "go") || b.Version == "" || b.Revision == "" {
		t.Fatalf("ReadBuildInfo() = %+v", b)
	}
}

// TestPerMessageCallsDoNotAllocate pins what the benchmark shows: after the
// buckets in use exist, the hot path allocates nothing.
func TestPerMessageCallsDoNotAllocate(t *testing.T) {
	_, m := newTestMetrics(t)
	rec := m.Recorder(echoWS)
	for _, l := range latencies { // create the native buckets in use
		rec.Delivered(ordinaryDelivery(l))
		rec.Sent(l / 100)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		rec.Sent(latencies[i%len(latencies)] / 100)
		rec.BytesSent(64)
		rec.Delivered(ordinaryDelivery(latencies[i%len(latencies)]))
		rec.BytesReceived(64)
		rec.HTTPResponse("rest_send", 202)
		rec.Event(scenarios.Event{Kind: scenarios.Throttled, Reason: throttle.MessageLimit})
		i++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per message, want 0", allocs)
	}
}

// ordinaryDelivery is a delivery with its hub time, but not among the
// run's slowest: the slowest few of a run carry exemplars, whose labels
// allocate.
func ordinaryDelivery(l time.Duration) scenarios.Delivery {
	return scenarios.Delivery{Latency: l, HubTime: l / 2, HasHubTime: true, RunID: "r1", Sender: 3, Seq: 7}
}

// BenchmarkRecorderDelivered measures the per-delivery cost: one
// counter increment and two classic+native histogram observations.
func BenchmarkRecorderDelivered(b *testing.B) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	rec := m.Recorder(echoWS)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rec.Delivered(ordinaryDelivery(latencies[i%len(latencies)]))
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				rec.Delivered(ordinaryDelivery(latencies[i%len(latencies)]))
			}
		})
	})
}

// TestRecorderConcurrentUse feeds one recorder from many goroutines while
// scrapes and new (endpoint, code) pairs happen; nothing may be lost.
func TestRecorderConcurrentUse(t *testing.T) {
	reg, m := newTestMetrics(t)
	rec := m.Recorder(echoWS)
	const workers, perWorker = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				rec.Delivered(ordinaryDelivery(latencies[i%len(latencies)]))
				rec.HTTPResponse("rest_send", 200+w%4)
				if i%100 == 0 {
					_, _ = reg.Gather()
				}
			}
			m.RunFinished(scenarios.Result{Target: echoWS.Target, Scenario: echoWS.Scenario, Outcome: scenarios.ResultSuccess, Received: perWorker})
		}()
	}
	wg.Wait()
	if got := testutil.ToFloat64(m.received.WithLabelValues("hub-a", "echo-ws")); got != workers*perWorker {
		t.Errorf("received = %v, want %d", got, workers*perWorker)
	}
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues("hub-a", "echo-ws", "rest_send", "201")); got != 2*perWorker {
		t.Errorf("rest_send 201 = %v, want %d", got, 2*perWorker)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues("hub-a", "echo-ws", "success")); got != workers {
		t.Errorf("successful runs = %v, want %d", got, workers)
	}
}

// The le="1" bucket is the capacity line in PromQL. Prometheus buckets are
// upper-inclusive, so it holds 999 ms and exactly 1 s, and not 1 s + 1 µs:
// the shipped slow-share rule, 1 − le="1" / count, counts what took longer
// than 1 s. (The run report counts exactly 1 s as slow too; the two can
// differ only on a latency of exactly 1 s.)
func TestLatencyBucketAtOneSecond(t *testing.T) {
	reg, m := newTestMetrics(t)
	rec := m.Recorder(echoWS)
	sum := 0.0
	for _, l := range []time.Duration{999 * time.Millisecond, time.Second, time.Second + time.Microsecond} {
		rec.Delivered(ordinaryDelivery(l))
		sum += l.Seconds()
	}
	var want strings.Builder
	want.WriteString(`
# HELP hubprobe_message_latency_seconds Time from sending a message to receiving it, per delivered message.
# TYPE hubprobe_message_latency_seconds histogram
`)
	for _, b := range []struct {
		le    string
		count int
	}{{"0.005", 0}, {"0.01", 0}, {"0.025", 0}, {"0.05", 0}, {"0.1", 0}, {"0.25", 0}, {"0.5", 0}, {"0.7", 0},
		{"1", 2}, {"2.5", 3}, {"5", 3}, {"10", 3}, {"+Inf", 3}} {
		fmt.Fprintf(&want, "hubprobe_message_latency_seconds_bucket{%s,le=%q} %d\n", wantLabels, b.le, b.count)
	}
	fmt.Fprintf(&want, "hubprobe_message_latency_seconds_sum{%s} %s\n", wantLabels, strconv.FormatFloat(sum, 'g', -1, 64))
	fmt.Fprintf(&want, "hubprobe_message_latency_seconds_count{%s} 3\n", wantLabels)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "hubprobe_message_latency_seconds"); err != nil {
		t.Fatal(err)
	}
}
