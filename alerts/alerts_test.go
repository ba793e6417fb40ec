package alerts

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/alerts/promtooltest"
	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// repoRoot is the repository root as seen from this package's directory,
// where `go test` runs.
const repoRoot = ".."

func TestCommittedFilesMatchGenerator(t *testing.T) {
	files, err := Files(DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 {
		t.Fatalf("Files rendered %d files, want the rules file, its copy in the Helm chart, the PrometheusRule, "+
			"the self-hosted binding's example rules file, example PrometheusRule and chart rule, "+
			"and the example Alertmanager configuration and its Helm values", len(files))
	}
	if !bytes.Equal(files[ChartRulesPath], files[RulesFilePath]) {
		t.Errorf("%s would differ from %s", ChartRulesPath, RulesFilePath)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, path))
		if err != nil {
			t.Fatalf("%v (run `go run ./alerts/gen`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what alerts/*.go renders; run `go run ./alerts/gen` and commit the result", path)
		}
	}
}

func TestPrometheusRuleCarriesTheRulesFileGroups(t *testing.T) {
	var rulesFile struct {
		Groups any `yaml:"groups"`
	}
	var crd struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Groups any `yaml:"groups"`
		} `yaml:"spec"`
	}
	readYAML(t, RulesFilePath, &rulesFile)
	readYAML(t, PrometheusRulePath, &crd)
	if crd.APIVersion != "monitoring.coreos.com/v1" || crd.Kind != "PrometheusRule" {
		t.Fatalf("%s is %s %s, want monitoring.coreos.com/v1 PrometheusRule", PrometheusRulePath, crd.APIVersion, crd.Kind)
	}
	if rulesFile.Groups == nil {
		t.Fatalf("%s has no groups", RulesFilePath)
	}
	if !reflect.DeepEqual(rulesFile.Groups, crd.Spec.Groups) {
		t.Errorf("spec.groups of %s differ from the groups of %s", PrometheusRulePath, RulesFilePath)
	}
}

// Both promtools, Debian's 2.x and Prometheus 3, accept every rule.
func TestPromtoolCheckRules(t *testing.T) {
	want := len(Groups(DefaultConfig).Groups[0].Rules) + len(Alerts(DefaultConfig))
	for _, promtool := range promtooltest.Both(t) {
		out := promtool.Run(t, "check", "rules", filepath.Join(repoRoot, RulesFilePath))
		if !strings.Contains(out, "SUCCESS: "+strconv.Itoa(want)+" rules found") {
			t.Errorf("%s promtool check rules did not report %d rules:\n%s", promtool.Name, want, out)
		}
	}
}

// Every unit test passes on both promtools: Prometheus 3's left-open
// ranges and its template functions change no expected value.
func TestPromtoolUnitTests(t *testing.T) {
	files := testFiles(t)
	for _, promtool := range promtooltest.Both(t) {
		t.Run(promtool.Name, func(t *testing.T) {
			t.Parallel()
			out := promtool.Run(t, append([]string{"test", "rules"}, files...)...)
			if got := strings.Count(out, "SUCCESS"); got != len(files) {
				t.Errorf("promtool test rules passed %d of %d files:\n%s", got, len(files), out)
			}
		})
	}
}

// A rule set rendered with a selector must still be valid, and every metric
// it reads must carry the selector.
func TestSelectorScopesEveryMetric(t *testing.T) {
	cfg := DefaultConfig
	cfg.Selector = `job="hubprobe"`
	files, err := Files(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, files[RulesFilePath], 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, "check", "rules", path)
	for _, r := range allRules(cfg) {
		for _, m := range metricRef.FindAllStringSubmatchIndex(r.Expr, -1) {
			selector, _, closed := strings.Cut(r.Expr[m[3]:], "}")
			if !closed || !strings.HasPrefix(selector, "{") || !strings.Contains(selector, cfg.Selector) {
				t.Errorf("%s%s: %s is not scoped by %s", r.Record, r.Alert, r.Expr[m[2]:m[3]], cfg.Selector)
			}
		}
	}
}

func TestEveryAlertIsComplete(t *testing.T) {
	anchors := runbookAnchors(t)
	alerts := Alerts(DefaultConfig)
	if len(alerts) < 10 {
		t.Fatalf("only %d alerts", len(alerts))
	}
	for _, r := range alerts {
		if _, err := time.ParseDuration(r.For); err != nil || r.For == "0s" {
			t.Errorf("%s: for %q is not a positive duration", r.Alert, r.For)
		}
		if s := r.Labels["severity"]; !slices.Contains(severities(r.Alert), s) {
			t.Errorf("%s: severity %q is not one of %q", r.Alert, s, severities(r.Alert))
		}
		checkAnnotations(t, r)
		url := r.Annotations["runbook_url"]
		base, frag, ok := strings.Cut(url, "#")
		if !ok || base != DefaultConfig.RunbookBase || !strings.HasSuffix(base, "docs/runbook.md") {
			t.Errorf("%s: runbook_url %q does not point into docs/runbook.md", r.Alert, url)
		}
		if !anchors[frag] {
			t.Errorf("%s: runbook anchor #%s has no heading in docs/runbook.md", r.Alert, frag)
		}
	}
}

// severities are those an alert may have: the burn-rate alerts page or
// open a ticket, the others are critical or warning.
func severities(alert string) []string {
	if alert == AlertErrorBudgetBurn {
		return []string{SeverityPage, SeverityTicket}
	}
	return []string{SeverityCritical, SeverityWarning}
}

func checkAnnotations(t *testing.T, r Rule) {
	t.Helper()
	summary, description := r.Annotations["summary"], r.Annotations["description"]
	if summary == "" || strings.Contains(summary, "{{") || !strings.HasSuffix(summary, ".") {
		t.Errorf("%s: summary %q must be a static sentence", r.Alert, summary)
	}
	if !strings.Contains(description, "{{ $value") || !strings.Contains(description, "{{ $labels.") {
		t.Errorf("%s: description %q is not templated with $value and $labels", r.Alert, description)
	}
}

func TestRecordingRuleNamesAreLevelMetricOperation(t *testing.T) {
	name := regexp.MustCompile(`^[a-z_]+:hubprobe_[a-z0-9_]+:[a-z0-9_]+$`)
	for _, r := range Groups(DefaultConfig).Groups[0].Rules {
		if !name.MatchString(r.Record) {
			t.Errorf("recording rule %q is not named level:metric:operation", r.Record)
		}
	}
	want := []string{
		"target_scenario:hubprobe_message_latency_slow:ratio_rate5m",
		"target_scenario:hubprobe_message_latency_seconds:p99_rate5m",
		"target_scenario:hubprobe_message_hub_time_seconds:p99_rate5m",
		"target_scenario:hubprobe_network_round_trip_seconds:p99_rate5m",
		"target:hubprobe_server_load:ratio",
		"target:hubprobe_tier_usage:current",
		"target:hubprobe_tier_utilization:ratio",
	}
	for _, w := range want {
		if !slices.ContainsFunc(Groups(DefaultConfig).Groups[0].Rules, func(r Rule) bool { return r.Record == w }) {
			t.Errorf("recording rule %s is missing", w)
		}
	}
}

// Every alert needs a promtool case where it fires and one where it stays
// quiet, so a threshold that drifts either way breaks a test.
func TestEveryAlertHasFiringAndQuietCases(t *testing.T) {
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, path := range testFiles(t) {
		var f struct {
			Tests []struct {
				AlertRuleTest []struct {
					Alertname string `yaml:"alertname"`
					ExpAlerts []any  `yaml:"exp_alerts"`
				} `yaml:"alert_rule_test"`
			} `yaml:"tests"`
		}
		readYAML(t, strings.TrimPrefix(path, repoRoot+"/"), &f)
		for _, tc := range f.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	for _, r := range Alerts(DefaultConfig) {
		if !fires[r.Alert] {
			t.Errorf("%s has no promtool case where it fires", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s has no promtool case where it stays quiet", r.Alert)
		}
	}
}

func TestRulesReadOnlyCatalogueMetrics(t *testing.T) {
	for _, r := range allRules(DefaultConfig) {
		for _, m := range metricRef.FindAllStringSubmatch(r.Expr, -1) {
			if !inCatalogue(m[1]) {
				t.Errorf("%s%s reads %s, which is not in the metric catalogue", r.Record, r.Alert, m[1])
			}
		}
	}
}

// Every rule that reads a histogram reads its native and its classic form,
// so that it answers whichever of them Prometheus stores.
func TestHistogramsAreReadInBothForms(t *testing.T) {
	rows := documented()
	readers := 0
	for _, r := range allRules(DefaultConfig) {
		var names []string
		for _, m := range metricRef.FindAllStringSubmatch(r.Expr, -1) {
			names = append(names, m[1])
		}
		if !slices.ContainsFunc(names, func(n string) bool { _, _, ok := cataloguetest.HistogramOf(rows, n); return ok }) {
			continue
		}
		readers++
		for _, h := range cataloguetest.OneFormOnly(rows, names) {
			t.Errorf("%s%s reads %s in one form only:\n%s", r.Record, r.Alert, h, r.Expr)
		}
	}
	if readers != 6 {
		t.Errorf("%d rules read a histogram, want 6: the slow share, p99, hub time p99, round trip p99, connect failure and send lag records", readers)
	}
}

// metricRef finds raw hubprobe metric names; recorded names contain a colon
// before "hubprobe_" and are left out.
var metricRef = regexp.MustCompile(`(?:^|[^:\w])(hubprobe_\w+)`)

// documented is every metric docs/metrics.md lists: the exporter's, the
// configuration loader's and the embedded hub's.
func documented() map[string]cataloguetest.Row {
	rows, err := cataloguetest.Read("../docs/metrics.md")
	if err != nil {
		panic(err)
	}
	return rows
}

func inCatalogue(name string) bool { return cataloguetest.Series(documented(), name) }

// allRules are the shipped rules and the example self-hosted binding's.
func allRules(cfg Config) []Rule {
	var rules []Rule
	for _, g := range Groups(cfg).Groups {
		rules = append(rules, g.Rules...)
	}
	selfHosted, err := cfg.SelfHostedGroup([]SelfHostedBinding{ExampleSelfHostedBinding})
	if err != nil {
		panic(err)
	}
	return append(rules, selfHosted.Rules...)
}

// runbookAnchors returns the GitHub anchor of every heading in runbook.md.
func runbookAnchors(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if heading, ok := strings.CutPrefix(line, "#"); ok {
			anchors[githubAnchor(strings.TrimLeft(heading, "#"))] = true
		}
	}
	return anchors
}

// githubAnchor mimics GitHub's heading anchors: lower case, punctuation
// dropped, spaces turned into hyphens.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func testFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "tests", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool test files under alerts/tests (%v)", err)
	}
	return files
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func runPromtool(t *testing.T, args ...string) string {
	t.Helper()
	return promtooltest.Run(t, args...)
}
