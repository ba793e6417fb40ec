package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

var start = time.Date(2020, 8, 24, 6, 54, 38, 0, time.UTC)

func echoPlan() *Plan {
	return &Plan{
		File: "echo.yaml", Name: "echo", Kind: "echo", URL: "http://127.0.0.1:5050/signalrbench",
		Connections: 1000, MessageSize: 2048, SendInterval: time.Second,
		Search:              config.CapacitySearch{BaseSending: 500, Step: 500, StepDuration: time.Second},
		ConnectionFailShare: 0.01, SlowShare: 0.01,
	}
}

// classes builds a latencyBounds tally from (class, count) pairs.
func classes(pairs ...int64) []int64 {
	c := make([]int64, len(latencyBounds)+1)
	for i := 0; i+1 < len(pairs); i += 2 {
		c[pairs[i]] = pairs[i+1]
	}
	return c
}

// passingRun is two clean steps after 9 s of connecting.
func passingRun() capacity.Steps {
	q := scenarios.Quantiles{P50: 1200 * time.Microsecond, P90: 2 * time.Millisecond, P99: 45 * time.Millisecond, Max: 250 * time.Millisecond}
	return capacity.Steps{
		Capacity: capacity.Capacity{
			Result:     scenarios.Result{Start: start, Outcome: scenarios.ResultSuccess},
			StopReason: capacity.StopAllSending,
			Steps: []capacity.Step{
				{Number: 1, Senders: 500, Duration: time.Second, Sent: 500, Expected: 500, Received: 500, Latency: q,
					SentBytes: 1_081_000, ReceivedBytes: 1_092_500},
				{Number: 2, Senders: 1000, Duration: time.Second, Sent: 1000, Expected: 1000, Received: 1000, Latency: q,
					SentBytes: 2_162_000, ReceivedBytes: 2_185_000},
			},
		},
		Tallies: []capacity.StepTally{
			{Began: start.Add(9 * time.Second), Settled: start.Add(10*time.Second + 300*time.Millisecond), Delivered: 500, Classes: classes(0, 450, 1, 50)},
			{Began: start.Add(10*time.Second + 300*time.Millisecond), Settled: start.Add(11*time.Second + 900*time.Millisecond), Delivered: 1000, Classes: classes(0, 985, 3, 10, 5, 5)},
		},
	}
}

// slowRun is a first step where 10 % of messages were still missing when
// it was judged: the conditional stop ends the ramp there. 70 of them
// arrived late, 30 never.
func slowRun() capacity.Steps {
	return capacity.Steps{
		Capacity: capacity.Capacity{
			Result:     scenarios.Result{Start: start, Outcome: scenarios.ResultSuccess},
			StopReason: capacity.StopSlowMessages,
			Steps: []capacity.Step{{Number: 1, Senders: 500, Duration: time.Second, Sent: 1000, Expected: 1000, Received: 900,
				Latency: scenarios.Quantiles{P50: time.Millisecond, P90: 3 * time.Millisecond, P99: 8 * time.Millisecond, Max: 9 * time.Millisecond},
				Verdict: capacity.StopSlowMessages}},
		},
		Tallies: []capacity.StepTally{
			{Began: start.Add(2 * time.Second), Settled: start.Add(4 * time.Second), Delivered: 970, Classes: classes(0, 900, 11, 60, 13, 10)},
		},
	}
}

func TestTextReportLayout(t *testing.T) {
	for name, steps := range map[string]capacity.Steps{"pass": passingRun(), "stopped": slowRun()} {
		var out bytes.Buffer
		if err := echoPlan().report(steps).WriteText(&out); err != nil {
			t.Fatal(err)
		}
		golden(t, "testdata/report-"+name+".txt", out.Bytes())
	}
}

func TestJSONReport(t *testing.T) {
	rep := echoPlan().report(slowRun())
	var out bytes.Buffer
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/report-stopped.json", out.Bytes())
	var back JSONReport
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	it := back.Items[0]
	if back.Hubprobe.Passed || !it.Suspicious || it.Hubprobe.Lost != 30 || it.LatencyClasses["LessThan2s"] != 60 || it.Latency.LatencyList[2] != notBelow1s {
		t.Errorf("decoded %+v", back)
	}
}

// golden compares got with the file; with HUBPROBE_UPDATE_GOLDEN set it
// rewrites the file instead.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv("HUBPROBE_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}

// The verdicts of the exit code: a clean ramp passes; a stopped one, a
// lossy one or one with nothing sent fails.
func TestReportVerdicts(t *testing.T) {
	lossy := passingRun()
	lossy.Tallies[1].Delivered, lossy.Tallies[1].Classes = 999, classes(0, 999)
	empty := passingRun()
	empty.Steps[0].Sent, empty.Steps[0].Expected, empty.Tallies[0].Delivered, empty.Tallies[0].Classes = 0, 0, 0, classes()
	failed := capacity.Steps{Capacity: capacity.Capacity{Result: scenarios.Result{Start: start, Outcome: scenarios.ResultFailure, Error: "connect: refused"}}}
	for _, c := range []struct {
		steps capacity.Steps
		want  string
	}{
		{passingRun(), "PASS (every step: 99 % of messages under 1 s, nothing lost)"},
		{slowRun(), "FAIL (step 1: 30 of 1000 expected deliveries lost)"},
		{lossy, "FAIL (step 2: 1 of 1000 expected deliveries lost)"},
		{empty, "FAIL (step 1: nothing was sent)"},
		{failed, "FAILED: connect: refused"},
	} {
		rep := echoPlan().report(c.steps)
		if got := rep.verdict(); got != c.want || rep.Passed() != (c.want[0] == 'P') {
			t.Errorf("verdict %q (passed %v), want %q", got, rep.Passed(), c.want)
		}
	}
}

// The benchmark's conditional stop: strictly above the thresholds, with
// missing messages as slow ones, and a step with nothing seen passes.
func TestConditionalStop(t *testing.T) {
	p := echoPlan()
	for _, c := range []struct {
		step capacity.Step
		want string
	}{
		{capacity.Step{Expected: 1000, Received: 1000, Slow: 10}, ""},
		{capacity.Step{Expected: 1000, Received: 1000, Slow: 11}, capacity.StopSlowMessages},
		{capacity.Step{Expected: 1000, Received: 989}, capacity.StopSlowMessages},
		{capacity.Step{}, ""},
		{capacity.Step{Expected: 1000, Received: 1000, FailedConnections: 10}, ""},
		{capacity.Step{Expected: 1000, Received: 1000, FailedConnections: 11, Throttled: 3}, capacity.StopConnectionFailures},
		{capacity.Step{Expected: 1000, Received: 1000, Throttled: 3}, ""},
	} {
		if got := p.conditionalStop(c.step, 1000); got != c.want {
			t.Errorf("%+v: %q, want %q", c.step, got, c.want)
		}
	}
}
