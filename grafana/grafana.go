// Package grafana builds hubprobe's Grafana dashboards.
//
// The dashboards are Go code (grafana-foundation-sdk); the JSON under
// grafana/dashboards/ and the dashboards ConfigMap under deploy/base/ are
// rendered from it by the generator in ./gen, and tests fail when they drift.
// Queries returns every dashboard query ready for Prometheus, so an
// end-to-end test can evaluate them against real data.
package grafana

//go:generate go run ./gen -root ..

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/hubprobe/hubprobe/internal/histogramql"
)

// Stable dashboard uids: links and bookmarks survive regeneration.
const (
	OverviewUID = "hubprobe-overview"
	ScenarioUID = "hubprobe-scenario"
)

// The capacity definition the dashboards draw their lines at.
const (
	latencyLimitSeconds = 1.0
	nearLimitSeconds    = 0.7
	slowShareMax        = 0.01
	serverLoadMax       = 0.70
	sendLagMaxSeconds   = 0.1
)

// selector restricts a query to the scenarios picked in the variables.
const selector = `target=~"$target", scenario=~"$scenario"`

const datasourceVar = "datasource"

func datasourceRef() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${" + datasourceVar + "}")}
}

func ptr[T any](v T) *T { return &v }

// metric renders metric{selector, extra matchers...}.
func metric(name string, matchers ...string) string {
	s := name + "{" + selector
	for _, m := range matchers {
		s += ", " + m
	}
	return s + "}"
}

// rate renders rate(metric{selector}[$__rate_interval]).
func rate(name string, matchers ...string) string {
	return fmt.Sprintf("rate(%s[$__rate_interval])", metric(name, matchers...))
}

// The histograms the dashboards read, through package histogramql so that
// each panel answers whether Prometheus stored them classic, native or both.
const (
	latencyHistogram      = "hubprobe_message_latency_seconds"
	hubTimeHistogram      = "hubprobe_message_hub_time_seconds"
	roundTripHistogram    = "hubprobe_network_round_trip_seconds"
	connectHistogram      = "hubprobe_connect_duration_seconds"
	connectPhaseHistogram = "hubprobe_connect_phase_duration_seconds"
	sendLagHistogram      = "hubprobe_send_lag_seconds"
	dropAgeHistogram      = "hubprobe_connection_age_at_drop_seconds"
	reconnectHistogram    = "hubprobe_reconnect_duration_seconds"
)

// quantile is the q-quantile of a histogram per target and scenario.
func quantile(q float64, histogram string) string {
	return histogramql.Quantile(q, "target, scenario", rate, histogram).Or()
}

// slowShare is the exact share of messages over 1 s, per target and scenario.
func slowShare() string {
	return "1 - (" + histogramql.ShareUnderOneSecond("target, scenario", rate, latencyHistogram).Or() + ")"
}

// datasourceVariable is the single Prometheus data source picker.
func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder(datasourceVar).
		Label("Data Source").
		Type("prometheus")
}

// labelVariable picks values of one label of hubprobe_scenario_info, the
// series that lists every configured scenario whether or not it has data.
func labelVariable(name, label, filter string, multi bool) *dashboard.QueryVariableBuilder {
	query := fmt.Sprintf("label_values(hubprobe_scenario_info%s, %s)", filter, label)
	v := dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Query(dashboard.StringOrMap{String: ptr(query)}).
		Definition(query).
		Datasource(datasourceRef()).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(multi).
		IncludeAll(multi)
	if multi {
		v = v.AllValue(".*")
	}
	return v
}

// query is one PromQL target of a panel.
type query struct {
	expr, legend string
}

func (q query) builder(refID string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Expr(q.expr).
		LegendFormat(q.legend).
		RefId(refID).
		Datasource(datasourceRef())
}

// graph is what a time series panel shows.
type graph struct {
	title, description, unit string
	queries                  []query
	// limit, when set, draws a red line at that value.
	limit *float64
	// warn, when set, draws an orange line below the limit.
	warn     *float64
	min, max *float64
	width    uint32
	// stacked draws the series on top of each other, for parts that add
	// up to a whole.
	stacked bool
	// exemplarsOn is the legend of the query that asks Grafana for the
	// exemplars of the series it reads (one query only, or each would draw
	// them): the latency histogram's name the run (run_id) of a slow
	// delivery, which the data source links to hubprobe's page of that run.
	exemplarsOn string
}

func (g graph) panel() *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(g.title).
		Description(g.description).
		Unit(g.unit).
		Datasource(datasourceRef()).
		Height(8).
		Span(g.width).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true)).
		Tooltip(multiTooltip())
	for i, q := range g.queries {
		target := q.builder(refID(i))
		if g.exemplarsOn != "" && q.legend == g.exemplarsOn {
			target = target.Exemplar(true)
		}
		p = p.WithTarget(target)
	}
	if g.min != nil {
		p = p.Min(*g.min)
	}
	if g.max != nil {
		p = p.Max(*g.max)
	}
	if g.stacked {
		p = p.Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
	}
	if g.limit != nil {
		p = p.Thresholds(thresholds(g.warn, g.limit)).
			ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine))
	}
	return p
}

// multiTooltip lists every series at the hovered time, worst first.
func multiTooltip() *common.VizTooltipOptionsBuilder {
	return common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending)
}

func thresholds(warn, limit *float64) *dashboard.ThresholdsConfigBuilder {
	steps := []dashboard.Threshold{{Color: "green"}}
	if warn != nil {
		steps = append(steps, dashboard.Threshold{Value: warn, Color: "orange"})
	}
	steps = append(steps, dashboard.Threshold{Value: limit, Color: "red"})
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(steps)
}

func refID(i int) string { return string(rune('A' + i)) }

// newDashboard sets what every hubprobe dashboard shares.
func newDashboard(title, uid, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{"hubprobe"}).
		Editable().
		Refresh("1m").
		Time("now-6h", "now").
		Timezone(common.TimeZoneUtc).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Link(dashboard.NewDashboardLinkBuilder("hubprobe").
			Type(dashboard.DashboardLinkTypeDashboards).
			Icon("external link").
			Tooltip("Other hubprobe dashboards").
			Tags([]string{"hubprobe"}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true)).
		WithVariable(datasourceVariable())
}
