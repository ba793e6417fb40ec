package scenarios_test

import (
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/faulthubtest"
	"github.com/hubprobe/hubprobe/internal/peerhub"
	"github.com/hubprobe/hubprobe/scenarios"
)

// identityEcho is 20 connections echoing every 100 ms for 5 s: exactly
// 1,000 sends, numbered by the third-party hub in the order it gets them.
func identityEcho() (s config.Scenario, sends int64) {
	s = scenario("echo", 20, 5*time.Second, 100*time.Millisecond)
	return s, 1000
}

// A hub that drops 10 messages and answers 10 others twice delivers 1,000
// answers for 1,000 sends; counted by identity, that is 10 lost and 10
// duplicated, and the run misses the capacity line. Reordering is the
// hub's to decide here (it calls each invocation on a goroutine of its
// own), so the test asks only that the counter agree with the result.
func TestLossAndDuplicatesCountedByIdentity(t *testing.T) {
	t.Parallel()
	srv := startThirdParty(t)
	srv.SetEchoPlan(func(n int64) peerhub.EchoFault {
		switch n % 100 {
		case 50:
			return peerhub.EchoDrop
		case 10:
			return peerhub.EchoTwice
		}
		return peerhub.EchoAnswer
	})
	s, sends := identityEcho()
	o := runAgainst(t, srv.URL, s)
	r := o.res
	if r.Sent != sends || r.Expected != sends || r.Received != sends-10 || r.Lost != 10 || r.Duplicated != 10 {
		t.Fatalf("sent/expected/received/lost/duplicated = %d/%d/%d/%d/%d, want %d/%d/%d/10/10",
			r.Sent, r.Expected, r.Received, r.Lost, r.Duplicated, sends, sends, sends-10)
	}
	if got := o.rec.Tally(); got.Received != sends-10 || got.Lost != 10 || got.Duplicated != 10 || got.Reordered != r.Reordered {
		t.Errorf("recorded received/lost/duplicated/reordered = %d/%d/%d/%d, want %d/10/10/%d",
			got.Received, got.Lost, got.Duplicated, got.Reordered, sends-10, r.Reordered)
	}
	if r.MetSLO() {
		t.Error("a run that lost 10 messages met the capacity line")
	}
}

// A hub that holds back each connection's 1st, 11th, 21st, 31st and 41st
// answer until right after the next one delivers all 1,000 messages, 100 of
// them behind a later message of the same sender.
func TestReorderingCountedPerSenderAndReceiver(t *testing.T) {
	t.Parallel()
	srv, err := faulthubtest.Start(faulthubtest.Script{Fault: faulthubtest.Reorder, After: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	s, sends := identityEcho()
	o := runAgainst(t, srv.URL(), s)
	r := o.res
	if r.Outcome != scenarios.ResultSuccess || r.Received != sends || r.Lost != 0 || r.Duplicated != 0 || r.Reordered != 100 {
		t.Fatalf("outcome %s (%s), received/lost/duplicated/reordered = %d/%d/%d/%d, want %d/0/0/100",
			r.Outcome, r.Error, r.Received, r.Lost, r.Duplicated, r.Reordered, sends)
	}
	if got := o.rec.Tally().Reordered; got != 100 {
		t.Errorf("hubprobe_messages_reordered_total = %v, want 100", got)
	}
	if !r.MetSLO() {
		t.Error("reordering alone is not loss: the run should meet the capacity line")
	}
}

// Sends 5 ms apart go out four or five to a pass (pacing.SendSlot): every one of
// them is still counted by identity, and those made early report no lag,
// so at least half of the sends have none (the lag histogram's smallest
// bucket, a microsecond; a timer's lateness alone is tens of them).
// The reference hub answers each connection in the order it reads, so
// nothing is reordered; the third-party hub calls each invocation on a
// goroutine of its own and may answer two sends that reach it together
// in either order, which the probe rightly counts.
func TestSendsMadeInOnePassAreCountedAndReportNoLag(t *testing.T) {
	t.Parallel()
	srv := hubtest.Start(t, hub.Options{})
	s := scenario("echo", 20, time.Second, 100*time.Millisecond)
	r := runAgainst(t, srv.URL(), s).res
	if r.Sent != 200 || r.Expected != 200 || r.Received != 200 || r.Lost != 0 || r.Duplicated != 0 || r.Reordered != 0 {
		t.Fatalf("sent/expected/received/lost/duplicated/reordered = %d/%d/%d/%d/%d/%d, want 200/200/200/0/0/0",
			r.Sent, r.Expected, r.Received, r.Lost, r.Duplicated, r.Reordered)
	}
	if r.SendLag.P50 > time.Microsecond {
		t.Errorf("send lag p50 %v, want none: most sends of a pass leave early", r.SendLag.P50)
	}
}
