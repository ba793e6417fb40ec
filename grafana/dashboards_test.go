package grafana

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/alerts/promtooltest"
	"github.com/hubprobe/hubprobe/internal/cataloguetest"
)

// repoRoot is the repository root as seen from this package's directory.
const repoRoot = ".."

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

// recorded reports whether name is a series the shipped rules record; the
// error budget panels read those, whose windows a dashboard range could
// not follow.
func recorded(name string) bool {
	for _, g := range alerts.Groups(alerts.DefaultConfig).Groups {
		if slices.ContainsFunc(g.Rules, func(r alerts.Rule) bool { return r.Record == name }) {
			return true
		}
	}
	return false
}

func TestCommittedFilesMatchGenerator(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Fatalf("Files rendered %d files, want 2 dashboards, their copies in the Helm chart and 1 ConfigMap", len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, path))
		if err != nil {
			t.Fatalf("%v (run `go run ./grafana/gen`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what grafana/*.go renders; run `go run ./grafana/gen` and commit the result", path)
		}
	}
	for _, dir := range []string{DashboardsDir, ChartDashboardsDir} {
		committed, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*.json"))
		if want := (len(files) - 1) / 2; len(committed) != want {
			t.Errorf("%s holds %d dashboards, the generator writes %d: remove stale files", dir, len(committed), want)
		}
	}
}

func TestConfigMapCarriesTheCommittedJSON(t *testing.T) {
	var cm struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Data map[string]string `yaml:"data"`
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, DashboardsConfigMap))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Labels["grafana_dashboard"] != "1" {
		t.Fatalf("%s is a %s labelled %v, want a ConfigMap labelled grafana_dashboard: \"1\"", DashboardsConfigMap, cm.Kind, cm.Metadata.Labels)
	}
	dashboards := committedDashboards(t)
	if len(cm.Data) != len(dashboards) {
		t.Errorf("ConfigMap carries %d dashboards, %s has %d", len(cm.Data), DashboardsDir, len(dashboards))
	}
	for name, d := range dashboards {
		if cm.Data[name] != string(d.raw) {
			t.Errorf("ConfigMap entry %s differs from %s/%s", name, DashboardsDir, name)
		}
	}
}

func TestStableUIDs(t *testing.T) {
	dashboards := committedDashboards(t)
	for name, want := range map[string]string{OverviewUID + ".json": OverviewUID, ScenarioUID + ".json": ScenarioUID} {
		if got := dashboards[name].UID; got != want {
			t.Errorf("%s has uid %q, want %q", name, got, want)
		}
	}
	for name, d := range dashboards {
		seen := map[float64]bool{}
		for _, p := range d.allPanels() {
			if p.ID == 0 || seen[p.ID] {
				t.Errorf("%s: panel %q has a missing or repeated id %v", name, p.Title, p.ID)
			}
			seen[p.ID] = true
		}
	}
}

func TestDatasourceVariable(t *testing.T) {
	for name, d := range committedDashboards(t) {
		var sources []variable
		for _, v := range d.Templating.List {
			if v.Type == "datasource" {
				sources = append(sources, v)
			}
		}
		if len(sources) != 1 || sources[0].Name != datasourceVar || sources[0].Query != "prometheus" ||
			sources[0].Label != "Data Source" {
			t.Errorf("%s: want exactly one prometheus datasource variable %q labelled Data Source, got %+v", name, datasourceVar, sources)
		}
		for _, p := range d.queryPanels() {
			if p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: panel %q uses datasource %q, not ${datasource}", name, p.Title, p.Datasource.UID)
			}
			for _, tg := range p.Targets {
				if tg.Datasource.UID != "${datasource}" {
					t.Errorf("%s: panel %q query %s uses datasource %q", name, p.Title, tg.RefID, tg.Datasource.UID)
				}
			}
		}
	}
}

func TestTargetAndScenarioVariables(t *testing.T) {
	for name, d := range committedDashboards(t) {
		vars := map[string]variable{}
		for _, v := range d.Templating.List {
			vars[v.Name] = v
		}
		for _, want := range []string{"target", "scenario"} {
			v, ok := vars[want]
			q, _ := v.Query.(string)
			if !ok || v.Type != "query" || !strings.HasPrefix(q, "label_values(hubprobe_scenario_info") ||
				!strings.HasSuffix(q, ", "+want+")") {
				t.Errorf("%s: variable %s must be label_values(hubprobe_scenario_info…, %s), got %+v", name, want, want, v)
			}
			if v.Datasource.UID != "${datasource}" {
				t.Errorf("%s: variable %s queries %q, not ${datasource}", name, want, v.Datasource.UID)
			}
		}
	}
}

var rangeSelector = regexp.MustCompile(`\[([^\]]*)\]`)

func TestRangesUseRateInterval(t *testing.T) {
	for name, d := range committedDashboards(t) {
		for _, p := range d.queryPanels() {
			for _, tg := range p.Targets {
				for _, m := range rangeSelector.FindAllStringSubmatch(stripStrings(tg.Expr), -1) {
					if m[1] != "$__rate_interval" {
						t.Errorf("%s: panel %q uses range [%s], want [$__rate_interval]", name, p.Title, m[1])
					}
				}
			}
		}
	}
}

func TestCountersOnlyThroughRateOrIncrease(t *testing.T) {
	checked := 0
	for name, d := range committedDashboards(t) {
		for _, p := range d.queryPanels() {
			for _, tg := range p.Targets {
				for _, use := range metricUses(tg.Expr) {
					if !isCounterLike(use.name) {
						continue
					}
					checked++
					if !rateFunctions[use.enclosing] {
						t.Errorf("%s: panel %q reads counter %s inside %q, not rate() or increase()", name, p.Title, use.name, use.enclosing)
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d counter reads found; the scanner is not seeing the queries", checked)
	}
}

// Every query that reads a histogram reads its native and its classic form,
// so that the panel answers whichever of them Prometheus stores.
func TestHistogramsAreReadInBothForms(t *testing.T) {
	rows := documented()
	readers := 0
	for name, d := range committedDashboards(t) {
		for _, p := range d.queryPanels() {
			for _, tg := range p.Targets {
				var names []string
				for _, use := range metricUses(tg.Expr) {
					names = append(names, use.name)
				}
				if !slices.ContainsFunc(names, func(n string) bool { _, _, ok := cataloguetest.HistogramOf(rows, n); return ok }) {
					continue
				}
				readers++
				for _, h := range cataloguetest.OneFormOnly(rows, names) {
					t.Errorf("%s: panel %q query %s reads %s in one form only: %s", name, p.Title, tg.RefID, h, tg.Expr)
				}
			}
		}
	}
	if readers < 15 {
		t.Errorf("only %d queries read a histogram; the scanner is not seeing the latency, connect and send lag panels", readers)
	}
}

func TestEveryPanelHasUnitDescriptionAndQueries(t *testing.T) {
	for name, d := range committedDashboards(t) {
		panels := d.queryPanels()
		if len(panels) < 8 {
			t.Errorf("%s has only %d panels", name, len(panels))
		}
		for _, p := range panels {
			if p.Title == "" || p.Description == "" {
				t.Errorf("%s: panel %q has no title or description", name, p.Title)
			}
			if p.FieldConfig.Defaults.Unit == "" {
				t.Errorf("%s: panel %q has no unit", name, p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", name, p.Title)
			}
		}
	}
}

func TestEveryMetricIsInTheCatalogue(t *testing.T) {
	used := map[string]bool{}
	for name, d := range committedDashboards(t) {
		exprs := []string{}
		for _, v := range d.Templating.List {
			q, _ := v.Query.(string)
			if m := labelValues.FindStringSubmatch(q); m != nil {
				exprs = append(exprs, m[1]) // the selector of label_values(selector, label)
			}
		}
		for _, p := range d.queryPanels() {
			for _, tg := range p.Targets {
				exprs = append(exprs, tg.Expr)
			}
		}
		for _, expr := range exprs {
			for _, use := range metricUses(expr) {
				used[use.name] = true
				if !inCatalogue(use.name) && !recorded(use.name) {
					t.Errorf("%s reads %s, which is neither in the metric catalogue nor recorded by the shipped rules: %s", name, use.name, expr)
				}
			}
		}
	}
	// The dashboards should show every series the exporter has, except
	// build and reload info which only the alerts read.
	for m, row := range documented() {
		if row.Section != "Catalogue" || m == "hubprobe_build_info" {
			continue // build info and the loader's and hub's own metrics are for alerts and drill-downs
		}
		if !used[m] && !used[m+"_bucket"] && !used[m+"_count"] {
			t.Errorf("no dashboard shows %s", m)
		}
	}
}

func TestOverviewDrawsTheCapacityLines(t *testing.T) {
	d := committedDashboards(t)[OverviewUID+".json"]
	want := map[string]float64{
		"p99 message latency": latencyLimitSeconds, "Messages over 1 s": slowShareMax, "Server load": serverLoadMax,
	}
	for _, p := range d.queryPanels() {
		limit, ok := want[p.Title]
		if !ok {
			continue
		}
		delete(want, p.Title)
		steps := p.FieldConfig.Defaults.Thresholds.Steps
		if len(steps) == 0 || steps[len(steps)-1].Value == nil || *steps[len(steps)-1].Value != limit ||
			p.FieldConfig.Defaults.Custom.ThresholdsStyle.Mode != "line" {
			t.Errorf("panel %q does not draw its limit line at %g: %+v", p.Title, limit, p.FieldConfig.Defaults)
		}
	}
	for title := range want {
		t.Errorf("overview has no panel %q", title)
	}
}

func TestSubstitute(t *testing.T) {
	got := Substitute(`rate(x{target=~"$target", scenario=~"${scenario:regex}"}[$__rate_interval]) + y[$__range]`)
	want := `rate(x{target=~".*", scenario=~".*"}[1m]) + y[1h]`
	if got != want {
		t.Errorf("Substitute = %s, want %s", got, want)
	}
}

func TestQueriesCoverEveryTargetAndVariable(t *testing.T) {
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, d := range committedDashboards(t) {
		want += 2 // the target and scenario variables
		for _, p := range d.queryPanels() {
			want += len(p.Targets)
		}
	}
	if len(queries) != want {
		t.Errorf("Queries returned %d expressions, the dashboards hold %d", len(queries), want)
	}
	for _, q := range queries {
		if strings.Contains(q.Expr, "$") {
			t.Errorf("%s / %s: %s still holds a variable", q.Dashboard, q.Panel, q.Expr)
		}
	}
	if q := queries[0]; q.Panel != "$target" || q.Expr != "group by (target) (hubprobe_scenario_info)" {
		t.Errorf("first query is %+v, want the overview's target variable as group by (target)", q)
	}
}

// Every query must parse in Prometheus itself: write them as recording rules
// and let promtool check them.
func TestQueriesParseWithPromtool(t *testing.T) {
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	rules := make([]rule, 0, len(queries))
	for i, q := range queries {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d:check", i), Expr: q.Expr})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboards", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, promtool := range promtooltest.Both(t) {
		out := promtool.Run(t, "check", "rules", path)
		if !strings.Contains(out, fmt.Sprintf("SUCCESS: %d rules found", len(queries))) {
			t.Errorf("%s promtool did not accept all %d queries:\n%s", promtool.Name, len(queries), out)
		}
	}
}

func TestProvisioningPointsAtTheDashboards(t *testing.T) {
	var dashboards struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	var sources struct {
		Datasources []struct {
			Type     string `yaml:"type"`
			JSONData struct {
				Exemplars []struct {
					Name string `yaml:"name"`
					URL  string `yaml:"url"`
				} `yaml:"exemplarTraceIdDestinations"`
			} `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, "grafana/provisioning/dashboards.yml", &dashboards)
	readYAML(t, "grafana/provisioning/datasources.yml", &sources)
	if len(dashboards.Providers) != 1 || dashboards.Providers[0].Type != "file" || dashboards.Providers[0].Options.Path == "" {
		t.Errorf("dashboards.yml must declare one file provider with a path, got %+v", dashboards.Providers)
	}
	if len(sources.Datasources) == 0 || sources.Datasources[0].Type != "prometheus" {
		t.Fatalf("datasources.yml must declare a prometheus data source, got %+v", sources.Datasources)
	}
	// The exemplars' run_id links to the run's page, /runs/{run_id}, with
	// Grafana's value escaped from provisioning's variables.
	links := sources.Datasources[0].JSONData.Exemplars
	if len(links) != 1 || links[0].Name != "run_id" || !strings.HasSuffix(links[0].URL, "/runs/$${__value.raw}") {
		t.Errorf("datasources.yml must link the run_id exemplar to /runs/$${__value.raw}, got %+v", links)
	}
}

// dashboardFile is the part of a committed dashboard the rules look at.
type dashboardFile struct {
	raw        []byte
	UID        string       `json:"uid"`
	Panels     []panelCheck `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type variable struct {
	Name       string `json:"name"`
	Label      string `json:"label"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Datasource dsRef  `json:"datasource"`
}

type dsRef struct {
	UID string `json:"uid"`
}

type panelCheck struct {
	ID          float64      `json:"id"`
	Type        string       `json:"type"`
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Datasource  dsRef        `json:"datasource"`
	Panels      []panelCheck `json:"panels"`
	Targets     []struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource dsRef  `json:"datasource"`
	} `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit       string `json:"unit"`
			Thresholds struct {
				Steps []struct {
					Value *float64 `json:"value"`
				} `json:"steps"`
			} `json:"thresholds"`
			Custom struct {
				ThresholdsStyle struct {
					Mode string `json:"mode"`
				} `json:"thresholdsStyle"`
			} `json:"custom"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

func (d dashboardFile) allPanels() []panelCheck {
	var out []panelCheck
	var walk func([]panelCheck)
	walk = func(ps []panelCheck) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// queryPanels is every panel except rows.
func (d dashboardFile) queryPanels() []panelCheck {
	var out []panelCheck
	for _, p := range d.allPanels() {
		if p.Type != "row" {
			out = append(out, p)
		}
	}
	return out
}

func committedDashboards(t *testing.T) map[string]dashboardFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, DashboardsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards under %s (%v)", DashboardsDir, err)
	}
	out := map[string]dashboardFile{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d := dashboardFile{raw: raw}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = d
	}
	return out
}

// stripStrings blanks quoted strings so that brackets inside label values
// are not taken for ranges.
func stripStrings(expr string) string {
	var b strings.Builder
	for i := 0; i < len(expr); {
		if c := expr[i]; c == '"' || c == '\'' || c == '`' {
			j := skipQuoted(expr, i)
			b.WriteString(`""`)
			i = j
			continue
		}
		b.WriteByte(expr[i])
		i++
	}
	return b.String()
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

// exporterShapedSeries is one series of every catalogue metric, labelled as
// the exporter labels them, for promtool to evaluate the dashboards on.
var exporterShapedSeries = map[string]string{
	`hubprobe_scenario_info{target="hub",scenario="echo",kind="echo",transport="websockets",protocol="json"}`: "1x60",
	`hubprobe_messages_sent_total{target="hub",scenario="echo"}`:                                              "0+10x60",
	`hubprobe_messages_received_total{target="hub",scenario="echo"}`:                                          "0+10x60",
	`hubprobe_messages_lost_total{target="hub",scenario="echo"}`:                                              "0+1x60",
	`hubprobe_messages_duplicated_total{target="hub",scenario="echo"}`:                                        "0+1x60",
	`hubprobe_messages_reordered_total{target="hub",scenario="echo"}`:                                         "0+1x60",
	`hubprobe_sent_bytes_total{target="hub",scenario="echo"}`:                                                 "0+20480x60",
	`hubprobe_received_bytes_total{target="hub",scenario="echo"}`:                                             "0+20480x60",
	`hubprobe_throttled_total{target="hub",scenario="echo",reason="http_429"}`:                                "0+1x60",
	`hubprobe_http_requests_total{target="hub",scenario="echo",endpoint="negotiate",code="200"}`:              "0+1x60",
	`hubprobe_connection_failures_total{target="hub",scenario="echo",reason="transport"}`:                     "0+1x60",
	`hubprobe_reconnects_total{target="hub",scenario="echo"}`:                                                 "0+1x60",
	`hubprobe_connection_drops_total{target="hub",scenario="echo",reason="transport"}`:                        "0+1x60",
	`hubprobe_runs_total{target="hub",scenario="echo",result="success"}`:                                      "0+1x60",
	`hubprobe_connections_active{target="hub",scenario="echo"}`:                                               "10x60",
	`hubprobe_run_success{target="hub",scenario="echo"}`:                                                      "1x60",
	`hubprobe_run_duration_seconds{target="hub",scenario="echo"}`:                                             "20x60",
	`hubprobe_last_run_timestamp_seconds{target="hub",scenario="echo"}`:                                       "0+60x60",
	`hubprobe_server_load_ratio{target="hub"}`:                                                                "0.5x60",
	`hubprobe_run_latency_seconds{target="hub",scenario="echo",quantile="0.5"}`:                               "0.01x60",
	`hubprobe_run_latency_seconds{target="hub",scenario="echo",quantile="0.9"}`:                               "0.02x60",
	`hubprobe_run_latency_seconds{target="hub",scenario="echo",quantile="0.99"}`:                              "0.05x60",
	`hubprobe_run_latency_seconds{target="hub",scenario="echo",quantile="1"}`:                                 "0.1x60",
	`hubprobe_capacity_messages_per_second{target="hub",scenario="echo",direction="inbound"}`:                 "40x60",
	`hubprobe_capacity_bandwidth_bytes_per_second{target="hub",scenario="echo",direction="outbound"}`:         "90000x60",
	`hubprobe_capacity_steps{target="hub",scenario="echo"}`:                                                   "3x60",
	`hubprobe_capacity_senders{target="hub",scenario="echo"}`:                                                 "2x60",
	`hubprobe_capacity_stop_reason{target="hub",scenario="echo",reason="slow_messages"}`:                      "1x60",
	`hubprobe_capacity_stop_reason{target="hub",scenario="echo",reason="throttled"}`:                          "0x60",
	`hubprobe_tier_info{target="hub",service="signalr",units="1"}`:                                            "1x60",
	`hubprobe_hub_connections{target="hub"}`:                                                                  "12x60",
	`hubprobe_run_connections{target="hub",scenario="echo"}`:                                                  "10x60",
	`hubprobe_shard_info{job="hubprobe",instance="a",shard="0"}`:                                              "1x60",
	`hubprobe_shard_count{job="hubprobe",instance="a"}`:                                                       "1x60",
	`hubprobe_capacity_step{target="hub",scenario="echo",run="r",step="2",figure="sent"}`:                     "40x60",
	`hubprobe_webpubsub_events_total{event="user",code="200"}`:                                                "0+1x60",
	`hubprobe_service_connections{target="hub"}`:                                                              "850x60",
	`hubprobe_service_connection_quota_utilization_ratio{target="hub"}`:                                       "0.85x60",
	`hubprobe_service_inbound_bytes_per_second{target="hub"}`:                                                 "20000x60",
	`hubprobe_service_outbound_bytes_per_second{target="hub"}`:                                                "40000x60",
	`hubprobe_service_outbound_messages_per_second{target="hub"}`:                                             "10x60",
	`hubprobe_service_connection_closes_per_second{target="hub",category="throttled"}`:                        "0x60",
	`hubprobe_service_server_connection_latency_seconds{target="hub"}`:                                        "0.025x60",
	`hubprobe_service_errors_ratio{target="hub",kind="system"}`:                                               "0.005x60",
	`hubprobe_service_metrics_age_seconds{target="hub"}`:                                                      "120x60",
	`hubprobe_service_metrics_reads_total{target="hub"}`:                                                      "0+1x60",
	`hubprobe_service_metrics_read_failures_total{target="hub",reason="forbidden"}`:                           "0x60",
	`hubprobe_expected_deliveries_total{target="hub",scenario="echo",outcome="within_1s"}`:                    "0+99x60",
	`hubprobe_expected_deliveries_total{target="hub",scenario="echo",outcome="over_1s"}`:                      "0+1x60",
	`hubprobe_expected_deliveries_total{target="hub",scenario="echo",outcome="lost"}`:                         "0x60",
	`hubprobe_slo_objective_ratio{target="hub",scenario="echo"}`:                                              "0.99x60",
	`hubprobe_slo_window_seconds{target="hub",scenario="echo"}`:                                               "2592000x60",
}

// histogramSeries adds the buckets and count of a classic histogram.
func histogramSeries(series map[string]string, name string, bounds ...string) {
	labeledHistogramSeries(series, name, `target="hub",scenario="echo"`, bounds...)
}

// labeledHistogramSeries adds the buckets and count of a classic histogram
// whose series carry labels.
func labeledHistogramSeries(series map[string]string, name, labels string, bounds ...string) {
	for i, le := range append(bounds, "+Inf") {
		series[fmt.Sprintf(`%s_bucket{%s,le=%q}`, name, labels, le)] = fmt.Sprintf("0+%dx60", 5+i)
	}
	series[fmt.Sprintf(`%s_count{%s}`, name, labels)] = fmt.Sprintf("0+%dx60", 5+len(bounds))
	series[fmt.Sprintf(`%s_sum{%s}`, name, labels)] = "0+1x60"
}

// Every dashboard query must return data when the exporter's series exist
// and the shipped rules record from them: promtool's engine evaluates
// absent(query) for each, which must stay empty. It runs with le and
// quantile labels as the exporter writes them ("1"), and as Prometheus 3
// stores them ("1.0"), each on Debian's promtool and on Prometheus 3's.
func TestQueriesReturnDataOnExporterShapedSeries(t *testing.T) {
	for _, normalise := range []bool{false, true} {
		t.Run(fmt.Sprintf("normalised=%v", normalise), func(t *testing.T) {
			series := map[string]string{}
			for k, v := range exporterShapedSeries {
				series[k] = v
			}
			histogramSeries(series, "hubprobe_message_latency_seconds", "0.1", "0.7", "1")
			histogramSeries(series, "hubprobe_connect_duration_seconds", "0.1", "1")
			histogramSeries(series, "hubprobe_send_lag_seconds", "0.01", "0.1")
			histogramSeries(series, "hubprobe_message_hub_time_seconds", "0.1", "0.7", "1")
			histogramSeries(series, "hubprobe_network_round_trip_seconds", "0.1", "0.7", "1")
			histogramSeries(series, "hubprobe_connection_age_at_drop_seconds", "60", "600")
			histogramSeries(series, "hubprobe_reconnect_duration_seconds", "1", "10")
			for _, phase := range []string{"tcp", "negotiate", "upgrade", "handshake"} {
				labeledHistogramSeries(series, "hubprobe_connect_phase_duration_seconds", `target="hub",scenario="echo",phase="`+phase+`"`, "0.1", "1")
			}
			for _, resource := range []string{"connections", "inbound_bytes_per_second", "outbound_bytes_per_second",
				"inbound_messages_per_second", "outbound_messages_per_second"} {
				series[`hubprobe_tier_limit{target="hub",resource="`+resource+`"}`] = "1000x60"
			}
			if normalise {
				normalised := map[string]string{}
				for k, v := range series {
					k = strings.ReplaceAll(k, `le="1"`, `le="1.0"`)
					normalised[strings.ReplaceAll(k, `quantile="1"`, `quantile="1.0"`)] = v
				}
				series = normalised
			}
			checkQueriesReturnData(t, series)
		})
	}
}

// scrapeInterval spaces the samples of checkQueriesReturnData: a quarter
// of the 1m that Queries puts for $__rate_interval, as Grafana sizes it
// (at least four scrape intervals). Prometheus 3's ranges are left-open,
// so a 1m rate over samples a minute apart holds one sample and answers
// nothing; Prometheus 2's held two.
const scrapeInterval = "15s"

func checkQueriesReturnData(t *testing.T, series map[string]string) {
	t.Helper()
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	var rules, tests []map[string]any
	for i, q := range queries {
		name := fmt.Sprintf("DashboardQuery%dEmpty", i)
		rules = append(rules, map[string]any{"alert": name, "expr": "absent(" + q.Expr + ")",
			"labels": map[string]string{"panel": q.Dashboard + " / " + q.Panel}})
		tests = append(tests, map[string]any{"eval_time": "14m", "alertname": name, "exp_alerts": []any{}})
	}
	writeYAML(t, filepath.Join(dir, "rules.yml"), map[string]any{
		"groups": []any{map[string]any{"name": "dashboards", "rules": rules}}})
	var input []map[string]string
	for s, v := range series {
		input = append(input, map[string]string{"series": s, "values": v})
	}
	rulesFile, err := filepath.Abs(filepath.Join(repoRoot, alerts.RulesFilePath))
	if err != nil {
		t.Fatal(err)
	}
	writeYAML(t, filepath.Join(dir, "test.yml"), map[string]any{
		"rule_files":          []string{rulesFile, "rules.yml"},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval": scrapeInterval, "input_series": input, "alert_rule_test": tests,
		}},
	})
	for _, promtool := range promtooltest.Both(t) {
		if out := promtool.Run(t, "test", "rules", filepath.Join(dir, "test.yml")); !strings.Contains(out, "SUCCESS") {
			t.Errorf("%s promtool:\n%s", promtool.Name, out)
		}
	}
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
