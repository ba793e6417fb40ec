package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	yamlv3 "gopkg.in/yaml.v3"
	"sigs.k8s.io/yaml"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/alerts/promtooltest"
)

// helmBindings are the chart's selfHostedServerLoad in the tests: the
// example, and one with a container and a regex that needs quoting, bound
// to the two targets of the chart's default config.
var helmBindings = []alerts.SelfHostedBinding{
	alerts.ExampleSelfHostedBinding,
	{Target: "control", Namespace: "probe-control", Pod: `control-(a|b)-\d+`, Container: "hub"},
}

// selfHostedValues are the helm arguments setting selfHostedServerLoad to
// bindings, as a user writes them, and the kube-prometheus-stack release
// label on the rules.
func selfHostedValues(t *testing.T, bindings []alerts.SelfHostedBinding) []string {
	t.Helper()
	type entry struct {
		Target    string `json:"target"`
		Namespace string `json:"namespace"`
		Pod       string `json:"pod"`
		Container string `json:"container,omitempty"`
	}
	entries := make([]entry, 0, len(bindings))
	for _, b := range bindings {
		entries = append(entries, entry{b.Target, b.Namespace, b.Pod, b.Container})
	}
	data, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"--set-json", "selfHostedServerLoad=" + string(data), "--set", "prometheusRule.labels.release=kube-prometheus-stack"}
}

// shippedRules is the PrometheusRule carrying alerts/hubprobe-rules.yml.
func shippedRules(t *testing.T, m manifest) *monitoringv1.PrometheusRule {
	t.Helper()
	rule := named[monitoringv1.PrometheusRule](m, release)
	if rule == nil {
		t.Fatalf("%s renders no PrometheusRule %s", m.name, release)
	}
	return rule
}

// selfHostedRules is the PrometheusRule of the self-hosted bindings, or nil.
func selfHostedRules(m manifest) *monitoringv1.PrometheusRule {
	return named[monitoringv1.PrometheusRule](m, alerts.SelfHostedPrometheusRuleName)
}

// The chart renders each binding as the rule package alerts writes for it,
// in a PrometheusRule that Prometheus selects as it selects the shipped one,
// and promtool accepts the rules.
func TestHelmSelfHostedServerLoadIsTheGoRule(t *testing.T) {
	m := helmTemplate(t, "helm self-hosted server load", selfHostedValues(t, helmBindings)...)
	checkSelfHostedRules(t, m, helmBindings)
	if got, want := selfHostedRules(m).Labels, shippedRules(t, m).Labels; !reflect.DeepEqual(got, want) {
		t.Errorf("the self-hosted PrometheusRule is labelled %v, the shipped one %v", got, want)
	}
	if n := len(ofType[monitoringv1.PrometheusRule](helmTemplate(t, "helm rules off",
		append(selfHostedValues(t, helmBindings), "--set", "prometheusRule.enabled=false")...))); n != 0 {
		t.Errorf("prometheusRule.enabled=false renders %d PrometheusRules", n)
	}
}

// The kustomize overlay ships the example binding's generated rule.
func TestSelfHostedOverlayIsTheExampleBinding(t *testing.T) {
	checkSelfHostedRules(t, kustomize(t, selfHostedOverlay), []alerts.SelfHostedBinding{alerts.ExampleSelfHostedBinding})
}

// checkSelfHostedRules holds the rendered self-hosted PrometheusRule's spec
// to what alerts.SelfHostedGroup renders for bindings, and has promtool
// check it.
func checkSelfHostedRules(t *testing.T, m manifest, bindings []alerts.SelfHostedBinding) {
	t.Helper()
	rule := selfHostedRules(m)
	if rule == nil {
		t.Fatalf("%s renders no PrometheusRule %s", m.name, alerts.SelfHostedPrometheusRuleName)
	}
	group, err := alerts.DefaultConfig.SelfHostedGroup(bindings)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yamlv3.Marshal(alerts.RuleGroups{Groups: []alerts.RuleGroup{group}})
	if err != nil {
		t.Fatal(err)
	}
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(data, &want); err != nil {
		t.Fatalf("alerts.SelfHostedGroup is no PrometheusRule spec: %v", err)
	}
	if !reflect.DeepEqual(rule.Spec, want) {
		got, _ := yaml.Marshal(rule.Spec)
		t.Errorf("%s renders the self-hosted rules\n%s\nalerts.SelfHostedGroup renders\n%s", m.name, got, data)
	}
	checkRulesWithPromtool(t, rule.Spec, len(bindings))
}

func checkRulesWithPromtool(t *testing.T, spec monitoringv1.PrometheusRuleSpec, rules int) {
	t.Helper()
	data, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := promtooltest.Run(t, "check", "rules", path); !strings.Contains(out, "SUCCESS: "+strconv.Itoa(rules)+" rules found") {
		t.Errorf("promtool check rules did not find %d rules:\n%s", rules, out)
	}
}
