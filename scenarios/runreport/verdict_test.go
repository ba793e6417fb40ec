package runreport_test

import (
	"testing"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// The verdict is what `hubprobe run` turns into its exit code.
func TestResultVerdict(t *testing.T) {
	met := scenarios.Result{Outcome: scenarios.ResultSuccess, Received: 100, SlowMessages: 1}
	for _, c := range []struct {
		name    string
		res     scenarios.Result
		senders int
		want    runreport.Verdict
	}{
		{"99 % under 1 s, nothing lost", met, 3, runreport.VerdictMet},
		{"two slow of 100", scenarios.Result{Outcome: scenarios.ResultSuccess, Received: 100, SlowMessages: 2}, 3, runreport.VerdictMissed},
		{"one lost", scenarios.Result{Outcome: scenarios.ResultSuccess, Received: 99, Lost: 1}, 3, runreport.VerdictMissed},
		{"nothing received", scenarios.Result{Outcome: scenarios.ResultSuccess}, 3, runreport.VerdictMissed},
		{"a shard without senders", scenarios.Result{Outcome: scenarios.ResultSuccess}, 0, runreport.VerdictMet},
		{"a failed shard without senders", scenarios.Result{Outcome: scenarios.ResultFailure}, 0, runreport.VerdictMissed},
		{"probe saturated", scenarios.Result{Outcome: scenarios.ResultInconclusive, Received: 100}, 3, runreport.VerdictInconclusive},
		{"failed", scenarios.Result{Outcome: scenarios.ResultFailure, Received: 100}, 3, runreport.VerdictMissed},
	} {
		if got := runreport.RunVerdict(c.res, c.senders); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
}
