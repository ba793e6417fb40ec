package scenarios

import (
	"testing"
	"time"
)

// onTheLine are deliveries either side of the capacity line ("99 % of
// messages under 1 s"), and how many of them are slow: 1 s itself is.
var onTheLine = []time.Duration{
	999 * time.Millisecond, time.Second - time.Microsecond, time.Second, time.Second + time.Microsecond,
}

const slowOnTheLine = 2

// A run's tally counts a delivery of exactly 1 s as slow and one of 999 ms
// as on time.
func TestRunCountsOneSecondAsSlow(t *testing.T) {
	tr := newTracker(&countingRecorder{}, 1)
	for i, l := range onTheLine {
		id := tr.ids.assign(0)
		tr.delivered(0, id, uint64(i), l)
	}
	var r Result
	tr.fill(&r)
	if r.Received != int64(len(onTheLine)) || r.SlowMessages != slowOnTheLine {
		t.Errorf("received/slow = %d/%d for %v, want %d/%d", r.Received, r.SlowMessages, onTheLine, len(onTheLine), slowOnTheLine)
	}
}

// A capacity search's step draws the same line.
func TestCapacityStepCountsOneSecondAsSlow(t *testing.T) {
	rec := newStepRecorder(&countingRecorder{})
	step := rec.begin()
	step.start = step.start.Add(-3 * time.Second) // every delivery was sent during the step
	for _, l := range onTheLine {
		rec.MessageReceived(Delivery{Latency: l})
	}
	if s := rec.snapshot(step); s.Received != int64(len(onTheLine)) || s.Slow != slowOnTheLine {
		t.Errorf("step received/slow = %d/%d for %v, want %d/%d", s.Received, s.Slow, onTheLine, len(onTheLine), slowOnTheLine)
	}
}
