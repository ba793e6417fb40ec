package exporter

import (
	"testing"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/statuspage"
)

func TestRecorderFillsHistory(t *testing.T) {
	h := statuspage.NewHistory(10)
	_, m := newTestMetrics(t, WithHistory(h))
	m.Recorder(echoWS)
	// A result may leave its kind to the scenario's description.
	m.RunFinished(scenarios.Result{Target: echoWS.Target, Scenario: echoWS.Scenario, Outcome: scenarios.ResultSuccess, Received: 3})
	last, ok := h.Last("hub-a", "echo-ws")
	if !ok || last.Kind != "echo" || last.Received != 3 {
		t.Fatalf("Last = %+v, %v", last, ok)
	}
}
