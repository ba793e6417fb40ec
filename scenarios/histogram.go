package scenarios

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// DurationHistogram records durations from 1 µs to an hour, in
// microseconds, to 3 significant digits: every latency and lag histogram
// of a run and of a capacity search's steps. It is HDR's packed form,
// whose memory grows with the buckets it fills (a few KiB for one of the
// default canary's runs) where the dense form takes 184 KiB however few
// values it holds, and a run keeps four; its quantiles are the dense
// form's, bit for bit. The zero value is empty and ready; it is not safe
// for concurrent use.
type DurationHistogram struct {
	packed *hdrhistogram.PackedHistogram // nil until the first value
}

// Record adds d, counted as at least 1 µs. A duration past the histogram's
// top bucket (a little over an hour) is dropped.
func (h *DurationHistogram) Record(d time.Duration) {
	if h.packed == nil {
		h.packed = hdrhistogram.NewPacked(1, time.Hour.Microseconds(), 3)
	}
	_ = h.packed.RecordValue(max(d.Microseconds(), 1))
}

// Count is how many durations were recorded.
func (h *DurationHistogram) Count() int64 {
	if h.packed == nil {
		return 0
	}
	return h.packed.TotalCount()
}

// Quantiles reads p50, p90, p99 and the maximum; all zero when empty.
func (h *DurationHistogram) Quantiles() Quantiles {
	if h.Count() == 0 {
		return Quantiles{}
	}
	q := func(p float64) time.Duration { return time.Duration(h.packed.ValueAtPercentile(p)) * time.Microsecond }
	return Quantiles{P50: q(50), P90: q(90), P99: q(99), Max: time.Duration(h.packed.Max()) * time.Microsecond}
}
