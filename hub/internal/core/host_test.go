package core

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/internal/grid"
)

// The heartbeat beats on the process's grid, whenever the host started,
// so an embedded hub's timer shares the probe's wake-ups.
func TestHeartbeatBeatsOnTheGrid(t *testing.T) {
	h, err := NewHost(Config{KeepAliveInterval: 200 * time.Millisecond}, NewMetrics())
	if err != nil {
		t.Fatal(err)
	}
	period := h.Config.heartbeatPeriod()
	// Start off the grid, 60 % of a period past it.
	time.Sleep(grid.UntilNext(period) + 6*period/10)
	beats := make(chan time.Duration, 16)
	h.Start(func(int64) { beats <- grid.Now() })
	defer h.Close(func() {})
	for range 4 {
		select {
		case at := <-beats:
			// A timer is never early; a busy machine may make it late.
			if off := at % period; off > period/2 {
				t.Errorf("a beat at %v, %v past the grid of %v", at, off, period)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("fewer than 4 beats in 3 s")
		}
	}
}
