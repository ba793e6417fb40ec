// Package clientconntest keeps what hubprobe's client connections report
// of their timing, for the tests of every client.
package clientconntest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/probe/clientconn"
)

// Timings is a clientconn.Observer that keeps the connect timings and
// round trips it is told and discards the rest; embed it in an observer
// that keeps more.
type Timings struct {
	clientconn.NopObserver
	mu       sync.Mutex
	connects []clientconn.ConnectTiming
	rtts     []time.Duration
}

// Connected keeps t.
func (o *Timings) Connected(t clientconn.ConnectTiming) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.connects = append(o.connects, t)
}

// RoundTrip keeps d.
func (o *Timings) RoundTrip(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rtts = append(o.rtts, d)
}

// Measured returns the connect timings and round trips reported so far.
func (o *Timings) Measured() ([]clientconn.ConnectTiming, []time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]clientconn.ConnectTiming(nil), o.connects...), append([]time.Duration(nil), o.rtts...)
}

// WaitRoundTrips waits up to within for n round trips and returns those
// reported by then, failing t if they are fewer.
func (o *Timings) WaitRoundTrips(t testing.TB, n int, within time.Duration) []time.Duration {
	t.Helper()
	deadline := time.Now().Add(within)
	_, rtts := o.Measured()
	for len(rtts) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		_, rtts = o.Measured()
	}
	if len(rtts) < n {
		t.Fatalf("%d round trips reported in %s, want %d", len(rtts), within, n)
	}
	return rtts
}

// CheckSum fails t unless the phases of timing add up to the connect's
// whole time (whole, measured around Dial) less at most outside, what
// Dial does before and after its clock runs.
func CheckSum(t testing.TB, timing clientconn.ConnectTiming, whole, outside time.Duration) {
	t.Helper()
	t.Logf("phases %v add up to %v; Dial took %v", timing, timing.Total(), whole)
	if total := timing.Total(); total > whole || total < whole-outside {
		t.Errorf("the phases add up to %v; Dial took %v", total, whole)
	}
}

// CheckRoundTrips fails t unless rtts, measured over a link that holds
// every byte back by link, are the link's: none shorter, and their median
// under twice as long, so no new connection's TLS handshake (which waits
// for the link once more) is in them. The median leaves room for one
// measure a loaded machine delays.
func CheckRoundTrips(t testing.TB, rtts []time.Duration, link time.Duration) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(rtts))
	if len(sorted) == 0 || sorted[0] < link || sorted[len(sorted)/2] >= 2*link {
		t.Errorf("round trips %v: want each at least the link's %v and their median under %v", rtts, link, 2*link)
	}
}
