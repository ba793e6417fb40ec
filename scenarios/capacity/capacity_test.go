package capacity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/hub"
	"github.com/hubprobe/hubprobe/hub/hubtest"
	"github.com/hubprobe/hubprobe/internal/peerhub/peerhubtest"
	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
	"github.com/hubprobe/hubprobe/scenarios/scenariostest"
	"github.com/hubprobe/hubprobe/scenarios/schedule"
)

// saturatingHub is the embedded hub made to saturate: while the messages it
// receives stay at or under limit per second it delivers at once; above,
// every delivery waits (rate/limit − 1) × 50 s, at most 3 s. The rate is
// measured over the last second, so it follows a step of the ramp.
func saturatingHub(t *testing.T, limit float64) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	h, srv := hubtest.StartHub(t, hub.Options{}, reg)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		followLoad(stop, reg, func(rate float64) {
			over := max(rate/limit-1, 0)
			h.SetDeliveryDelay(min(time.Duration(over*50*float64(time.Second)), 3*time.Second))
		})
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	return srv.URL()
}

// followLoad calls set with the hub's received-message rate over the last
// second, every 20 ms, until stop closes.
func followLoad(stop <-chan struct{}, reg *prometheus.Registry, set func(rate float64)) {
	type sample struct {
		at    time.Time
		count float64
	}
	var window []sample
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := sample{time.Now(), hubReceived(reg)}
		window = append(window, now)
		for len(window) > 2 && now.at.Sub(window[1].at) >= time.Second {
			window = window[1:]
		}
		if span := now.at.Sub(window[0].at).Seconds(); span >= 0.5 {
			set((now.count - window[0].count) / span)
		}
	}
}

func hubReceived(reg *prometheus.Registry) float64 {
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "hubprobe_hub_messages_received_total" && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// captureRecorder keeps the last capacity search handed to it, on top of
// a tallying recorder.
type captureRecorder struct {
	scenarios.Recorder
	mu   sync.Mutex
	last *capacity.Capacity
}

func (c *captureRecorder) CapacityFound(found capacity.Capacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = &found
}

// TestCapacitySearchStopsWhereTheHubSaturates ramps 1, 2, 3, 4 echo senders
// at 20 messages per second each against a hub that holds up to 50 per
// second: steps 1 (20/s) and 2 (40/s) hold, step 3 (60/s) pushes deliveries
// past 1 s, so the capacity is step 2 and the reason slow_messages.
func TestCapacitySearchStopsWhereTheHubSaturates(t *testing.T) {
	url := saturatingHub(t, 50)
	s := scenariostest.Scenario("echo", 4, time.Second, 50*time.Millisecond)
	s.Name, s.LossTimeout, s.Mode = "echo-capacity", 4*time.Second, config.ModeCapacitySearch
	s.CapacitySearch = &config.CapacitySearch{BaseSending: 1, Step: 1, StepDuration: time.Second}
	tally := scenariostest.NewRecorder()
	rec := &captureRecorder{Recorder: tally}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(url), Recorder: rec}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	res := schedule.Run(ctx, runner, capacity.SearchOptions{}, time.Now()) // the scheduler's entry point runs the search for this mode
	if res.Outcome != scenarios.ResultSuccess {
		t.Fatalf("search failed: %s", res.Error)
	}
	if rec.last == nil {
		t.Fatal("the search was not handed to the capacity recorder")
	}
	c := *rec.last
	var report bytes.Buffer
	_ = c.WriteText(&report)
	t.Logf("capacity search:\n%s", report.String())
	checkSteps(t, c)
	found, ok := c.Found()
	if !ok || found.Number != 2 || found.Senders != 2 {
		t.Fatalf("capacity at step %d with %d senders (found %v), want step 2 with 2", found.Number, found.Senders, ok)
	}
	// Two senders every 50 ms for 1 s: exactly 40 sends, all delivered. The
	// rates divide by the step's sending time: 1 s, or more when the probe
	// fell behind its schedule.
	secs := found.Duration.Seconds()
	if found.Sent != 40 || found.Received != 40 || secs < 1 || secs > 1.5 ||
		found.InboundMessagesPerSecond() != 40/secs || found.OutboundMessagesPerSecond() != 40/secs {
		t.Errorf("capacity step sent %d, received %d in %s: %.2f msg/s in, %.2f out; want 40, 40 in 1s: 40, 40",
			found.Sent, found.Received, found.Duration, found.InboundMessagesPerSecond(), found.OutboundMessagesPerSecond())
	}
	if got := tally.Tally().Sent; got != 0 {
		t.Errorf("the search recorded %d messages sent, want none: its messages stay out of the SLO series", got)
	}
}

func checkSteps(t *testing.T, c capacity.Capacity) {
	t.Helper()
	if c.StopReason != capacity.StopSlowMessages || len(c.Steps) != 3 {
		t.Fatalf("stopped for %q after %d steps, want slow_messages after 3: %+v", c.StopReason, len(c.Steps), c.Steps)
	}
	for i, st := range c.Steps {
		if st.Number != i+1 || st.Senders != i+1 || st.Sent != int64(20*(i+1)) {
			t.Errorf("step %d: number %d, %d senders, %d sent; want %d, %d, %d", i, st.Number, st.Senders, st.Sent, i+1, i+1, 20*(i+1))
		}
	}
	if !c.Steps[0].Passed() || !c.Steps[1].Passed() || c.Steps[2].Passed() {
		t.Errorf("verdicts %q %q %q, want pass, pass, slow_messages", c.Steps[0].Verdict, c.Steps[1].Verdict, c.Steps[2].Verdict)
	}
	if share := c.Steps[2].SlowShare(); share < 0.1 {
		t.Errorf("step 3 had %.1f %% of messages at 1 s or more; the saturated hub should delay far more", 100*share)
	}
	if c.Steps[1].SlowShare() != 0 || c.Steps[1].Latency.P99 >= time.Second {
		t.Errorf("step 2 slow share %.3f, p99 %s: the hub was not saturated yet", c.Steps[1].SlowShare(), c.Steps[1].Latency.P99)
	}
}

// TestCapacitySearchRunsOutOfSenders ramps against a hub that never
// saturates: every connection ends up sending and the search says the
// capacity is at least the last step.
func TestCapacitySearchRunsOutOfSenders(t *testing.T) {
	srv := peerhubtest.Start(t)
	s := scenariostest.Scenario("broadcast", 3, time.Second, 100*time.Millisecond)
	s.Mode = config.ModeCapacitySearch
	s.CapacitySearch = &config.CapacitySearch{BaseSending: 1, Step: 2, StepDuration: 300 * time.Millisecond}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(srv.URL), Recorder: scenarios.Discard}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := capacity.Search(ctx, runner, capacity.SearchOptions{})
	if c.StopReason != capacity.StopAllSending || len(c.Steps) != 2 {
		t.Fatalf("stopped for %q after %d steps (%s), want all_sending after 2", c.StopReason, len(c.Steps), c.Result.Error)
	}
	found, _ := c.Found()
	// 3 senders every 100 ms for 300 ms, each broadcast to 3 connections.
	if found.Senders != 3 || found.Sent != 9 || found.Received != 27 {
		t.Errorf("last step: %d senders, %d sent, %d received; want 3, 9, 27", found.Senders, found.Sent, found.Received)
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Capacity search: broadcast (broadcast)", "FAIL", "every connection sends"} {
		if want == "FAIL" {
			if strings.Contains(text.String(), want) {
				t.Errorf("report marks a step failed:\n%s", text.String())
			}
			continue
		}
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
}

// A search that cannot connect reports a failed run and no capacity.
func TestCapacitySearchThatCannotConnect(t *testing.T) {
	dead := peerhubtest.Start(t)
	url := dead.URL
	dead.Close()
	s := scenariostest.Scenario("echo", 2, time.Second, 100*time.Millisecond)
	s.Mode, s.ConnectTimeout = config.ModeCapacitySearch, 2*time.Second
	rec := &captureRecorder{Recorder: scenarios.Discard}
	runner := &scenarios.Runner{Scenario: s, Endpoint: scenariostest.SignalR(url), Recorder: rec}
	c := capacity.Search(context.Background(), runner, capacity.SearchOptions{})
	if c.Result.Outcome != scenarios.ResultFailure || c.Measured() || rec.last != nil {
		t.Errorf("outcome %q, measured %v, exported %v; want a failure with nothing exported", c.Result.Outcome, c.Measured(), rec.last != nil)
	}
}

func TestCapacityReportAndPlot(t *testing.T) {
	c := capacity.Capacity{
		Result:     scenarios.Result{Target: "hub", Scenario: "echo", Kind: "echo", Outcome: scenarios.ResultSuccess},
		Scenario:   config.DefaultScenario,
		StopReason: capacity.StopThrottled,
		Steps: []capacity.Step{
			{Number: 1, Senders: 5, Duration: 10 * time.Second, Sent: 50, Expected: 50, Received: 50,
				SentBytes: 120000, ReceivedBytes: 130000, Latency: scenarios.Quantiles{P99: 20 * time.Millisecond}},
			{Number: 2, Senders: 10, Duration: 10 * time.Second, Sent: 100, Expected: 100, Received: 100, Throttled: 3,
				Latency: scenarios.Quantiles{P99: 2 * time.Second}, Verdict: capacity.StopThrottled},
		},
	}
	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Capacity: 5.00 msg/s in, 5.00 msg/s out, 11.72KB/s in, 12.70KB/s out at step 1 (5 sending connections)",
		"Stopped: step 2: the hub throttled 3 times", "FAIL: throttled",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var report capacity.Report
	if err := json.Unmarshal(js.Bytes(), &report); err != nil {
		t.Fatal(err)
	}
	if report.Capacity == nil || report.Capacity.Step != 1 || report.Capacity.InboundBytesPerSecond != 12000 ||
		len(report.Steps) != 2 || report.Steps[1].Passed || report.StopReason != "throttled" {
		t.Errorf("JSON report: %+v", report)
	}
	checkPlot(t, c)
}

// checkPlot parses the SVG: three series with a point per step, and the
// dashed 1 s line on the latency axis (0 to 2.5 s here: p99 2 s × 1.1,
// rounded up).
func checkPlot(t *testing.T, c capacity.Capacity) {
	t.Helper()
	var svg bytes.Buffer
	if err := c.WritePlot(&svg); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Lines []struct {
			Class string  `xml:"class,attr"`
			Y1    float64 `xml:"y1,attr"`
		} `xml:"line"`
		Polylines []struct {
			Class  string `xml:"class,attr"`
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal(svg.Bytes(), &doc); err != nil {
		t.Fatalf("plot is not well-formed SVG: %v", err)
	}
	series := map[string]int{}
	for _, p := range doc.Polylines {
		series[p.Class] = len(strings.Fields(p.Points))
	}
	if series["inbound"] != 2 || series["outbound"] != 2 || series["p99"] != 2 {
		t.Errorf("series points %v, want 2 each for inbound, outbound, p99", series)
	}
	// The plot area runs from y=50 (2.5 s) to y=360 (0 s): 1 s is at 236.
	var limit float64
	for _, l := range doc.Lines {
		if l.Class == "limit" {
			limit = l.Y1
		}
	}
	if limit != 236 {
		t.Errorf("1 s line at y=%g, want 236", limit)
	}
}
