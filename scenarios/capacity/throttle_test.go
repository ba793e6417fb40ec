package capacity_test

import (
	"context"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// A hub that closes a sender for its message rate limit ends the search at
// that step: the close counts once as a throttle of the step and once as
// a failed connection, and 1 of 4 connections failed is past the 1 %.
func TestCapacitySearchCountsAThrottlingClose(t *testing.T) {
	srv := hubtest.Start(t, hub.Options{MessageRateLimit: 5})
	// One sender every 50 ms: 20 messages a second against 5.
	s := scenariostest.Scenario("echo", 4, time.Second, 50*time.Millisecond)
	s.Mode = config.ModeCapacitySearch
	s.CapacitySearch = &config.CapacitySearch{BaseSending: 1, Step: 1, StepDuration: 500 * time.Millisecond}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(srv.URL()), Recorder: scenarios.Discard}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := capacity.Search(ctx, runner, capacity.SearchOptions{})
	if c.StopReason != capacity.StopConnectionFailures || len(c.Steps) != 1 {
		t.Fatalf("stopped for %q after %d steps (%s), want connection_failures after 1", c.StopReason, len(c.Steps), c.Result.Error)
	}
	if st := c.Steps[0]; st.Throttled != 1 || st.FailedConnections != 1 {
		t.Errorf("step 1: %d throttled, %d failed connections; want the sender's close counted once as each", st.Throttled, st.FailedConnections)
	}
}
