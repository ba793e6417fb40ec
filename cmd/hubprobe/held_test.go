package main

import (
	"context"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// A `hubprobe hub` process killed and started again on the same port:
// the held connections to it drop for transport, and come back to the new
// process once it listens.
func TestHeldConnectionsSurviveAHubRestartedOnItsPort(t *testing.T) {
	first, addr := childOnFreePort(t, "hubprobe hub", 10*time.Second, nil, []string{"hub", "--metrics"}, "--listen", hubListens(t))
	s := scenariostest.Scenario(config.KindHeld, 2, time.Second, 100*time.Millisecond)
	s.Held, s.LossTimeout = &config.Held{ReportInterval: time.Minute}, 300*time.Millisecond
	rec := scenariostest.NewRecorder()
	rn := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR("http://" + addr + "/signalrbench"), Recorder: rec}
	held, err := rn.Hold(context.Background(), func(scenarios.Result) {})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Stop()
	scenariostest.WaitUntil(t, 10*time.Second, func() bool { return rec.Tally().Received >= 4 })
	_ = first.cmd.Process.Kill()
	if err := <-first.exited; err == nil {
		t.Fatal("the killed hub ended as if it had exited on its own")
	}
	scenariostest.WaitUntil(t, 5*time.Second, func() bool { return rec.Tally().Dropped[clientconn.DropTransport] == 2 })
	startChild(t, nil, "hub", "--metrics", "--listen", addr)
	scenariostest.WaitUntil(t, 20*time.Second, func() bool { return rec.Tally().Reconnected == 2 })
	if tally := rec.Tally(); len(tally.Dropped) != 1 || tally.Opened != 4 {
		t.Errorf("dropped %v, opened %d; want 2 transport drops and 4 connects", tally.Dropped, tally.Opened)
	}
}
