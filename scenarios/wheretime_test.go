package scenarios_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/toxitest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
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
			res, rec := runThrough(t, c)
			t.Logf("%s: latency p50 %v, network round trip p50 %v (%d), hub time p50 %v (%d)", name,
				res.Latency.P50, res.RoundTrip.P50, res.RoundTrips, res.HubTime.P50, res.HubTimes)
			checkSide(t, "network round trip", res.RoundTrip.P50, c.network)
			checkSide(t, "hub time", res.HubTime.P50, c.hub)
			checkTimeSeries(t, res, rec)
			checkTimeReports(t, res)
		})
	}
}

// runThrough runs 4 connections echoing every 100 ms for 2 s against a hub
// slowed as c says, behind a link slowed as c says.
func runThrough(t *testing.T, c timeSplit) (scenarios.Result, *scenariostest.Recorder) {
	t.Helper()
	srv := hubtest.Start(t, hub.Options{DeliveryDelay: c.hub})
	proxy, url := toxitest.Start(t, srv.URL())
	if c.network > 0 {
		toxitest.Add(t, proxy, toxitest.Latency("downstream", int(c.network/time.Millisecond), 0))
	}
	s := scenario("echo", 4, 2*time.Second, 100*time.Millisecond)
	s.Timeout = s.ConnectTimeout + s.Duration + s.LossTimeout + config.DefaultTimeoutPad
	rec := scenariostest.NewRecorder()
	res := runBounded(t, &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(url), Recorder: rec})
	if res.Outcome != scenarios.ResultSuccess || res.Received != 80 {
		t.Fatalf("run %s, %d of 80 received: %s", res.Outcome, res.Received, res.Error)
	}
	return res, rec
}

// checkSide fails unless a p50 reads what its side was given within
// p50Within; a side not slowed must read under p50Within, flat.
func checkSide(t *testing.T, side string, p50, given time.Duration) {
	t.Helper()
	if p50 < given-p50Within || p50 > given+p50Within {
		t.Errorf("%s p50 %v, want %v within %v", side, p50, given, p50Within)
	}
}

// checkTimeSeries checks what the run recorded: a round trip from every
// connection, a hub time for every delivery, and a slow delivery marked
// for an exemplar that names a message of this run.
func checkTimeSeries(t *testing.T, res scenarios.Result, rec *scenariostest.Recorder) {
	t.Helper()
	tally := rec.Tally()
	if n := tally.RoundTrips; n != res.RoundTrips || n < 4 {
		t.Errorf("%d round trips recorded; the run measured %d, want one per connection at least", n, res.RoundTrips)
	}
	if n := tally.HubTimes; n != res.Received || res.HubTimes != res.Received {
		t.Errorf("%d hub times recorded, the run %d; want one per delivery, %d", n, res.HubTimes, res.Received)
	}
	for _, d := range tally.Slowest {
		if d.RunID == res.RunID && res.RunID != "" && d.Sender >= 0 && d.Sender < 4 {
			return
		}
	}
	t.Errorf("no slowest delivery names a message of run %s: %+v", res.RunID, tally.Slowest)
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
