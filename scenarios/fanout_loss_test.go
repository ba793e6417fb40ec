package scenarios_test

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

// In a fan-out kind, loss is counted against the deliveries expected, not
// the messages sent: one sender broadcasting 10 times to 10 connections
// expects 100 deliveries, and a hub that drops 7 of them loses 7, although
// every one of the 10 messages sent reached somebody.
func TestFanOutLossCountsExpectedDeliveries(t *testing.T) {
	t.Parallel()
	srv := startThirdParty(t)
	srv.SetBroadcastPlan(func(n int64) bool { return n < 100 && n%14 == 3 }) // deliveries 3, 17, …, 87
	s := scenario("broadcast", 10, time.Second, 100*time.Millisecond)
	s.Senders, s.LossTimeout = 1, 500*time.Millisecond
	o := runAgainst(t, srv.URL, s)
	r := o.res
	if r.Outcome != scenarios.ResultSuccess || r.Sent != 10 || r.Expected != 100 || r.Received != 93 || r.Lost != 7 || r.Duplicated != 0 {
		t.Fatalf("outcome %s (%s), sent/expected/received/lost/duplicated = %d/%d/%d/%d/%d, want success and 10/100/93/7/0",
			r.Outcome, r.Error, r.Sent, r.Expected, r.Received, r.Lost, r.Duplicated)
	}
	if got := o.rec.Tally(); got.Sent != 10 || got.Received != 93 || got.Lost != 7 {
		t.Errorf("recorded sent/received/lost = %d/%d/%d, want 10/93/7", got.Sent, got.Received, got.Lost)
	}
	if r.MetSLO() {
		t.Error("a broadcast that lost 7 of 100 deliveries met the capacity line")
	}
}
