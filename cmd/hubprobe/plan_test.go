package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/tiers"
)

const workedExampleFile = "../../examples/plan-broadcast.workload.yml"

func runPlan(t *testing.T, file, output string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := planCommand(file, output, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// The example is the SignalR guide's worked example: 20 KiB broadcast to
// 100,000 connections every 5 s is exactly unit 100's outbound bandwidth,
// so at 70 % load it needs unit 200.
func TestPlanTextWorkedExample(t *testing.T) {
	code, out, errOut := runPlan(t, workedExampleFile, "text")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"Capacity plan for signalr from the Performance guide for Azure SignalR Service",
		"ticker    broadcast  broadcast  100000       1        20480 B  5s     4.1 kB/s (0.20 msg/s)  409.6 MB/s (20000 msg/s)",
		"Tier: unit 200; outbound bandwidth decides: on unit 100 it would be at 100.0 %",
		"outbound bandwidth  409.6 MB/s  819.2 MB/s  50.0 %  163.8 MB/s",
		"connections         100000      200000      50.0 %  40000",
		"App servers (the guide's suggestion on unit 200): 4",
		"  - unit sizes above 100 need the Premium_P2 SKU",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.TrimRight(line, " ") != line {
			t.Errorf("line %d has trailing spaces: %q", i+1, line)
		}
	}
}

func TestPlanJSONWorkedExample(t *testing.T) {
	code, out, errOut := runPlan(t, workedExampleFile, "json")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rec tiers.Recommendation
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		t.Fatalf("output is not a plan: %v\n%s", err, out)
	}
	s := rec.Scenarios[0]
	if !rec.Fits || rec.Units != 200 || rec.Deciding != tiers.LimitOutbound || rec.DecidingUnits != 100 ||
		rec.DecidingUtilization != 1 || s.OutboundBytesPerSecond != 409600000 || s.InboundBytesPerSecond != 4096 || rec.AppServers != 4 {
		t.Errorf("plan = %+v", rec)
	}
}

func TestPlanBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.workload.yml")
	body := "service: signalr\nscenarios:\n  - name: ticker\n    kind: broadcast\n    connections: 1000\n    senders: 1\n    interval: 5s\n"
	if err := os.WriteFile(bad, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, output, want string }{
		{bad, "text", bad + `:7: scenarios[0]: unknown key "interval"`},
		{filepath.Join(dir, "missing.yml"), "text", "missing.yml: cannot read"},
		{workedExampleFile, "yaml", `--output must be text or json, got "yaml"`},
	} {
		code, out, errOut := runPlan(t, tc.file, tc.output)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s (%s): exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.file, tc.output, code, out, errOut, tc.want)
		}
	}
}

func TestPlanExitsOneWhenNoTierFits(t *testing.T) {
	file := filepath.Join(t.TempDir(), "huge.workload.yml")
	body := "service: webpubsub\nscenarios:\n  - name: all\n    kind: rest_broadcast\n    connections: 900000\n    senders: 3\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runPlan(t, file, "text")
	if code != exitFailed || !strings.Contains(out, "Tier: none in the guide holds this workload; on unit 1000, the largest, outbound bandwidth is at 90.0 %") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// Every workload shipped in examples/ must plan cleanly.
func TestEveryExampleWorkloadPlans(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.workload.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workloads (err %v)", err)
	}
	for _, f := range files {
		if code, _, errOut := runPlan(t, f, "text"); code != exitOK {
			t.Errorf("%s: exit %d, %s", f, code, errOut)
		}
	}
}

// The sample output in docs/tiers.md is the real output of the example.
func TestPlanDocsShowTheRealOutput(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tiers.md")
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ hubprobe plan --workload.file=examples/plan-broadcast.workload.yml\n"
	_, block, found := strings.Cut(string(doc), prompt)
	block, _, closed := strings.Cut(block, "```")
	if !found || !closed {
		t.Fatal("docs/tiers.md has no sample output block for the example")
	}
	_, out, _ := runPlan(t, workedExampleFile, "text")
	out = strings.ReplaceAll(out, "../../examples/", "examples/")
	if out != block {
		t.Errorf("docs/tiers.md sample differs from the output:\n%s\nwant:\n%s", block, out)
	}
}
