package bench

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// classOf is the latencyBounds class of a latency, by the rule
// capacity.StepTally.Classes follows: below bound i, at or above the one
// before (package capacity tests that the search counts it so).
func classOf(latency time.Duration) int {
	for i, b := range latencyBounds {
		if latency < b {
			return i
		}
	}
	return len(latencyBounds)
}

// tallyOf counts latencies by class.
func tallyOf(latencies ...time.Duration) []int64 {
	c := classes()
	for _, l := range latencies {
		c[classOf(l)]++
	}
	return c
}

// oneStep is a run of a single step that expected the given deliveries
// and had those of tally delivered by the end.
func oneStep(expected int64, tally []int64) capacity.Steps {
	var delivered int64
	for _, n := range tally {
		delivered += n
	}
	return capacity.Steps{
		Capacity: capacity.Capacity{
			Result:     scenarios.Result{Start: start, Outcome: scenarios.ResultSuccess},
			StopReason: capacity.StopAllSending,
			Steps: []capacity.Step{{Number: 1, Senders: 500, Duration: time.Second,
				Sent: expected, Expected: expected, Received: delivered}},
		},
		Tallies: []capacity.StepTally{{Began: start, Settled: start.Add(time.Second), Delivered: delivered, Classes: tally}},
	}
}

// reportOf renders a one-step report of echoPlan, as text and as JSON.
func reportOf(t *testing.T, steps capacity.Steps) (Item, string, JSONItem) {
	t.Helper()
	rep := echoPlan().report(steps)
	rep.Planned = 1
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	return rep.Items[0], out.String(), rep.JSON().Items[0]
}

// A delivery of exactly a class bound lands in the class above it, in the
// report's text and JSON alike: exactly 1 s is "< 2 s" and slow, 999 ms
// and a microsecond under 1 s are "< 1 s".
func TestBenchmarkClassesAtTheirBounds(t *testing.T) {
	for _, c := range []struct {
		latency     time.Duration
		label, name string
	}{
		{50*time.Millisecond - time.Microsecond, "< 50 ms", "LessThan50ms"},
		{50 * time.Millisecond, "< 100 ms", "LessThan100ms"},
		{100 * time.Millisecond, "< 200 ms", "LessThan200ms"},
		{200 * time.Millisecond, "< 500 ms", "LessThan500ms"},
		{500 * time.Millisecond, "< 1 s", "LessThan1s"},
		{999 * time.Millisecond, "< 1 s", "LessThan1s"},
		{time.Second - time.Microsecond, "< 1 s", "LessThan1s"},
		{time.Second, "< 2 s", "LessThan2s"},
		{2 * time.Second, "< 5 s", "LessThan5s"},
		{5 * time.Second, ">= 5 s", "MoreThan5s"},
	} {
		it, text, js := reportOf(t, oneStep(1, tallyOf(c.latency)))
		for _, class := range v2Classes {
			want := int64(0)
			if class.Label == c.label {
				want = 1
			}
			line := fmt.Sprintf("   %s: %d (%.2f%%)\n", class.Label, want, float64(want)*100)
			if !strings.Contains(text, line) || js.LatencyClasses[class.Name] != want {
				t.Errorf("%v: want %q and %s = %d; got %s = %d in\n%s", c.latency, line, class.Name, want, class.Name, js.LatencyClasses[class.Name], text)
			}
		}
		if slow := c.latency >= time.Second; (it.Slow == 1) != slow {
			t.Errorf("%v: slow count %d, want slow %v", c.latency, it.Slow, slow)
		}
	}
}

// Deliveries between 900 ms and 1 s are in the "< 1 s" class and not slow:
// a step that had 100 of its 1,000 deliveries there reached 95 % and 99 %
// only at the 1,000 ms bucket, and still met 99 % under 1 s.
func TestDeliveriesJustUnderOneSecond(t *testing.T) {
	latencies := slices.Repeat([]time.Duration{10 * time.Millisecond}, 900)
	for i := range 100 {
		latencies = append(latencies, 900*time.Millisecond+time.Duration(i)*time.Millisecond) // 900 … 999 ms
	}
	it, text, js := reportOf(t, oneStep(1000, tallyOf(latencies...)))
	for _, want := range []string{
		"  90.00%: < 100 ms", "  95.00%: < 1000 ms", "  99.00%: < 1000 ms",
		"   < 1 s: 100 (10.00%)", "   < 2 s: 0 (0.00%)",
		" Check: ok", " Result: PASS (every step: 99 % of messages under 1 s, nothing lost)",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if it.Slow != 0 || !it.Passed() || js.LatencyClasses["LessThan1s"] != 100 || js.Hubprobe.SlowDelivered != 0 || !js.Hubprobe.ObjectiveMet {
		t.Errorf("slow %d, passed %v, JSON LessThan1s %d, slow_delivered %d, objective_met %v; want 0, true, 100, 0, true",
			it.Slow, it.Passed(), js.LatencyClasses["LessThan1s"], js.Hubprobe.SlowDelivered, js.Hubprobe.ObjectiveMet)
	}
}

// The later benchmark's "too few delivered" rule at its threshold: a step
// is suspicious when fewer than 95 % of its expected deliveries arrived,
// or none; 95 % itself and anything between it and all are not.
func TestTooFewDeliveredAtTheThreshold(t *testing.T) {
	for _, c := range []struct {
		expected, delivered int64
		suspicious          bool
	}{
		{1000, 1000, false}, {1000, 999, false}, {1000, 951, false}, {1000, 950, false},
		{1000, 949, true}, {1000, 1, true}, {1000, 0, true},
		{20, 19, false}, {20, 18, true},
		{0, 0, true},
	} {
		it, _, js := reportOf(t, oneStep(c.expected, classes(0, c.delivered)))
		reason := fmt.Sprintf("%d of %d expected deliveries arrived (fewer than 95 %%)", c.delivered, c.expected)
		want := []string{}
		if c.suspicious {
			want = []string{reason}
		}
		if !slices.Equal(it.Suspicious, want) || js.Suspicious != c.suspicious {
			t.Errorf("%d of %d delivered: suspicious %q (JSON %v), want %q", c.delivered, c.expected, it.Suspicious, js.Suspicious, want)
		}
	}
}

// The later benchmark's connection rules at their thresholds, of 1,000
// connections: more than 5 % down (51) is suspicious, 50 is not; fewer
// than 75 % up (749) is suspicious, 750 is not.
func TestConnectionsDownAtTheThresholds(t *testing.T) {
	downReason := func(n int) string { return fmt.Sprintf("%d of 1000 connections down (more than 5 %%)", n) }
	upReason := func(n int) string { return fmt.Sprintf("%d of 1000 connections up (fewer than 75 %%)", n) }
	for down, want := range map[int][]string{
		0:   nil,
		50:  nil,
		51:  {downReason(51)},
		250: {downReason(250)},
		251: {downReason(251), upReason(749)},
	} {
		steps := oneStep(1000, classes(0, 1000))
		steps.Steps[0].FailedConnections = down
		if it, _, _ := reportOf(t, steps); !slices.Equal(it.Suspicious, want) {
			t.Errorf("%d of 1000 connections down: suspicious %q, want %q", down, it.Suspicious, want)
		}
	}
}

// The round check's slow rule at its threshold: more than 5 % of the
// delivered messages at 1 s or more is suspicious; 5 % itself is not.
func TestTooManySlowAtTheThreshold(t *testing.T) {
	slowReason := func(n int) string { return fmt.Sprintf("%d of 1000 messages took 1 s or more (more than 5 %%)", n) }
	for slow, want := range map[int64][]string{0: nil, 50: nil, 51: {slowReason(51)}} {
		it, _, _ := reportOf(t, oneStep(1000, classes(0, 1000-slow, class1s, slow)))
		if !slices.Equal(it.Suspicious, want) {
			t.Errorf("%d of 1000 slow: suspicious %q, want %q", slow, it.Suspicious, want)
		}
	}
}
