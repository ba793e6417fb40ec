package runreport_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/runreport"
)

// A 1,000-connection run at 1 message per second: 10 s of sending inside a
// 20 s run (connecting and draining take the rest). Its rates are over the
// sending window, 100/s, not diluted by the ramp-up to 50/s.
func TestReportRatesAreOverTheSendingWindow(t *testing.T) {
	r := scenarios.Result{
		Scenario: "echo", Target: "hub", Kind: "echo", Connections: 1000, Outcome: scenarios.ResultSuccess,
		Duration: 20 * time.Second, SendWindow: 10 * time.Second,
		Sent: 1000, Expected: 1000, Received: 1000, Scheduled: 1000,
		SentBytes: 2048 * 1000, ReceivedBytes: 2048 * 1000,
	}
	var text bytes.Buffer
	if err := runreport.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Requests/sec: 100.00", "Responses/sec: 100.00", "Write throughput: 200.00KB/s"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	var j runreport.JSON
	var out bytes.Buffer
	if err := runreport.WriteJSON(&out, r); err != nil || json.Unmarshal(out.Bytes(), &j) != nil {
		t.Fatalf("json report: %v: %s", err, out.String())
	}
	if j.SentPerSec != 100 || j.ReceivedPerSec != 100 || j.SendWindowSecs != 10 {
		t.Errorf("json rates %v/%v over %v s, want 100/100 over 10 s", j.SentPerSec, j.ReceivedPerSec, j.SendWindowSecs)
	}
}

// A held report says why its connections dropped, how many came back, and
// what fell due while they were away; in text and in JSON.
func TestReportSaysDropsAndWhatFellDueAway(t *testing.T) {
	r := scenarios.Result{Scenario: "held", Kind: "held", Target: "hub", Connections: 2, Outcome: scenarios.ResultSuccess,
		Drops: map[string]int64{"transport": 2, "server_reconnect": 1}, Reconnects: 3, Away: 20, AwayLate: 12, AwayLost: 8}
	var text strings.Builder
	if err := runreport.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\n  Drops: server_reconnect=1, transport=2; reconnected 3\n    While away: 20 fell due, 12 arrived late, 8 lost\n  Result: ",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	j := runreport.NewJSON(r)
	if j.Drops["transport"] != 2 || j.Reconnects != 3 || j.Away != 20 || j.AwayLate != 12 || j.AwayLost != 8 {
		t.Errorf("JSON drops %v, reconnects %d, away %d/%d/%d", j.Drops, j.Reconnects, j.Away, j.AwayLate, j.AwayLost)
	}
	var none strings.Builder
	_ = runreport.WriteText(&none, scenarios.Result{Outcome: scenarios.ResultSuccess})
	if !strings.Contains(none.String(), "\n  Drops: none\n  Result: ") || strings.Contains(none.String(), "While away") {
		t.Errorf("a run without drops reports:\n%s", none.String())
	}
}
