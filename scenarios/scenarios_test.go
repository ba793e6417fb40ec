package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/internal/peerhub"
	"github.com/hubprobe/hubprobe/internal/peerhub/peerhubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
)

// The shared rigs, under the names the tests of this package use.
var (
	scenario            = scenariostest.Scenario
	waitUntil           = scenariostest.WaitUntil
	oneJob              = scenariostest.OneJob
	newSchedulerFixture = scenariostest.NewSchedulerFixture
	stopBounded         = scenariostest.StopBounded
)

// runOutcome is what a run returned and what it recorded.
type runOutcome struct {
	res scenarios.Result
	rec *scenariostest.Recorder
}

func runAgainst(t *testing.T, url string, s config.Scenario) runOutcome {
	t.Helper()
	return runEndpoint(t, scenariostest.SignalR(url), s)
}

func runEndpoint(t *testing.T, ep scenarios.Endpoint, s config.Scenario) runOutcome {
	t.Helper()
	rec := scenariostest.NewRecorder()
	runner := &scenarios.Runner{Scenario: s, Endpoint: ep, Recorder: rec}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return runOutcome{res: runner.Run(ctx), rec: rec}
}

// checkCount fails t unless the count named what is want.
func checkCount[N int64 | float64](t *testing.T, what string, got N, want float64) {
	t.Helper()
	if float64(got) != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func startThirdParty(t *testing.T) *peerhub.Server { return peerhubtest.Start(t) }

func assertCounts(t *testing.T, o runOutcome, sent, expected int64) {
	t.Helper()
	r := o.res
	if r.Outcome != scenarios.ResultSuccess {
		t.Fatalf("run failed: %s", r.Error)
	}
	if r.Sent != sent || r.Expected != expected || r.Received != expected || r.Lost != 0 {
		t.Fatalf("sent/expected/received/lost = %d/%d/%d/%d, want %d/%d/%d/0", r.Sent, r.Expected, r.Received, r.Lost, sent, expected, expected)
	}
	if got := o.rec.Tally().Sent; got != int64(sent) {
		t.Errorf("hubprobe_messages_sent_total = %v, want %d", got, sent)
	}
	if got := o.rec.Tally().Received; got != int64(expected) {
		t.Errorf("hubprobe_messages_received_total = %v, want %d", got, expected)
	}
	if got := o.rec.Tally().Received; got != int64(expected) {
		t.Errorf("latency histogram count = %v, want %d", got, expected)
	}
	if got := o.rec.Tally().Lost; got != 0 {
		t.Errorf("hubprobe_messages_lost_total = %v, want 0", got)
	}
	if r.SentBytes == 0 || r.ReceivedBytes == 0 {
		t.Errorf("bytes sent/received = %d/%d, want both > 0", r.SentBytes, r.ReceivedBytes)
	}
}

func TestEchoAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	// 5 senders × (1 s / 100 ms) = 50 sends, one delivery each.
	o := runAgainst(t, srv.URL, scenario("echo", 5, time.Second, 100*time.Millisecond))
	assertCounts(t, o, 50, 50)
}

func TestBroadcastAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	s := scenario("broadcast", 4, time.Second, 250*time.Millisecond)
	s.Senders = 2
	// 2 senders × 4 sends, each delivered to all 4 clients.
	assertCounts(t, runAgainst(t, srv.URL, s), 8, 32)
}

func TestSendToGroupAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	s := scenario("send_to_group", 7, time.Second, 250*time.Millisecond)
	s.GroupSize = 3
	// Groups of 3, 3 and 1; every client sends 4 times to its own group:
	// 6 clients × 4 × 3 members + 1 client × 4 × 1 member.
	assertCounts(t, runAgainst(t, srv.URL, s), 28, 76)
}

func TestSendToClientAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	assertCounts(t, runAgainst(t, srv.URL, scenario("send_to_client", 6, time.Second, 250*time.Millisecond)), 24, 24)
}

func TestEchoLatencyMatchesInjectedDelay(t *testing.T) {
	srv := startThirdParty(t)
	srv.EchoDelay.Store(int64(200 * time.Millisecond))
	o := runAgainst(t, srv.URL, scenario("echo", 4, 2*time.Second, 500*time.Millisecond))
	assertCounts(t, o, 16, 16)
	if p50 := o.res.Latency.P50; p50 < 200*time.Millisecond || p50 > 230*time.Millisecond {
		t.Fatalf("p50 = %v with a 200 ms delay injected, want within 200–230 ms", p50)
	}
}

func TestLostMessagesAreCountedNotDropped(t *testing.T) {
	srv := startThirdParty(t)
	srv.DropEcho.Store(true)
	s := scenario("echo", 2, 500*time.Millisecond, 100*time.Millisecond)
	s.LossTimeout = 300 * time.Millisecond
	o := runAgainst(t, srv.URL, s)
	if o.res.Sent != 10 || o.res.Received != 0 || o.res.Lost != 10 {
		t.Fatalf("sent/received/lost = %d/%d/%d, want 10/0/10", o.res.Sent, o.res.Received, o.res.Lost)
	}
	if got := o.rec.Tally().Lost; got != 10 {
		t.Fatalf("hubprobe_messages_lost_total = %v, want 10", got)
	}
	if o.res.MetSLO() {
		t.Fatal("a run that lost every message met the objective")
	}
}

func TestUnreachableTargetFailsTheRun(t *testing.T) {
	srv := startThirdParty(t)
	url := srv.URL
	srv.Close() // nothing listens there any more
	s := scenario("echo", 3, 200*time.Millisecond, 100*time.Millisecond)
	o := runAgainst(t, url, s)
	if o.res.Outcome != scenarios.ResultFailure || !strings.Contains(o.res.Error, "3 of 3 connections failed") {
		t.Fatalf("outcome %q error %q, want a failure naming 3 of 3 connections", o.res.Outcome, o.res.Error)
	}
	if got := o.rec.Tally().Failed["negotiate"]; got != 3 {
		t.Fatalf("connection_failures_total{reason=negotiate} = %v, want 3", got)
	}
}

func TestEchoOverSSEAgainstThirdPartyServer(t *testing.T) {
	srv := startThirdParty(t)
	s := scenario("echo", 3, time.Second, 200*time.Millisecond)
	s.Transport = "sse"
	o := runAgainst(t, srv.URL, s)
	assertCounts(t, o, 15, 15)
	if got := o.rec.Tally().HTTP[scenariostest.HTTPResponse{Endpoint: "send", Code: 200}]; got < 1 {
		t.Fatalf("no HTTP POST sends counted over SSE (got %v)", got)
	}
}
