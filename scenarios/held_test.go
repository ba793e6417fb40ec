package scenarios_test

import (
	"context"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// heldScenario holds conns connections, each echoing every 100 ms,
// reported every report.
func heldScenario(conns int, report time.Duration) config.Scenario {
	s := scenario(config.KindHeld, conns, time.Second, 100*time.Millisecond)
	s.Held = &config.Held{ReportInterval: report}
	s.LossTimeout = 300 * time.Millisecond
	return s
}

// hold runs s against ep until stopAfter, and returns its reports and
// what it recorded.
func hold(t *testing.T, ep scenarios.Endpoint, s config.Scenario, stopAfter time.Duration) ([]scenarios.Result, *scenariostest.Recorder) {
	t.Helper()
	rec, results := scenariostest.NewRecorder(), &scenariostest.Results{}
	rn := &scenarios.Runner{Scenario: s, Endpoint: ep, Recorder: rec}
	held, err := rn.Hold(context.Background(), results.RunFinished)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(stopAfter)
	held.Stop()
	return results.All(), rec
}

// Held connections stay open across reports: one connect each, every
// message sent is received by identity, and each report names the run
// and counts the connections open.
func TestHeldConnectionsStayAcrossReports(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{})
	results, rec := hold(t, scenariostest.SignalR(srv.URL()), heldScenario(3, time.Second), 2500*time.Millisecond)
	if len(results) < 2 {
		t.Fatalf("%d reports in 2.5 s of 1 s reports, want 2 or more", len(results))
	}
	var sent, received, lost int64
	for i, r := range results {
		sent, received, lost = sent+r.Sent, received+r.Received, lost+r.Lost
		if r.RunID == "" || (i < len(results)-1 && r.Connections != 3) || r.Outcome != scenarios.ResultSuccess {
			t.Errorf("report %d: run %q, %d connections, %s (%s); want a named success with 3", i, r.RunID, r.Connections, r.Outcome, r.Error)
		}
		// Round trips carry over: from the second report on, every
		// delivery has its hub time.
		if i > 0 && r.HubTimes != r.Received {
			t.Errorf("report %d: %d hub times for %d deliveries", i, r.HubTimes, r.Received)
		}
	}
	tally := rec.Tally()
	if sent < 60 || received != sent || lost != 0 || tally.Sent != sent || tally.Received != received {
		t.Errorf("sent %d, received %d, lost %d, recorded %d/%d; want about 75 sent, all received", sent, received, lost, tally.Sent, tally.Received)
	}
	if tally.Opened != 3 || tally.Closed != 3 || len(tally.Dropped) != 0 {
		t.Errorf("opened %d, closed %d, dropped %v; want 3 connects held to the end", tally.Opened, tally.Closed, tally.Dropped)
	}
}
