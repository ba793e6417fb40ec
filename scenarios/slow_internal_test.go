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
	tr := newTracker(Discard, 1)
	for i, l := range onTheLine {
		id := tr.ids.Assign(0)
		tr.delivered(0, id, uint64(i), l)
	}
	var r Result
	tr.fill(&r)
	if r.Received != int64(len(onTheLine)) || r.SlowMessages != slowOnTheLine {
		t.Errorf("received/slow = %d/%d for %v, want %d/%d", r.Received, r.SlowMessages, onTheLine, len(onTheLine), slowOnTheLine)
	}
}
