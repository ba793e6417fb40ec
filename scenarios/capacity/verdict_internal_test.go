package capacity

import (
	"testing"

	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// The verdict is what `hubprobe run` turns into its exit code.
func TestCapacityVerdict(t *testing.T) {
	held := Step{Number: 1}
	missed := Step{Number: 2, Verdict: StopSlowMessages}
	for _, c := range []struct {
		name string
		c    Capacity
		want runreport.Verdict
	}{
		{"a step held, then one missed", Capacity{Steps: []Step{held, missed}, StopReason: StopSlowMessages}, runreport.VerdictMet},
		{"every step held to max_steps", Capacity{Steps: []Step{held}, StopReason: StopMaxSteps}, runreport.VerdictMet},
		{"the first step missed", Capacity{Steps: []Step{missed}, StopReason: StopSlowMessages}, runreport.VerdictMissed},
		{"unfinished after a held step", Capacity{Steps: []Step{held}}, runreport.VerdictMissed},
		{"probe saturated after a held step", Capacity{Steps: []Step{held, missed}, StopReason: StopProbeSaturated}, runreport.VerdictInconclusive},
	} {
		if got := c.c.Verdict(); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
}
