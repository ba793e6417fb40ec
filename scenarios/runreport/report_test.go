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
