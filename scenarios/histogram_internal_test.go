package scenarios

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A DurationHistogram reads the same quantiles as the dense HDR histogram
// it stands for, and a run's worth of deliveries costs it a small part of
// the dense one's 184 KiB.
func TestDurationHistogramReadsAsTheDenseOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 2000, 50000} {
		var h DurationHistogram
		dense := hdrhistogram.New(1, time.Hour.Microseconds(), 3)
		for range n {
			d := time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond))
			h.Record(d)
			_ = dense.RecordValue(max(d.Microseconds(), 1))
		}
		q := func(p float64) time.Duration { return time.Duration(dense.ValueAtQuantile(p)) * time.Microsecond }
		want := Quantiles{P50: q(50), P90: q(90), P99: q(99), Max: time.Duration(dense.Max()) * time.Microsecond}
		if got := h.Quantiles(); got != want {
			t.Errorf("%d durations: quantiles %+v, want %+v", n, got, want)
		}
		if h.Count() != int64(n) {
			t.Errorf("%d durations: count %d", n, h.Count())
		}
		if n == 2000 && h.packed.GetMemorySize() > 16<<10 {
			t.Errorf("2,000 durations take %d bytes, want under 16 KiB", h.packed.GetMemorySize())
		}
	}
}

// Empty, it reads all zero; a duration under 1 µs counts as 1 µs, and one
// of two hours is not recorded.
func TestDurationHistogramBounds(t *testing.T) {
	var h DurationHistogram
	if q := h.Quantiles(); q != (Quantiles{}) || h.Count() != 0 {
		t.Fatalf("empty: %+v, count %d", q, h.Count())
	}
	h.Record(0)
	h.Record(2 * time.Hour)
	if h.Count() != 1 || h.Quantiles().Max != time.Microsecond {
		t.Errorf("count %d, max %v; want the zero duration alone, read as 1µs", h.Count(), h.Quantiles().Max)
	}
}
