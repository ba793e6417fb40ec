// Package specs writes hubprobe's objectives for the SLO tools teams
// already run: sloth (prometheus/v1 specs), pyrra (ServiceLevelObjective
// objects of pyrra.dev/v1alpha1) and OpenSLO (openslo/v1 documents). Each
// fixed-rate scenario of the configuration is one SLO, with the objective
// and window its slo: keys resolve to, and the indicator hubprobe's own
// rules use: expected deliveries within 1 s over all of them, from
// hubprobe_expected_deliveries_total.
package specs

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/slo"
)

// Formats `hubprobe slo --format` accepts.
const (
	FormatSloth   = "sloth"
	FormatPyrra   = "pyrra"
	FormatOpenSLO = "openslo"
)

// Formats lists them.
var Formats = []string{FormatSloth, FormatPyrra, FormatOpenSLO}

// Service is the service every SLO belongs to, as the tools name it.
const Service = "hubprobe"

// AlertName names the alerts the tools generate, as hubprobe's own rules
// name theirs: use one or the other, so that one burn is one page.
const AlertName = "HubprobeErrorBudgetBurn"

// Objective is one scenario's SLO.
type Objective struct {
	// Name is a Kubernetes object name (DNS-1123 label) made of the target
	// and scenario names, which sloth accepts too.
	Name             string
	Target, Scenario string
	slo.Objective
}

// ErrorSelector selects the scenario's bad expected deliveries: later than
// 1 s, or lost.
func (o Objective) ErrorSelector() string {
	return fmt.Sprintf("%s{target=%q, scenario=%q, %s}", slo.DeliveriesMetric, o.Target, o.Scenario, slo.BadMatcher)
}

// TotalSelector selects all of the scenario's expected deliveries.
func (o Objective) TotalSelector() string {
	return fmt.Sprintf("%s{target=%q, scenario=%q}", slo.DeliveriesMetric, o.Target, o.Scenario)
}

// Description says what the SLO is, for the tools' description fields.
func (o Objective) Description() string {
	return fmt.Sprintf("%s of the expected deliveries of hubprobe's scenario %s on target %s arrive within 1 s "+
		"(a lost message counts as a late one): the hub vendors' capacity definition.", percent(o.Ratio), o.Scenario, o.Target)
}

// percent writes a ratio as a percentage without float noise.
func percent(ratio float64) string { return fmt.Sprintf("%s %%", percentNumber(ratio)) }

func percentNumber(ratio float64) string { return fmt.Sprintf("%.6g", ratio*100) }

// Objectives lists the SLO of every scenario of cfg that runs at a fixed
// rate (a capacity search saturates the hub on purpose and has none), in
// the configuration's order.
func Objectives(cfg *config.Config) ([]Objective, error) {
	var out []Objective
	seen := map[string]string{}
	for _, s := range cfg.Scenarios {
		if s.Mode != config.ModeRun {
			continue
		}
		name := objectName(s.Target, s.Name)
		whose := fmt.Sprintf("scenario %s of target %s", s.Name, s.Target)
		if other, dup := seen[name]; dup {
			return nil, fmt.Errorf("%s and %s would both be named %q: rename one", other, whose, name)
		}
		if name == "" || len(name) > maxNameLength {
			return nil, fmt.Errorf("%s gives the object name %q: a target and scenario name of %d characters together at most", whose, name, maxNameLength)
		}
		seen[name] = whose
		out = append(out, Objective{Name: name, Target: s.Target, Scenario: s.Name, Objective: s.Objective})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario with mode: %s, so no objective", config.ModeRun)
	}
	return out, nil
}

// maxNameLength is the longest DNS-1123 label, which OpenSLO and pyrra
// objects are named with.
const maxNameLength = 63

// objectName is target-scenario in lower case, with "_" and "." (which
// config names allow) as "-", and no "-" at either end.
func objectName(target, scenario string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, target+"-"+scenario)
	return strings.Trim(name, "-")
}

// Write writes objectives (from Objectives) in format.
func Write(w io.Writer, format string, objectives []Objective) error {
	switch format {
	case FormatSloth:
		return writeSloth(w, objectives)
	case FormatPyrra:
		return writeDocuments(w, pyrraObjects(objectives))
	case FormatOpenSLO:
		return writeDocuments(w, openSLODocuments(objectives))
	}
	return fmt.Errorf("unknown format %q (valid: %s)", format, strings.Join(slices.Sorted(slices.Values(Formats)), ", "))
}
