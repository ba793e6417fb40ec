package stepquery

import (
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// The query sums one step's series by figure.
func TestQuerySumsOneStepByFigure(t *testing.T) {
	key := capacity.StepKey{Target: "hub", Scenario: "ramp", Run: "abc", Step: 3}
	if q := query(key); q != `sum by (figure) (hubprobe_capacity_step{target="hub", scenario="ramp", run="abc", step="3"})` {
		t.Errorf("query %s", q)
	}
}

// What the shards publish, summed by figure as the query sums it, reads
// back as the totals of the step: every count added up, and how many
// shards published and how many were saturated.
func TestFiguresSummedReadBackAsTheTotals(t *testing.T) {
	shards := []capacity.StepFigures{
		{Run: "abc", Connections: 10, Step: capacity.Step{Number: 3, Senders: 2, Sent: 20, Expected: 20, Received: 19, Slow: 1, Unsent: 0, Throttled: 1, FailedConnections: 0}},
		{Run: "abc", Connections: 10, Saturated: true, Step: capacity.Step{Number: 3, Senders: 2, Sent: 18, Expected: 20, Received: 18, Slow: 0, Unsent: 2, Throttled: 3, FailedConnections: 1}},
		{Run: "abc", Connections: 9, Step: capacity.Step{Number: 3, Senders: 1, Sent: 10, Expected: 10, Received: 10, Slow: 2, Unsent: 0, Throttled: 0, FailedConnections: 1}},
	}
	sums := map[string]int64{}
	for _, f := range shards {
		for figure, v := range Figures(f) {
			sums[figure] += int64(v)
		}
	}
	want := capacity.StepTotals{Shards: 3, Connections: 29, Saturated: 1, Step: capacity.Step{
		Number: 3, Senders: 5, Sent: 48, Expected: 50, Received: 47, Slow: 3, Unsent: 2, Throttled: 4, FailedConnections: 2,
	}}
	if got := totalsOf(sums, 3); got != want {
		t.Errorf("totals %+v\nwant   %+v", got, want)
	}
}

// Only an http or https URL with a host is a Prometheus to query, and the
// refusal does not repeat the URL, which may carry credentials.
func TestNewTakesHTTPURLsOnly(t *testing.T) {
	for _, good := range []string{"http://prom:9090", "https://user:pass@prom.example/prometheus"} {
		if _, err := New(good); err != nil {
			t.Errorf("New(%q): %v", good, err)
		}
	}
	for _, bad := range []string{"", "prom:9090", "ftp://user:secret@prom:9090", "http://", "https:///path", "http://%zz"} {
		_, err := New(bad)
		if err == nil || err.Error() != "not an http or https URL" || (bad != "" && strings.Contains(err.Error(), bad)) {
			t.Errorf("New(%q): %v, want it refused without the URL", bad, err)
		}
	}
}
