package bench_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/bench"
	"github.com/hubprobe/hubprobe/internal/peerhub/peerhubtest"
)

// runQuickEcho runs the quick-start file, scaled, against srvURL.
func runQuickEcho(t *testing.T, url string) (*bench.Report, string) {
	t.Helper()
	rep := runFile(t, scaledCopy(t, "quickstart-echo.yaml", map[string]string{"webAppTarget": url, "connections": "10", "baseSending": "5", "step": "5"}))
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	return rep, out.String()
}

// A hub that holds every echo past 1 s breaks the benchmark's conditional
// stop in the first step: the ramp ends there, the report still shows it.
func TestSlowHubStopsTheRamp(t *testing.T) {
	t.Parallel()
	srv := peerhubtest.Start(t)
	srv.EchoDelay.Store(int64(1200 * time.Millisecond))
	rep, out := runQuickEcho(t, srv.URL)
	if rep.Passed() || len(rep.Items) != 1 || rep.Planned != 2 {
		t.Fatalf("passed %v after %d of %d steps, want a failure after 1 of 2\n%s", rep.Passed(), len(rep.Items), rep.Planned, out)
	}
	it := rep.Items[0]
	if it.Tally.Delivered != 5 || it.Slow != 5 || it.Lost != 0 {
		t.Errorf("delivered %d, slow %d, lost %d; want all 5 late, none lost", it.Tally.Delivered, it.Slow, it.Lost)
	}
	for _, want := range []string{
		"  0.00%: < 1000 ms",
		"   < 2 s: 5 (100.00%)",
		" Check: SUSPICIOUS: 5 of 5 messages took 1 s or more (more than 5 %)",
		" Stopped: after step 1 of 2: 100.00% of messages took 1 s or more, greater than latencyPercentage 1.00% (the benchmark's conditional stop)",
		" Result: FAIL (step 1: more than 1 % of messages took 1 s or more)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A hub that drops every echo loses everything: each step is suspicious
// for too few deliveries, and the run fails.
func TestLossyHubFails(t *testing.T) {
	t.Parallel()
	srv := peerhubtest.Start(t)
	srv.DropEcho.Store(true)
	rep, out := runQuickEcho(t, srv.URL)
	if rep.Passed() || len(rep.Items) == 0 {
		t.Fatalf("passed %v with %d steps, want a failure\n%s", rep.Passed(), len(rep.Items), out)
	}
	it := rep.Items[0]
	if it.Step.Sent != 5 || it.Lost != 5 || it.Tally.Delivered != 0 {
		t.Errorf("sent %d, lost %d, delivered %d; want 5, 5, 0", it.Step.Sent, it.Lost, it.Tally.Delivered)
	}
	for _, want := range []string{
		"0 of 5 expected deliveries arrived (fewer than 95 %)",
		" Result: FAIL (step 1: 5 of 5 expected deliveries lost)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A hub that is not there fails the run with a report that says why.
func TestUnreachableHubFails(t *testing.T) {
	t.Parallel()
	srv := peerhubtest.Start(t)
	url := srv.URL
	srv.Close()
	rep, out := runQuickEcho(t, url)
	if rep.Passed() || len(rep.Items) != 0 || !strings.Contains(out, "  0 connections established in 0s\n") || !strings.Contains(out, " Result: FAILED: ") {
		t.Errorf("passed %v with %d steps:\n%s", rep.Passed(), len(rep.Items), out)
	}
}
