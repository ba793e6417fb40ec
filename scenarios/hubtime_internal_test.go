package scenarios

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios/internal/ledger"
)

// The network's share of a message is half its sender's round trip (the
// way up) and half its receiver's (the way down): an echo is charged its
// connection's whole round trip, a fan-out each end's half, a REST send
// (whose way up is hubprobe's REST client's) the receiver's round trip.
// Until both ends measured one there is no hub time.
func TestNetworkShareOfAMessage(t *testing.T) {
	tr := newTracker(Discard, 3)
	tr.roundTrip(0, 10*time.Millisecond)
	tr.roundTrip(1, 30*time.Millisecond)
	for _, c := range []struct {
		name             string
		sender, receiver int
		rest             bool
		want             time.Duration
		ok               bool
	}{
		{"echo", 1, 1, false, 30 * time.Millisecond, true},
		{"fan-out", 0, 1, false, 20 * time.Millisecond, true},
		{"fan-out the other way", 1, 0, false, 20 * time.Millisecond, true},
		{"REST send", 0, 1, true, 30 * time.Millisecond, true},
		{"receiver not measured yet", 0, 2, false, 0, false},
		{"sender not measured yet", 2, 0, false, 0, false},
	} {
		tr.restSends.Store(c.rest)
		got, ok := tr.networkShare(c.sender, c.receiver)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: network share %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// A delivery's hub time is its latency less the network's share, never
// below zero; only a delivery 10 % slower than the slowest before it is
// marked for an exemplar.
func TestDeliveryHubTimeAndSlowest(t *testing.T) {
	tr := newTracker(Discard, 2)
	tr.roundTrip(0, 40*time.Millisecond)
	tr.roundTrip(1, 40*time.Millisecond)
	tr.runID, tr.first = "r1", 10
	for i, c := range []struct {
		latency, hubTime time.Duration
		slowest          bool
	}{
		{100 * time.Millisecond, 60 * time.Millisecond, true},
		{105 * time.Millisecond, 65 * time.Millisecond, false}, // not 10 % slower
		{111 * time.Millisecond, 71 * time.Millisecond, true},
		{30 * time.Millisecond, 0, false}, // faster than the network: no hub time below 0
	} {
		d := tr.delivery(1, ledger.MessageID(0, uint32(i)), c.latency)
		if d.HubTime != c.hubTime || !d.HasHubTime || d.Slowest != c.slowest || d.RunID != "r1" || d.Sender != 10 || d.Seq != uint32(i) {
			t.Errorf("delivery %d of %v: %+v; want hub time %v, slowest %v, run r1, sender 10, seq %d", i, c.latency, d, c.hubTime, c.slowest, i)
		}
	}
}
