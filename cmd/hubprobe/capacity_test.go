package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quickRamp is a capacity search sized by a profile: unit 1 echo at 0.3 %
// is 3 connections, ramped 1, 2, 3 senders against the embedded hub, which
// holds all of them.
const quickRamp = `
targets:
  - name: local
    embedded: true
    tier: {service: signalr, units: 1}
scenarios:
  - name: ramp
    target: local
    profile: {service: signalr, scenario: echo, units: 1, scale: 0.003}
    schedule: "@every 1h"
    send_interval: 100ms
    loss_timeout: 1s
    mode: capacity_search
    capacity_search: {base_sending: 1, step: 1, step_duration: 300ms}
`

func TestRunCapacitySearchPrintsStepsAndPlot(t *testing.T) {
	path := writeConfig(t, quickRamp)
	plot := filepath.Join(t.TempDir(), "ramp.svg")
	code, out, errOut := runCLI(t, context.Background(), "run", "--config.file", path, "--scenario", "ramp", "--plot.file", plot)
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr: %s; stdout: %s", code, errOut, out)
	}
	for _, want := range []string{
		"Capacity search: ramp (echo) against local, 3 connections",
		"Profile: signalr echo, unit 1 × 0.003: 3 connections, 3 senders, 2048-byte messages every 100ms (send_interval written in the file)",
		"Capacity: 30.00 msg/s in", "at step 3 (3 sending connections)",
		"Stopped: every connection sends", "Plot: " + plot,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	svg, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil || !strings.Contains(string(svg), `class="limit"`) {
		t.Errorf("plot is not an SVG with the 1 s line (%v)", err)
	}
}

func TestRunCapacitySearchJSON(t *testing.T) {
	path := writeConfig(t, quickRamp)
	code, out, errOut := runCLI(t, context.Background(), "run", "--config.file", path, "--scenario", "ramp", "--output", "json")
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr: %s", code, errOut)
	}
	var rep struct {
		StopReason string `json:"stop_reason"`
		Profile    string
		Capacity   struct {
			Step    int
			Sending int     `json:"sending_connections"`
			In      float64 `json:"inbound_messages_per_second"`
		}
		Steps []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if rep.StopReason != "all_sending" || len(rep.Steps) != 3 || rep.Capacity.Step != 3 || rep.Capacity.Sending != 3 ||
		rep.Capacity.In != 30 || !strings.HasPrefix(rep.Profile, "signalr echo") {
		t.Errorf("report %+v", rep)
	}
}

func TestRunShowsProfile(t *testing.T) {
	body := strings.Replace(quickEcho, "    kind: echo\n", "    profile: {service: signalr, scenario: echo, units: 1, scale: 0.003}\n", 1)
	code, out, errOut := runCLI(t, context.Background(), "run", "--config.file", writeConfig(t, body), "--scenario", "echo", "--output", "json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	var rep struct{ Profile string }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want := "signalr echo, unit 1 × 0.003: 3 connections, 3 senders, 512-byte messages every 200ms (connections, message_size, send_interval written in the file)"
	if rep.Profile != want {
		t.Errorf("profile %q\nwant    %q", rep.Profile, want)
	}
}
