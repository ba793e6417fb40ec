package specs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/hubprobe/hubprobe/alerts/promtooltest"
)

// pyrra's Go module is not served by the module proxy this project builds
// with, so its CRD types cannot be imported. The objects are decoded
// strictly into the ServiceLevelObjective schema of pyrra.dev/v1alpha1 as
// its API defines it (every field of the spec, so that a misspelt or
// misplaced key fails), and then held to the checks pyrra's admission
// webhook makes: a target from 0 to 100, a window Prometheus parses, a
// ratio indicator whose errors and total are two different PromQL vector
// selectors. promtool parses each selector with Prometheus's own parser.
type pyrraSLO struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Description             string         `json:"description"`
		Target                  string         `json:"target"`
		Window                  string         `json:"window"`
		Indicator               pyrraIndicator `json:"indicator"`
		Alerting                pyrraAlerting  `json:"alerting"`
		PartialResponseStrategy string         `json:"partial_response_strategy,omitempty"`
		PerformanceOverAccuracy bool           `json:"performanceOverAccuracy,omitempty"`
		RuleOutput              *struct {
			ShortRulesLabels         map[string]string `json:"shortRulesLabels,omitempty"`
			LongRulesLabels          map[string]string `json:"longRulesLabels,omitempty"`
			EnableDescriptionAsLabel bool              `json:"enableDescriptionAsLabel,omitempty"`
		} `json:"ruleOutput,omitempty"`
	} `json:"spec"`
}

type pyrraIndicator struct {
	Ratio *struct {
		Errors   pyrraQuery `json:"errors"`
		Total    pyrraQuery `json:"total"`
		Grouping []string   `json:"grouping"`
	} `json:"ratio,omitempty"`
	Latency *struct {
		Success  pyrraQuery `json:"success"`
		Total    pyrraQuery `json:"total"`
		Grouping []string   `json:"grouping"`
	} `json:"latency,omitempty"`
	LatencyNative *struct {
		Total    pyrraQuery `json:"total"`
		Latency  string     `json:"latency"`
		Grouping []string   `json:"grouping"`
	} `json:"latencyNative,omitempty"`
	BoolGauge *struct {
		Metric   string   `json:"metric"`
		Grouping []string `json:"grouping"`
	} `json:"bool_gauge,omitempty"`
}

type pyrraAlerting struct {
	Disabled   *bool  `json:"disabled,omitempty"`
	Burnrates  *bool  `json:"burnrates,omitempty"`
	Absent     *bool  `json:"absent,omitempty"`
	Name       string `json:"name,omitempty"`
	AbsentName string `json:"absentName,omitempty"`
	Severities *struct {
		Absent       string `json:"absent,omitempty"`
		FastBurn     string `json:"fastBurn,omitempty"`
		MediumBurn   string `json:"mediumBurn,omitempty"`
		SlowBurn     string `json:"slowBurn,omitempty"`
		LongTermBurn string `json:"longTermBurn,omitempty"`
	} `json:"severities,omitempty"`
}

// vectorSelector is a metric name and label matchers, nothing more: what
// pyrra takes a ratio's metrics to be.
var vectorSelector = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"(,\s*)?)*\}$`)

// pyrraCheck makes pyrra's admission checks of one object.
func pyrraCheck(s pyrraSLO) error {
	target, err := strconv.ParseFloat(s.Spec.Target, 64)
	switch {
	case s.APIVersion != "pyrra.dev/v1alpha1" || s.Kind != "ServiceLevelObjective":
		return fmt.Errorf("%s %s is not a pyrra.dev/v1alpha1 ServiceLevelObjective", s.APIVersion, s.Kind)
	case s.Name == "":
		return fmt.Errorf("name must be set")
	case err != nil || target < 0 || target > 100:
		return fmt.Errorf("target %q must be a number from 0 to 100 (%v)", s.Spec.Target, err)
	case target > 0 && target < 1:
		return fmt.Errorf("target %q is a ratio, pyrra takes a percentage", s.Spec.Target)
	case s.Spec.Indicator.Ratio == nil:
		return fmt.Errorf("no ratio indicator")
	}
	if _, err := model.ParseDuration(s.Spec.Window); err != nil {
		return fmt.Errorf("window %q: %w", s.Spec.Window, err)
	}
	errs, total := s.Spec.Indicator.Ratio.Errors.Metric, s.Spec.Indicator.Ratio.Total.Metric
	switch {
	case errs == "" || total == "":
		return fmt.Errorf("ratio errors and total metrics must be set")
	case errs == total:
		return fmt.Errorf("ratio errors metric is the total metric")
	case !vectorSelector.MatchString(errs) || !vectorSelector.MatchString(total):
		return fmt.Errorf("ratio metrics %q and %q must be vector selectors", errs, total)
	}
	return nil
}

func TestPyrraObjectsDecodeStrictlyAndPassItsChecks(t *testing.T) {
	docs := documents(written(t, FormatPyrra))
	if len(docs) != 3 {
		t.Fatalf("%d pyrra objects, want one per run scenario", len(docs))
	}
	var selectors []string
	wantTargets := []string{"99", "99.5", "99"}
	wantWindows := []string{"30d", "28d", "30d"}
	for i, doc := range docs {
		var s pyrraSLO
		if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
			t.Fatalf("object %d does not decode strictly: %v\n%s", i, err, doc)
		}
		if err := pyrraCheck(s); err != nil {
			t.Errorf("object %d: %v\n%s", i, err, doc)
		}
		if s.Spec.Target != wantTargets[i] || s.Spec.Window != wantWindows[i] || s.Spec.Alerting.Name != AlertName {
			t.Errorf("object %d: target %s, window %s, alert %s; want %s, %s, %s", i,
				s.Spec.Target, s.Spec.Window, s.Spec.Alerting.Name, wantTargets[i], wantWindows[i], AlertName)
		}
		selectors = append(selectors, s.Spec.Indicator.Ratio.Errors.Metric, s.Spec.Indicator.Ratio.Total.Metric)
	}
	checkParses(t, selectors)
}

// The strict decoding and the checks refuse what pyrra would.
func TestPyrraChecksRefuseBrokenObjects(t *testing.T) {
	doc := documents(written(t, FormatPyrra))[0]
	for broken, want := range map[string]string{
		strings.Replace(doc, "window:", "windw:", 1):                          `unknown field "windw"`,
		strings.Replace(doc, `target: "99"`, `target: "0.99"`, 1):             "is a ratio, pyrra takes a percentage",
		strings.Replace(doc, "window: 30d", "window: a month", 1):             `window "a month"`,
		strings.Replace(doc, `, outcome=~"over_1s|lost"}`, "}", 1):            "errors metric is the total metric",
		strings.Replace(doc, "metric: hubprobe_", "metric: sum(hubprobe_", 1): "must be vector selectors",
	} {
		var s pyrraSLO
		err := yaml.UnmarshalStrict([]byte(broken), &s)
		if err == nil {
			err = pyrraCheck(s)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one saying %s:\n%s", err, want, broken)
		}
	}
}

// checkParses has Prometheus's parser, through promtool, read every
// selector as an expression.
func checkParses(t *testing.T, exprs []string) {
	t.Helper()
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: selectors\n    rules:\n")
	for i, e := range exprs {
		fmt.Fprintf(&rules, "      - record: selector:check%d:parse\n        expr: %q\n", i, e)
	}
	path := writeFile(t, "selectors.yml", rules.String())
	out := promtooltest.Run(t, "check", "rules", filepath.Clean(path))
	if want := fmt.Sprintf("SUCCESS: %d rules found", len(exprs)); !strings.Contains(out, want) {
		t.Errorf("promtool check rules: want %s:\n%s", want, out)
	}
}
