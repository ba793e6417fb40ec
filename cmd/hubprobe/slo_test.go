package main

import (
	"context"
	"strings"
	"testing"
)

// `hubprobe slo` prints the objectives of the configuration's run
// scenarios; a configuration without one, or an unknown format, is a usage
// error that says why.
func TestSLOCommand(t *testing.T) {
	code, out, errOut := runCLI(t, context.Background(), "slo", "--format", "pyrra")
	if code != exitOK || strings.Count(out, "kind: ServiceLevelObjective") != 8 || !strings.Contains(out, "name: embedded-echo\n") {
		t.Errorf("exit %d, want the 8 run and held scenarios of the default configuration as pyrra objects:\n%s%s", code, out, errOut)
	}
	path := writeConfig(t, "targets: [{name: hub, embedded: true}]\n"+
		"scenarios: [{name: s, kind: echo, mode: capacity_search, schedule: \"@every 1h\"}]\n")
	code, _, errOut = runCLI(t, context.Background(), "slo", "--format", "sloth", "--config.file", path)
	if code != exitUsage || !strings.Contains(errOut, "no scenario with mode: run, so no objective") {
		t.Errorf("exit %d, stderr %q; want 2 saying there is no objective", code, errOut)
	}
	if code, _, _ = runCLI(t, context.Background(), "slo", "--format", "nobl9"); code != exitUsage {
		t.Errorf("unknown format: exit %d, want 2", code)
	}
}
