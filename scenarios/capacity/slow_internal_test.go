package capacity

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

// A capacity search's step draws the capacity line ("99 % of messages
// under 1 s") where a run's tally does (the scenarios package's
// TestRunCountsOneSecondAsSlow): of deliveries either side of it, 1 s
// itself is slow.
func TestCapacityStepCountsOneSecondAsSlow(t *testing.T) {
	onTheLine := []time.Duration{999 * time.Millisecond, time.Second - time.Microsecond, time.Second, time.Second + time.Microsecond}
	const slowOnTheLine = 2
	rec := newStepRecorder(&countingRecorder{})
	step := rec.begin()
	step.start = step.start.Add(-3 * time.Second) // every delivery was sent during the step
	for _, l := range onTheLine {
		rec.Delivered(scenarios.Delivery{Latency: l})
	}
	if s := rec.snapshot(step); s.Received != int64(len(onTheLine)) || s.Slow != slowOnTheLine {
		t.Errorf("step received/slow = %d/%d for %v, want %d/%d", s.Received, s.Slow, onTheLine, len(onTheLine), slowOnTheLine)
	}
}
