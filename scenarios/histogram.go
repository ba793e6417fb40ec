package scenarios

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// longestDuration is the longest duration a DurationHistogram keeps;
// longer ones are not recorded.
const longestDuration = time.Hour

// sparseLimit is how many durations a DurationHistogram keeps as they are
// (4 bytes each: an hour is 3.6e9 µs) before it moves them into a dense
// HDR histogram, which takes 184 KiB however few it holds. The slice,
// grown by append, stays under half of that. A run keeps four histograms:
// the default canary's runs, and a 1,000-connection run's round trips,
// stay below it.
const sparseLimit = 16384

// DurationHistogram records durations from 1 µs to an hour, in
// microseconds, and reads their quantiles as an HDR histogram with 3
// significant digits does: every latency and lag histogram of a run and
// of a capacity search's steps. Until it holds sparseLimit durations it
// keeps them in a slice, so a small run does not pay for the dense
// histogram; the quantiles are the same either way. The zero value is
// empty and ready; it is not safe for concurrent use.
type DurationHistogram struct {
	sparse []uint32 // microseconds, until dense is made
	dense  *hdrhistogram.Histogram
}

// newHDR is the dense form: 1 µs to an hour, 3 significant digits.
func newHDR() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, longestDuration.Microseconds(), 3)
}

// scratchHDRs hold the dense histograms that read a sparse one's
// quantiles, so reading a run's four allocates none after the first.
var scratchHDRs = sync.Pool{New: func() any { return newHDR() }}

// Record adds d, counted as at least 1 µs; a duration over an hour is
// dropped.
func (h *DurationHistogram) Record(d time.Duration) {
	us := max(d.Microseconds(), 1)
	switch {
	case d > longestDuration:
		return
	case h.dense != nil:
		_ = h.dense.RecordValue(us) // within range: checked above
	case len(h.sparse) < sparseLimit:
		h.sparse = append(h.sparse, uint32(us)) // at most an hour: fits
	default:
		h.dense = newHDR()
		recordAll(h.dense, h.sparse)
		_ = h.dense.RecordValue(us)
		h.sparse = nil
	}
}

// Count is how many durations were recorded.
func (h *DurationHistogram) Count() int64 {
	if h.dense != nil {
		return h.dense.TotalCount()
	}
	return int64(len(h.sparse))
}

// Quantiles reads p50, p90, p99 and the maximum; all zero when empty.
func (h *DurationHistogram) Quantiles() Quantiles {
	if h.dense != nil {
		return quantilesOf(h.dense)
	}
	if len(h.sparse) == 0 {
		return Quantiles{}
	}
	scratch := scratchHDRs.Get().(*hdrhistogram.Histogram)
	defer scratchHDRs.Put(scratch)
	scratch.Reset()
	recordAll(scratch, h.sparse)
	return quantilesOf(scratch)
}

func recordAll(dense *hdrhistogram.Histogram, values []uint32) {
	for _, us := range values {
		_ = dense.RecordValue(int64(us))
	}
}

// quantilesOf reads the quantiles of a nonempty dense histogram.
func quantilesOf(h *hdrhistogram.Histogram) Quantiles {
	q := func(p float64) time.Duration { return time.Duration(h.ValueAtQuantile(p)) * time.Microsecond }
	return Quantiles{P50: q(50), P90: q(90), P99: q(99), Max: time.Duration(h.Max()) * time.Microsecond}
}
