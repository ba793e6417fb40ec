package capacity

import (
	"slices"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

// A capacity step counts each delivery in the class above every bound it
// reaches: a latency of exactly a bound (1 s among them) lands in the class
// that starts there, a microsecond less in the class below, and 999 ms in
// the class below 1 s.
func TestCapacityStepClassesAtTheirBounds(t *testing.T) {
	bounds := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, time.Second, 2 * time.Second}
	rec := newStepRecorder(&countingRecorder{})
	rec.opts.LatencyBounds = bounds
	step := rec.begin()
	step.start = step.start.Add(-10 * time.Second) // every delivery was sent during the step
	for _, b := range bounds {
		rec.Delivered(scenarios.Delivery{Latency: b - time.Microsecond})
		rec.Delivered(scenarios.Delivery{Latency: b})
	}
	rec.Delivered(scenarios.Delivery{Latency: 999 * time.Millisecond})
	// [0, 50ms): 50ms-1µs; [50ms, 100ms): 50ms, 100ms-1µs; [100ms, 1s): 100ms,
	// 1s-1µs, 999ms; [1s, 2s): 1s, 2s-1µs; [2s, ∞): 2s.
	want := []int64{1, 2, 3, 2, 1}
	if got := rec.tallies(1)[0].Classes; !slices.Equal(got, want) {
		t.Errorf("classes %v by bounds %v, want %v", got, bounds, want)
	}
}
