package scenarios

import (
	"testing"
	"time"
)

// The saturation verdict exactly: a send lag p99 at the bound is within
// it; past the bound, or with sends left unmade, the run is inconclusive,
// and the reason gives the rates over the sending window.
func TestSaturationVerdict(t *testing.T) {
	const bound = 100 * time.Millisecond
	lag := func(p99 time.Duration) Quantiles { return Quantiles{P99: p99} }
	for _, c := range []struct {
		name string
		res  Result
		want string
	}{
		{"lag at the bound", Result{SendLag: lag(bound), Sent: 10, Scheduled: 10, SendWindow: 2 * time.Second}, ""},
		{"lag past the bound", Result{SendLag: lag(bound + time.Millisecond), Sent: 10, Scheduled: 10, SendWindow: 2 * time.Second},
			"probe saturated: send lag p99 101ms (bound 100ms); sent 10 of 10 scheduled sends, 5.0/s of 5.0/s"},
		{"sends unmade", Result{SendLag: lag(time.Millisecond), Sent: 8, Scheduled: 10, Unsent: 2, SendWindow: 2 * time.Second},
			"probe saturated: send lag p99 1ms (bound 100ms); sent 8 of 10 scheduled sends, 4.0/s of 5.0/s"},
	} {
		if got := saturation(c.res, bound); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
