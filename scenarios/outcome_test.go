package scenarios

// Tests of what a run concludes: its verdict, and whether a failure was
// throttling.

import (
	"fmt"
	"testing"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/probe/clientconn"
	"github.com/hubprobe/hubprobe/throttle"
)

// The verdict is what `hubprobe run` turns into its exit code.
func TestResultVerdict(t *testing.T) {
	met := Result{Outcome: ResultSuccess, Received: 100, SlowMessages: 1}
	for _, c := range []struct {
		name    string
		res     Result
		senders int
		want    Verdict
	}{
		{"99 % under 1 s, nothing lost", met, 3, VerdictMet},
		{"two slow of 100", Result{Outcome: ResultSuccess, Received: 100, SlowMessages: 2}, 3, VerdictMissed},
		{"one lost", Result{Outcome: ResultSuccess, Received: 99, Lost: 1}, 3, VerdictMissed},
		{"nothing received", Result{Outcome: ResultSuccess}, 3, VerdictMissed},
		{"a shard without senders", Result{Outcome: ResultSuccess}, 0, VerdictMet},
		{"a failed shard without senders", Result{Outcome: ResultFailure}, 0, VerdictMissed},
		{"probe saturated", Result{Outcome: ResultInconclusive, Received: 100}, 3, VerdictInconclusive},
		{"failed", Result{Outcome: ResultFailure, Received: 100}, 3, VerdictMissed},
	} {
		if got := c.res.Verdict(c.senders); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
}

// A run's failures are classified whichever part refused: a REST call
// (its body decides the reason, the message limit included) or a client
// connection (a 429 while connecting is the connection quota or plain).
func TestThrottledByRESTAndClients(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		reason string
		ok     bool
	}{
		{"REST message limit", fmt.Errorf("send: %w", &azure.RESTError{StatusCode: 429, Body: throttle.MessageLimitText}), throttle.MessageLimit, true},
		{"REST 503", &azure.RESTError{StatusCode: 503}, "", false},
		{"connect 429 naming the message limit", &clientconn.ConnectError{Phase: clientconn.PhaseTransport, StatusCode: 429, Body: throttle.MessageLimitText}, throttle.HTTP429, true},
		{"closed for the connection limit", &clientconn.CloseError{Message: throttle.ConnectionLimitText}, throttle.ConnectionLimit, true},
		{"server timeout", clientconn.ErrServerTimeout, "", false},
	} {
		if reason, ok := throttledBy(c.err); reason != c.reason || ok != c.ok {
			t.Errorf("%s: throttledBy = %q, %v; want %q, %v", c.name, reason, ok, c.reason, c.ok)
		}
	}
}
