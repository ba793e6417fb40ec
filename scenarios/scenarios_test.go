package scenarios_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/bench/benchtest"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/scenarios"
)

// scenario returns a small, fast scenario of the given kind.
func scenario(kind string, connections int, duration, interval time.Duration) config.Scenario {
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind = kind, "hub", kind
	s.Connections, s.Duration, s.SendInterval = connections, duration, interval
	s.MessageSize = 256
	s.LossTimeout = 2 * time.Second
	s.GroupSize = config.DefaultGroupSize
	// Many small runs share two cores here; the saturation verdict has
	// tests of its own, so these tolerate a late pacer.
	s.MaxSendLag = 2 * time.Second
	return s
}

type runOutcome struct {
	res     scenarios.Result
	metrics *exporter.Metrics
	reg     *prometheus.Registry
}

func runAgainst(t *testing.T, url string, s config.Scenario) runOutcome {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := exporter.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	info := exporter.ScenarioInfo{Target: s.Target, Scenario: s.Name, Kind: s.Kind, Transport: s.Transport, Protocol: s.Protocol}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenarios.Endpoint{URL: url}, Recorder: m.Recorder(info)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return runOutcome{res: runner.Run(ctx), metrics: m, reg: reg}
}

func startThirdParty(t *testing.T) *benchtest.Server { return benchtest.StartTest(t) }

func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				// quantile is a label only in the text format; summaries
				// carry it on each quantile, matched below.
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			case m.Summary != nil:
				for _, q := range m.GetSummary().GetQuantile() {
					if strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64) == want["quantile"] {
						return q.GetValue()
					}
				}
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

func assertCounts(t *testing.T, o runOutcome, sent, expected int64) {
	t.Helper()
	r := o.res
	if r.Outcome != scenarios.ResultSuccess {
		t.Fatalf("run failed: %s", r.Error)
	}
	if r.Sent != sent || r.Expected != expected || r.Received != expected || r.Lost != 0 {
		t.Fatalf("sent/expected/received/lost = %d/%d/%d/%d, want %d/%d/%d/0", r.Sent, r.Expected, r.Received, r.Lost, sent, expected, expected)
	}
	if got := counter(t, o.reg, "hubprobe_messages_sent_total"); got != float64(sent) {
		t.Errorf("hubprobe_messages_sent_total = %v, want %d", got, sent)
	}
	if got := counter(t, o.reg, "hubprobe_messages_received_total"); got != float64(expected) {
		t.Errorf("hubprobe_messages_received_total = %v, want %d", got, expected)
	}
	if got := counter(t, o.reg, "hubprobe_message_latency_seconds"); got != float64(expected) {
		t.Errorf("latency histogram count = %v, want %d", got, expected)
	}
	if got := counter(t, o.reg, "hubprobe_messages_lost_total"); got != 0 {
		t.Errorf("hubprobe_messages_lost_total = %v, want 0", got)
	}
	if got := counter(t, o.reg, "hubprobe_runs_total", "result", "success"); got != 1 {
		t.Errorf("runs_total{result=success} = %v, want 1", got)
	}
	if r.SentBytes == 0 || r.ReceivedBytes == 0 {
		t.Errorf("bytes sent/received = %d/%d, want both > 0", r.SentBytes, r.ReceivedBytes)
	}
}

func TestEchoAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	// 5 senders × (1 s / 100 ms) = 50 sends, one delivery each.
	o := runAgainst(t, srv.URL, scenario("echo", 5, time.Second, 100*time.Millisecond))
	assertCounts(t, o, 50, 50)
}

func TestBroadcastAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	s := scenario("broadcast", 4, time.Second, 250*time.Millisecond)
	s.Senders = 2
	// 2 senders × 4 sends, each delivered to all 4 clients.
	assertCounts(t, runAgainst(t, srv.URL, s), 8, 32)
}

func TestSendToGroupAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	s := scenario("send_to_group", 7, time.Second, 250*time.Millisecond)
	s.GroupSize = 3
	// Groups of 3, 3 and 1; every client sends 4 times to its own group:
	// 6 clients × 4 × 3 members + 1 client × 4 × 1 member.
	assertCounts(t, runAgainst(t, srv.URL, s), 28, 76)
}

func TestSendToClientAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	assertCounts(t, runAgainst(t, srv.URL, scenario("send_to_client", 6, time.Second, 250*time.Millisecond)), 24, 24)
}

func TestEchoLatencyMatchesInjectedDelay(t *testing.T) {
	srv := startThirdParty(t)
	srv.EchoDelay.Store(int64(200 * time.Millisecond))
	o := runAgainst(t, srv.URL, scenario("echo", 4, 2*time.Second, 500*time.Millisecond))
	assertCounts(t, o, 16, 16)
	if p50 := o.res.Latency.P50; p50 < 200*time.Millisecond || p50 > 230*time.Millisecond {
		t.Fatalf("p50 = %v with a 200 ms delay injected, want within 200–230 ms", p50)
	}
	if got := counter(t, o.reg, "hubprobe_run_latency_seconds", "quantile", "0.5"); got < 0.2 || got > 0.23 {
		t.Fatalf("hubprobe_run_latency_seconds{quantile=0.5} = %v, want 0.2–0.23", got)
	}
}

func TestLostMessagesAreCountedNotDropped(t *testing.T) {
	srv := startThirdParty(t)
	srv.DropEcho.Store(true)
	s := scenario("echo", 2, 500*time.Millisecond, 100*time.Millisecond)
	s.LossTimeout = 300 * time.Millisecond
	o := runAgainst(t, srv.URL, s)
	if o.res.Sent != 10 || o.res.Received != 0 || o.res.Lost != 10 {
		t.Fatalf("sent/received/lost = %d/%d/%d, want 10/0/10", o.res.Sent, o.res.Received, o.res.Lost)
	}
	if got := counter(t, o.reg, "hubprobe_messages_lost_total"); got != 10 {
		t.Fatalf("hubprobe_messages_lost_total = %v, want 10", got)
	}
	if o.res.MetSLO() {
		t.Fatal("a run that lost every message met the objective")
	}
}

func TestUnreachableTargetFailsTheRun(t *testing.T) {
	srv := startThirdParty(t)
	url := srv.URL
	srv.Close() // nothing listens there any more
	s := scenario("echo", 3, 200*time.Millisecond, 100*time.Millisecond)
	o := runAgainst(t, url, s)
	if o.res.Outcome != scenarios.ResultFailure || !strings.Contains(o.res.Error, "3 of 3 connections failed") {
		t.Fatalf("outcome %q error %q, want a failure naming 3 of 3 connections", o.res.Outcome, o.res.Error)
	}
	if got := counter(t, o.reg, "hubprobe_connection_failures_total", "reason", "negotiate"); got != 3 {
		t.Fatalf("connection_failures_total{reason=negotiate} = %v, want 3", got)
	}
	if got := counter(t, o.reg, "hubprobe_runs_total", "result", "failure"); got != 1 {
		t.Fatalf("runs_total{result=failure} = %v, want 1", got)
	}
	if got := counter(t, o.reg, "hubprobe_run_success"); got != 0 {
		t.Fatalf("run_success = %v, want 0", got)
	}
}

func TestEchoOverSSEAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	s := scenario("echo", 3, time.Second, 200*time.Millisecond)
	s.Transport = "sse"
	o := runAgainst(t, srv.URL, s)
	assertCounts(t, o, 15, 15)
	if got := counter(t, o.reg, "hubprobe_http_requests_total", "endpoint", "send", "code", "200"); got < 1 {
		t.Fatalf("no HTTP POST sends counted over SSE (got %v)", got)
	}
}
