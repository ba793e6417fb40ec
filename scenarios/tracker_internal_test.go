package scenarios

import (
	"testing"
	"time"
)

// A run's max send lag is the largest lateness of any send, whatever the
// order sends are counted in; the report, its JSON and the status page
// show it.
func TestTrackerKeepsTheLargestSendLag(t *testing.T) {
	tr := newTracker(Discard, 1)
	for _, lag := range []time.Duration{3 * time.Millisecond, 7 * time.Millisecond, 5 * time.Millisecond, 0} {
		tr.sentMessage(1, lag)
	}
	var r Result
	tr.fill(&r)
	if r.Sent != 4 || r.MaxSendLag != 7*time.Millisecond {
		t.Errorf("sent %d, max send lag %v; want 4, 7ms", r.Sent, r.MaxSendLag)
	}
}
