package exporter

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/statuspage"
	"github.com/hubprobe/hubprobe/tiers"
)

// rampSearch is a search of echo-ws whose third step broke the 1 s rule:
// the capacity is step 2, 4 senders, 40 msg/s in, 100000 bytes/s in.
func rampSearch() capacity.Capacity {
	step := func(n, senders int, sent, received, slow, bytesIn, bytesOut int64, verdict string) capacity.Step {
		return capacity.Step{
			Number: n, Senders: senders, Duration: 10 * time.Second, Sent: sent, Expected: sent, Received: received,
			Slow: slow, SentBytes: bytesIn, ReceivedBytes: bytesOut, Verdict: verdict,
			Latency: scenarios.Quantiles{P50: 5 * time.Millisecond, P99: time.Duration(n) * 300 * time.Millisecond},
		}
	}
	s := config.DefaultScenario
	s.Name, s.Target, s.Kind, s.Connections = echoWS.Scenario, echoWS.Target, echoWS.Kind, 10
	return capacity.Capacity{
		Result: scenarios.Result{Target: echoWS.Target, Scenario: echoWS.Scenario, Kind: echoWS.Kind,
			Start: runStart, Duration: 40 * time.Second, Outcome: scenarios.ResultSuccess},
		Scenario: s,
		Steps: []capacity.Step{
			step(1, 2, 200, 200, 0, 500000, 520000, ""),
			step(2, 4, 400, 400, 1, 1000000, 1040000, ""),
			step(3, 6, 600, 300, 100, 1500000, 800000, capacity.StopSlowMessages),
		},
		StopReason: capacity.StopSlowMessages,
	}
}

// feedPlanning gives every planning metric a series: a capacity search for
// echo-ws and a tier for hub-a.
func feedPlanning(t *testing.T, m *Metrics) {
	t.Helper()
	rec, ok := m.Recorder(echoWS).(capacity.Recorder)
	if !ok {
		t.Fatal("the exporter's recorder does not record capacity searches")
	}
	rec.CapacityFound(rampSearch())
	limits, err := tiers.Limits(tiers.SignalR, 10)
	if err != nil {
		t.Fatal(err)
	}
	m.SetTier("hub-a", limits)
}

const capacityExposition = `
# HELP hubprobe_capacity_messages_per_second Messages per second at the last step of the last capacity search that held to the capacity definition, by direction.
# TYPE hubprobe_capacity_messages_per_second gauge
hubprobe_capacity_messages_per_second{direction="inbound",scenario="echo-ws",target="hub-a"} 40
hubprobe_capacity_messages_per_second{direction="outbound",scenario="echo-ws",target="hub-a"} 40
# HELP hubprobe_capacity_bandwidth_bytes_per_second Wire bytes per second at the last step of the last capacity search that held to the capacity definition, by direction.
# TYPE hubprobe_capacity_bandwidth_bytes_per_second gauge
hubprobe_capacity_bandwidth_bytes_per_second{direction="inbound",scenario="echo-ws",target="hub-a"} 100000
hubprobe_capacity_bandwidth_bytes_per_second{direction="outbound",scenario="echo-ws",target="hub-a"} 104000
# HELP hubprobe_capacity_steps Steps the last capacity search ran, the one that stopped it included.
# TYPE hubprobe_capacity_steps gauge
hubprobe_capacity_steps{scenario="echo-ws",target="hub-a"} 3
# HELP hubprobe_capacity_senders Sending connections at the capacity found by the last capacity search; 0 when its first step already failed.
# TYPE hubprobe_capacity_senders gauge
hubprobe_capacity_senders{scenario="echo-ws",target="hub-a"} 4
# HELP hubprobe_capacity_stop_reason Why the last capacity search stopped: 1 for its reason, 0 for the others.
# TYPE hubprobe_capacity_stop_reason gauge
hubprobe_capacity_stop_reason{reason="all_sending",scenario="echo-ws",target="hub-a"} 0
hubprobe_capacity_stop_reason{reason="connection_failures",scenario="echo-ws",target="hub-a"} 0
hubprobe_capacity_stop_reason{reason="max_steps",scenario="echo-ws",target="hub-a"} 0
hubprobe_capacity_stop_reason{reason="probe_saturated",scenario="echo-ws",target="hub-a"} 0
hubprobe_capacity_stop_reason{reason="slow_messages",scenario="echo-ws",target="hub-a"} 1
hubprobe_capacity_stop_reason{reason="throttled",scenario="echo-ws",target="hub-a"} 0
`

var capacityNames = []string{
	"hubprobe_capacity_messages_per_second", "hubprobe_capacity_bandwidth_bytes_per_second",
	"hubprobe_capacity_steps", "hubprobe_capacity_senders", "hubprobe_capacity_stop_reason",
}

func TestCapacityFoundExportsTheLastStepThatHeld(t *testing.T) {
	reg, m := newTestMetrics(t)
	rec := m.Recorder(echoWS).(capacity.Recorder)
	failed := rampSearch()
	failed.StopReason = "" // could not finish: nothing is exported
	rec.CapacityFound(failed)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), capacityNames...); err != nil {
		t.Fatalf("a search that did not finish was exported: %v", err)
	}
	rec.CapacityFound(rampSearch())
	if err := testutil.GatherAndCompare(reg, strings.NewReader(capacityExposition), capacityNames...); err != nil {
		t.Fatal(err)
	}
}

func TestCapacityWithoutPassingStepIsZero(t *testing.T) {
	reg, m := newTestMetrics(t)
	c := rampSearch()
	c.Steps = c.Steps[2:]
	m.Recorder(echoWS).(capacity.Recorder).CapacityFound(c)
	if got := testutil.ToFloat64(m.planning.capacityMessages.WithLabelValues("hub-a", "echo-ws", DirectionInbound)); got != 0 {
		t.Errorf("capacity with no passing step = %g, want 0", got)
	}
	if got := testutil.ToFloat64(m.planning.capacitySteps.WithLabelValues("hub-a", "echo-ws")); got != 1 {
		t.Errorf("steps = %g, want 1", got)
	}
	if n := testutil.CollectAndCount(reg, "hubprobe_capacity_stop_reason"); n != len(capacity.StopReasons) {
		t.Errorf("%d stop reason series, want %d", n, len(capacity.StopReasons))
	}
}

func TestForgetRemovesCapacity(t *testing.T) {
	log := statuspage.NewCapacityLog()
	reg, m := newTestMetrics(t, WithCapacityLog(log))
	feedPlanning(t, m)
	if _, ok := log.Last("hub-a", "echo-ws"); !ok {
		t.Fatal("the capacity log did not keep the search")
	}
	m.Forget(echoWS)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), capacityNames...); err != nil {
		t.Fatal(err)
	}
	if _, ok := log.Last("hub-a", "echo-ws"); ok {
		t.Error("the capacity log still holds the forgotten scenario")
	}
}

func TestTierLimits(t *testing.T) {
	reg, m := newTestMetrics(t)
	unit10, _ := tiers.Limits(tiers.SignalR, 10)
	m.SetTier("hub-a", unit10)
	want := `
# HELP hubprobe_tier_limit Published limit of the target's declared tier, by resource (connections, or bytes or messages per second).
# TYPE hubprobe_tier_limit gauge
hubprobe_tier_limit{resource="connections",target="hub-a"} 10000
hubprobe_tier_limit{resource="inbound_bytes_per_second",target="hub-a"} 2.048e+07
hubprobe_tier_limit{resource="inbound_messages_per_second",target="hub-a"} 10000
hubprobe_tier_limit{resource="outbound_bytes_per_second",target="hub-a"} 4.096e+07
hubprobe_tier_limit{resource="outbound_messages_per_second",target="hub-a"} 20000
# HELP hubprobe_tier_info The tier a target declares; always 1.
# TYPE hubprobe_tier_info gauge
hubprobe_tier_info{service="signalr",target="hub-a",units="10"} 1
`
	names := []string{"hubprobe_tier_limit", "hubprobe_tier_info"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// A reload to another tier replaces the description, not adds one.
	unit1, _ := tiers.Limits(tiers.WebPubSub, 1)
	m.SetTier("hub-a", unit1)
	if n := testutil.CollectAndCount(reg, "hubprobe_tier_info"); n != 1 {
		t.Errorf("%d tier_info series after a tier change, want 1", n)
	}
	if got := testutil.ToFloat64(m.planning.tierLimit.WithLabelValues("hub-a", tiers.ResourceConnections)); got != 1000 {
		t.Errorf("connections limit after the change = %g, want 1000", got)
	}
	m.RemoveTier("hub-a")
	if err := testutil.GatherAndCompare(reg, strings.NewReader(""), names...); err != nil {
		t.Fatal(err)
	}
	if len(m.Tiers()) != 0 {
		t.Errorf("Tiers() = %v after RemoveTier", m.Tiers())
	}
}
