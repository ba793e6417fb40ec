package tiers

import (
	"os"
	"strings"
	"testing"
)

const workedExampleFile = "../examples/plan-broadcast.workload.yml"

// planText plans a workload file and renders the plan as text, naming the
// file as name.
func planText(t *testing.T, file, name string) string {
	t.Helper()
	w, err := LoadWorkload(file)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Plan(w)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rec.WriteText(&b, name); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// workedExampleLines are lines of the worked example's plan: 20 KiB
// broadcast to 100,000 connections every 5 s is exactly unit 100's outbound
// bandwidth, so at 70 % load it needs unit 200.
var workedExampleLines = []string{
	"Capacity plan for signalr from the Performance guide for Azure SignalR Service",
	"ticker    broadcast  broadcast  100000       1        20480 B  5s     4.1 kB/s (0.20 msg/s)  409.6 MB/s (20000 msg/s)",
	"Tier: unit 200; outbound bandwidth decides: on unit 100 it would be at 100.0 %",
	"outbound bandwidth  409.6 MB/s  819.2 MB/s  50.0 %  163.8 MB/s",
	"connections         100000      200000      50.0 %  40000",
	"App servers (the guide's suggestion on unit 200): 4",
	"  - unit sizes above 100 need the Premium_P2 SKU",
}

func TestPlanTextWorkedExample(t *testing.T) {
	out := planText(t, workedExampleFile, workedExampleFile)
	for _, want := range workedExampleLines {
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

// The sample output in docs/tiers.md is the real output of the example.
func TestPlanDocsShowTheRealOutput(t *testing.T) {
	doc, err := os.ReadFile("../docs/tiers.md")
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ hubprobe plan --workload.file=examples/plan-broadcast.workload.yml\n"
	_, block, found := strings.Cut(string(doc), prompt)
	block, _, closed := strings.Cut(block, "```")
	if !found || !closed {
		t.Fatal("docs/tiers.md has no sample output block for the example")
	}
	if out := planText(t, workedExampleFile, "examples/plan-broadcast.workload.yml"); out != block {
		t.Errorf("docs/tiers.md sample differs from the output:\n%s\nwant:\n%s", block, out)
	}
}
