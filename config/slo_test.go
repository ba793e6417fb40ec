package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/slo"
)

// sloConfig is a config with two targets, the first with the slo: section
// targetSLO, and three echo scenarios: a of the first target with the slo:
// section scenarioSLO, b of the first target without one, c of the second.
func sloConfig(targetSLO, scenarioSLO string) string {
	return `targets:
  - name: hub
    embedded: true
` + targetSLO + `  - name: other
    embedded: true
scenarios:
  - name: a
    target: hub
    kind: echo
` + scenarioSLO + `  - name: b
    target: hub
    kind: echo
  - name: c
    target: other
    kind: echo
`
}

// Each key is inherited on its own: scenario, else target, else default.
func TestScenarioObjectiveInheritsKeyByKey(t *testing.T) {
	cases := []struct {
		name, target, scenario string
		a, b, c                slo.Objective
	}{
		{"none", "", "", slo.Default, slo.Default, slo.Default},
		{"target objective only", "    slo: {objective: 0.995}\n", "",
			slo.Objective{Ratio: 0.995, Window: slo.DefaultWindow}, slo.Objective{Ratio: 0.995, Window: slo.DefaultWindow}, slo.Default},
		{"scenario window over target objective", "    slo: {objective: 0.995}\n", "    slo: {window: 28d}\n",
			slo.Objective{Ratio: 0.995, Window: 28 * slo.Day}, slo.Objective{Ratio: 0.995, Window: slo.DefaultWindow}, slo.Default},
		{"scenario overrides both", "    slo: {objective: 0.995, window: 28d}\n", "    slo: {objective: 0.9, window: 30d}\n",
			slo.Objective{Ratio: 0.9, Window: slo.DefaultWindow}, slo.Objective{Ratio: 0.995, Window: 28 * slo.Day}, slo.Default},
		{"window in hours", "", "    slo: {window: 672h}\n",
			slo.Objective{Ratio: 0.99, Window: 28 * slo.Day}, slo.Default, slo.Default},
		{"empty section", "    slo:\n", "    slo: {}\n", slo.Default, slo.Default, slo.Default},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(sloConfig(c.target, c.scenario)), "slo.yml", testKinds)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []slo.Objective{c.a, c.b, c.c} {
				if got := cfg.Scenarios[i].Objective; got != want {
					t.Errorf("scenario %s: objective %+v, want %+v", cfg.Scenarios[i].Name, got, want)
				}
			}
		})
	}
}

// A bad slo: key fails with the file, line and key, and the reason.
func TestInvalidSLO(t *testing.T) {
	cases := []struct{ target, scenario, want string }{
		{"    slo: {objective: 1}\n", "", `slo.yml:4: targets[0].slo.objective: must be greater than 0 and less than 1 (0.99 is 99 %), got 1`},
		{"    slo: {objective: 0}\n", "", `slo.yml:4: targets[0].slo.objective: must be greater than 0 and less than 1 (0.99 is 99 %), got 0`},
		{"", "    slo: {objective: 99}\n", `slo.yml:10: scenarios[0].slo.objective: must be greater than 0 and less than 1 (0.99 is 99 %), got 99`},
		{"", "    slo: {objective: -0.5}\n", `slo.yml:10: scenarios[0].slo.objective: must be greater than 0 and less than 1 (0.99 is 99 %), got -0.5`},
		{"    slo: {window: 7d}\n", "", `slo.yml:4: targets[0].slo.window: must be one of 28d or 30d, got 7d`},
		{"", "    slo: {window: 31d}\n", `slo.yml:10: scenarios[0].slo.window: must be one of 28d or 30d, got 31d`},
		{"", "    slo: {window: 30}\n", `slo.yml:10: scenarios[0].slo.window: must be one of 28d or 30d, got 0s`},
		{"", "    slo: {window: a month}\n", `slo.yml:10: scenarios[0].slo.window: expected a window such as "30d", got "a month"`},
		{"", "    slo: {objectiv: 0.9}\n", `slo.yml:10: scenarios[0].slo: unknown key "objectiv"`},
		{"    slo: 0.99\n", "", `slo.yml:4: targets[0].slo: expected a mapping, got "0.99"`},
		{"", "    mode: capacity_search\n    slo: {objective: 0.9}\n",
			`slo.yml:11: scenarios[0].slo: not allowed with mode: capacity_search, which saturates the hub on purpose and has no objective`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(sloConfig(c.target, c.scenario)), "slo.yml", testKinds)
		var cerr *Error
		if err == nil || !errors.As(err, &cerr) || err.Error() != c.want {
			t.Errorf("%q%q: error %v, want %s", c.target, c.scenario, err, c.want)
		}
	}
}

// A printed config with slo: sections parses to the same objectives.
func TestSLORoundTrip(t *testing.T) {
	cfg, err := Parse([]byte(sloConfig("    slo: {objective: 0.995, window: 28d}\n", "    slo: {window: 30d}\n")), "slo.yml", testKinds)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "window: 28d") {
		t.Errorf("printed config does not write the window as 28d:\n%s", out)
	}
	again, err := Parse(out, "printed.yml", testKinds)
	if err != nil {
		t.Fatalf("printed config does not parse: %v\n%s", err, out)
	}
	for i, s := range again.Scenarios {
		if s.Objective != cfg.Scenarios[i].Objective {
			t.Errorf("scenario %s: objective %+v after printing, %+v before", s.Name, s.Objective, cfg.Scenarios[i].Objective)
		}
	}
	if got := time.Duration(again.Scenarios[0].SLO.Window); got != 30*slo.Day {
		t.Errorf("scenario a's window %s, want 30d", got)
	}
}
