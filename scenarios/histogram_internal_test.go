package scenarios

import (
	"math/rand/v2"
	"testing"
	"time"
)

// A DurationHistogram reads the same quantiles as the dense HDR histogram
// it stands for, below its sparse limit, at it and past it, and keeps no
// dense histogram until it needs one.
func TestDurationHistogramReadsAsTheDenseOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 1000, sparseLimit, sparseLimit + 1, 3 * sparseLimit} {
		var h DurationHistogram
		reference := newHDR()
		for range n {
			d := time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond))
			h.Record(d)
			_ = reference.RecordValue(max(d.Microseconds(), 1))
		}
		if got, want := h.Quantiles(), quantilesOf(reference); got != want {
			t.Errorf("%d durations: quantiles %+v, want %+v", n, got, want)
		}
		if h.Count() != int64(n) {
			t.Errorf("%d durations: count %d", n, h.Count())
		}
		if dense := h.dense != nil; dense != (n > sparseLimit) {
			t.Errorf("%d durations: dense %v, want it only past %d", n, dense, sparseLimit)
		}
	}
}

// Empty, it reads all zero; a duration under 1 µs counts as 1 µs, and one
// over an hour is not recorded, in either form.
func TestDurationHistogramBounds(t *testing.T) {
	var h DurationHistogram
	if q := h.Quantiles(); q != (Quantiles{}) || h.Count() != 0 {
		t.Fatalf("empty: %+v, count %d", q, h.Count())
	}
	for _, fill := range []int{0, sparseLimit} {
		var h DurationHistogram
		for range fill {
			h.Record(time.Millisecond)
		}
		h.Record(0)
		h.Record(2 * time.Hour)
		if h.Count() != int64(fill+1) {
			t.Errorf("after %d: count %d, want %d (the hour-long one dropped)", fill, h.Count(), fill+1)
		}
		if fill == 0 && h.Quantiles().Max != time.Microsecond {
			t.Errorf("a zero duration reads %v, want 1µs", h.Quantiles().Max)
		}
	}
}
