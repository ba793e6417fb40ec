package scenarios_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/exporter"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/toxitest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// The two sides of a message's latency, as the issue sets them: a network
// whose every byte from the hub waits 100 ms, and a hub that holds every
// delivery 200 ms. At p50 each must read within 10 ms of what was put in.
const (
	slowNetwork = 100 * time.Millisecond
	slowHub     = 200 * time.Millisecond
	p50Within   = 10 * time.Millisecond
)

// timeSplit is one case: what is slow, and what the run must read.
type timeSplit struct {
	network, hub time.Duration
}

// An echo through toxiproxy in front of the embedded hub: the network's
// round trip and the hub's own time read as what each side was given,
// the side that was not slowed reads flat, and the latency histogram's
// slowest deliveries carry exemplars naming the run.
func TestWhereTheTimeGoes(t *testing.T) {
	for name, c := range map[string]timeSplit{
		"network 100 ms and hub 200 ms": {slowNetwork, slowHub},
		"only the hub slow":             {0, slowHub},
		"only the network slow":         {slowNetwork, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, reg := runThrough(t, c)
			t.Logf("%s: latency p50 %v, network round trip p50 %v (%d), hub time p50 %v (%d)", name,
				res.Latency.P50, res.RoundTrip.P50, res.RoundTrips, res.HubTime.P50, res.HubTimes)
			checkSide(t, "network round trip", res.RoundTrip.P50, c.network)
			checkSide(t, "hub time", res.HubTime.P50, c.hub)
			checkTimeSeries(t, res, reg)
			checkTimeReports(t, res)
		})
	}
}

// runThrough runs 4 connections echoing every 100 ms for 2 s against a hub
// slowed as c says, behind a link slowed as c says.
func runThrough(t *testing.T, c timeSplit) (scenarios.Result, *prometheus.Registry) {
	t.Helper()
	srv := hubtest.Start(t, hub.Options{DeliveryDelay: c.hub})
	proxy, url := toxitest.Start(t, srv.URL())
	if c.network > 0 {
		toxitest.Add(t, proxy, toxitest.Latency("downstream", int(c.network/time.Millisecond), 0))
	}
	s := scenario("echo", 4, 2*time.Second, 100*time.Millisecond)
	s.Timeout = s.ConnectTimeout + s.Duration + s.LossTimeout + config.DefaultTimeoutPad
	reg := prometheus.NewRegistry()
	m, err := exporter.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Recorder(exporter.ScenarioInfo{Target: s.Target, Scenario: s.Name, Kind: s.Kind})
	res := runBounded(t, &scenarios.Runner{Scenario: s, Endpoint: scenarios.Endpoint{URL: url}, Recorder: rec})
	if res.Outcome != scenarios.ResultSuccess || res.Received != 80 {
		t.Fatalf("run %s, %d of 80 received: %s", res.Outcome, res.Received, res.Error)
	}
	return res, reg
}

// checkSide fails unless a p50 reads what its side was given within
// p50Within; a side not slowed must read under p50Within, flat.
func checkSide(t *testing.T, side string, p50, given time.Duration) {
	t.Helper()
	if p50 < given-p50Within || p50 > given+p50Within {
		t.Errorf("%s p50 %v, want %v within %v", side, p50, given, p50Within)
	}
}

// checkTimeSeries checks the run's histograms: a round trip from every
// connection, a hub time for every delivery, and an exemplar naming this
// run on the latency bucket of a slow delivery.
func checkTimeSeries(t *testing.T, res scenarios.Result, reg *prometheus.Registry) {
	t.Helper()
	if n := counter(t, reg, "hubprobe_network_round_trip_seconds"); n != float64(res.RoundTrips) || n < 4 {
		t.Errorf("hubprobe_network_round_trip_seconds has %v observations; the run measured %d, want one per connection at least", n, res.RoundTrips)
	}
	if n := counter(t, reg, "hubprobe_message_hub_time_seconds"); n != float64(res.Received) || res.HubTimes != res.Received {
		t.Errorf("hubprobe_message_hub_time_seconds has %v observations, the run %d; want one per delivery, %d", n, res.HubTimes, res.Received)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "hubprobe_message_latency_seconds" {
			continue
		}
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			if e := b.GetExemplar(); e != nil && exemplarNames(t, e.GetLabel(), res) {
				return
			}
		}
	}
	t.Errorf("no latency bucket carries an exemplar of run %s", res.RunID)
}

type labelPair interface {
	GetName() string
	GetValue() string
}

// exemplarNames reports whether an exemplar's labels name a message of
// run res: its run_id, a sender among its 4 connections, a sequence.
func exemplarNames[L labelPair](t *testing.T, labels []L, res scenarios.Result) bool {
	t.Helper()
	got := map[string]string{}
	for _, l := range labels {
		got[l.GetName()] = l.GetValue()
	}
	sender, errSender := strconv.Atoi(got["sender"])
	_, errSeq := strconv.ParseUint(got["sequence"], 10, 32)
	return len(got) == 3 && got["run_id"] == res.RunID && res.RunID != "" && errSender == nil && sender >= 0 && sender < 4 && errSeq == nil
}

// checkTimeReports checks that hubprobe run's text and JSON say where the
// time went, with the run's own figures.
func checkTimeReports(t *testing.T, res scenarios.Result) {
	t.Helper()
	var text bytes.Buffer
	if err := runreport.WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	line := "    hub time:           p50 " + strconv.FormatFloat(float64(res.HubTime.P50)/float64(time.Millisecond), 'f', 3, 64) + " ms"
	if !strings.Contains(text.String(), "  Where the time goes:\n    network round trip: p50 ") || !strings.Contains(text.String(), line) {
		t.Errorf("text report lacks where the time goes (%q):\n%s", line, text.String())
	}
	var j runreport.JSON
	var out bytes.Buffer
	if err := runreport.WriteJSON(&out, res); err != nil || json.Unmarshal(out.Bytes(), &j) != nil {
		t.Fatalf("json report: %v: %s", err, out.String())
	}
	if j.RunID != res.RunID || j.RoundTrip == nil || j.HubTime == nil ||
		j.RoundTrip.P50 != res.RoundTrip.P50.Seconds() || j.HubTime.P99 != res.HubTime.P99.Seconds() {
		t.Errorf("json report run_id %q, round trip %+v, hub time %+v; want the run's", j.RunID, j.RoundTrip, j.HubTime)
	}
}
