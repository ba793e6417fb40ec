package specs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts/promtooltest"
	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/slo"
)

// testConfig has two targets, the second with a stricter objective over
// 28 days, and four scenarios: three that run at a fixed rate (one with a
// window of its own) and a capacity search, which has no objective.
const testConfig = `targets:
  - name: hub
    embedded: true
  - name: Chat.EU
    embedded: true
    slo: {objective: 0.995, window: 28d}
scenarios:
  - name: echo
    target: hub
    kind: echo
  - name: send_to_group
    target: Chat.EU
    kind: send_to_group
  - name: broadcast
    target: Chat.EU
    kind: broadcast
    slo: {objective: 0.99, window: 30d}
  - name: search
    target: hub
    kind: echo
    schedule: "@every 1h"
    mode: capacity_search
`

func objectives(t *testing.T, yaml string) []Objective {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "hubprobe.yml", nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := Objectives(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestObjectivesOfTheRunScenarios(t *testing.T) {
	want := []Objective{
		{Name: "hub-echo", Target: "hub", Scenario: "echo", Objective: slo.Default},
		{Name: "chat-eu-send-to-group", Target: "Chat.EU", Scenario: "send_to_group", Objective: slo.Objective{Ratio: 0.995, Window: 28 * slo.Day}},
		{Name: "chat-eu-broadcast", Target: "Chat.EU", Scenario: "broadcast", Objective: slo.Default},
	}
	if got := objectives(t, testConfig); !reflect.DeepEqual(got, want) {
		t.Errorf("objectives\n got %+v\nwant %+v", got, want)
	}
	o := want[1]
	if got := o.ErrorSelector(); got != `hubprobe_expected_deliveries_total{target="Chat.EU", scenario="send_to_group", outcome=~"over_1s|lost"}` {
		t.Errorf("error selector %s", got)
	}
	if got := o.TotalSelector(); got != `hubprobe_expected_deliveries_total{target="Chat.EU", scenario="send_to_group"}` {
		t.Errorf("total selector %s", got)
	}
}

func TestObjectivesRefuseWhatNoToolNames(t *testing.T) {
	long := strings.Repeat("a", 40)
	for yaml, want := range map[string]string{
		"targets: [{name: a_b, embedded: true}, {name: a, embedded: true}]\nscenarios: [{name: c, target: a_b, kind: echo}, {name: b.c, target: a, kind: echo}]\n": `scenario c of target a_b and scenario b.c of target a would both be named "a-b-c": rename one`,
		"targets: [{name: " + long + ", embedded: true}]\nscenarios: [{name: " + long + ", kind: echo}]\n":                                                         `gives the object name "` + long + "-" + long + `": a target and scenario name of 63 characters together at most`,
		"targets: [{name: _, embedded: true}]\nscenarios: [{name: _, kind: echo}]\n":                                                                               `scenario _ of target _ gives the object name ""`,
		"targets: [{name: hub, embedded: true}]\nscenarios: [{name: s, kind: echo, mode: capacity_search, schedule: \"@every 1h\"}]\n":                             "no scenario with mode: run, so no objective",
	} {
		cfg, err := config.Parse([]byte(yaml), "hubprobe.yml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Objectives(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %s", yaml, err, want)
		}
	}
}

// A name of exactly 63 characters, the longest Kubernetes and OpenSLO
// take, is kept as it is.
func TestObjectNameOfTheLongestLength(t *testing.T) {
	target, scenario := strings.Repeat("t", 31), strings.Repeat("s", 31)
	list := objectives(t, "targets: [{name: "+target+", embedded: true}]\nscenarios: [{name: "+scenario+", kind: echo}]\n")
	if want := target + "-" + scenario; len(list) != 1 || list[0].Name != want || len(want) != maxNameLength {
		t.Errorf("objectives %+v, want one named %s", list, want)
	}
}

func TestUnknownFormat(t *testing.T) {
	err := Write(&bytes.Buffer{}, "nobl9", objectives(t, testConfig))
	if err == nil || err.Error() != `unknown format "nobl9" (valid: openslo, pyrra, sloth)` {
		t.Errorf("error %v", err)
	}
}

// written renders the test configuration's objectives in format.
func written(t *testing.T, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, format, objectives(t, testConfig)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// documents splits a YAML stream into its documents.
func documents(data []byte) []string {
	var docs []string
	for _, d := range strings.Split("\n"+string(data), "\n---\n") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, strings.TrimPrefix(d, "\n"))
		}
	}
	return docs
}

// tool finds a tool scripts/test.sh installs with go install in
// $(go env GOPATH)/bin; a missing one fails the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	bin, err := promtooltest.GoBin()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(bin, name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is not in $(go env GOPATH)/bin: run scripts/test.sh, which installs it with go install at the pinned version", name)
	}
	return path
}

// runTool runs a command for at most a minute; it returns its combined
// output and error.
func runTool(path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sloth v0.16.0's own validate accepts every spec, each with the SLO period
// its comment names, and refuses a spec broken on purpose (so that its
// exit status means something).
func TestSlothValidatesEverySpec(t *testing.T) {
	sloth := tool(t, "sloth")
	docs := documents(written(t, FormatSloth))
	if len(docs) != 2 {
		t.Fatalf("%d sloth specs, want one per window (28d, 30d):\n%s", len(docs), strings.Join(docs, "---\n"))
	}
	for i, period := range []string{"28d", "30d"} {
		if want := "--default-slo-period=" + period + " "; !strings.Contains(docs[i], want) {
			t.Errorf("spec %d does not say %s:\n%s", i, want, docs[i])
		}
		out, err := runTool(sloth, "validate", "--default-slo-period="+period, "-i", writeFile(t, period+".yml", docs[i]))
		if err != nil || !strings.Contains(out, "Validation succeeded") {
			t.Errorf("sloth validate (%s): %v\n%s\n%s", period, err, out, docs[i])
		}
	}
	broken := strings.ReplaceAll(docs[1], "[{{.window}}]", "[5m]")
	if out, err := runTool(sloth, "validate", "-i", writeFile(t, "broken.yml", broken)); err == nil {
		t.Errorf("sloth validate accepted queries without the window variable:\n%s", out)
	}
	for i, want := range []string{"objective: 99.5\n", "objective: 99\n"} {
		if !strings.Contains(docs[i], want) {
			t.Errorf("spec %d does not give the objective as a percentage, %s", i, want)
		}
	}
	if n := strings.Count(docs[0], "- name: "); n != 1 {
		t.Errorf("the 28d spec holds %d SLOs, want chat-eu-send-to-group only:\n%s", n, docs[0])
	}
}

func TestObjectivePercentages(t *testing.T) {
	for ratio, want := range map[float64]string{0.99: "99", 0.995: "99.5", 0.999: "99.9", 0.9999: "99.99", 0.95: "95"} {
		if got := percentNumber(ratio); got != want {
			t.Errorf("percentNumber(%g) = %s, want %s", ratio, got, want)
		}
	}
	if got := fmt.Sprint(objectives(t, testConfig)[1].Description()); !strings.HasPrefix(got, "99.5 % of the expected deliveries") {
		t.Errorf("description %q", got)
	}
}
