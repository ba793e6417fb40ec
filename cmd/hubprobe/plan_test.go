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

// Every workload shipped in examples/ must plan cleanly; the text itself
// is pinned in the tiers package.
func TestEveryExampleWorkloadPlans(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.workload.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workloads (err %v)", err)
	}
	for _, f := range files {
		code, out, errOut := runPlan(t, f, "text")
		if code != exitOK || errOut != "" || !strings.HasPrefix(out, "Capacity plan for ") {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", f, code, errOut, out)
		}
	}
}
