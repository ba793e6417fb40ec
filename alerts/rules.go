// Package alerts holds hubprobe's Prometheus recording and alerting rules.
//
// The rules are written here, in Go, and nowhere else: the Prometheus rules
// file (hubprobe-rules.yml) and the PrometheusRule object for Kubernetes
// (deploy/base/prometheusrule.yaml) are both rendered from Groups by the
// generator in ./gen, and a test fails when either drifts.
//
// The two headline alerts are the hub vendors' own capacity definition:
// 99 % of messages arrive in under 1 s, and server load stays below 70 %.
package alerts

//go:generate go run ./gen -root ..

import "fmt"

// Config holds every threshold, window and selector the rules use, so that
// tuning the rules means changing one value here.
type Config struct {
	// Selector is added to every metric selector, e.g. `job="hubprobe"`, to
	// keep the rules to one deployment when a Prometheus scrapes several.
	Selector string
	// RateWindow is the window of every rate() in the recording rules. It
	// must be longer than the interval between scenario runs, or windows
	// without a run leave the ratios undefined and reset the alerts' `for`.
	RateWindow string

	// SlowShareMax is the largest share of messages allowed to take 1 s or
	// more: the capacity definition (p99 < 1 s) as a ratio.
	SlowShareMax float64
	// NearLimitSeconds is the p99 that warns before the 1 s limit. The
	// classic message latency histogram has a bucket boundary here, so the
	// p99 comparison is exact from classic buckets; from native ones it is
	// interpolated within a bucket under 10 % wide.
	NearLimitSeconds float64
	// ServerLoadMax is the server load under which latency inside the
	// service stays low.
	ServerLoadMax float64
	// TierUsageMax is the share of a tier's published limit a target may
	// use before HubprobeTierHeadroomLow warns: the same 70 % as server
	// load, the headroom the tier tables are planned with.
	TierUsageMax float64
	// LostShareMax is the largest share of expected deliveries allowed to
	// go missing.
	LostShareMax float64
	// ConnectFailureShareMax is the largest share of connection attempts
	// allowed to fail.
	ConnectFailureShareMax float64
	// SendLagMaxSeconds is the p99 of the probe's own sending lateness above
	// which its latency figures are not trusted.
	SendLagMaxSeconds float64

	// ThrottleWindow is how long one throttle keeps HubprobeThrottled firing.
	ThrottleWindow string
	// RunFailureWindow and RunFailureShareMax define a failing scenario: its
	// last run failed and more than this share of its runs in the window did.
	RunFailureWindow   string
	RunFailureShareMax float64
	// ExpectedRunIntervalSeconds is the longest interval between two runs
	// of one scenario; a scenario is stale after StaleRuns such intervals.
	ExpectedRunIntervalSeconds int
	StaleRuns                  int
	// ServiceMetricsMaxAgeSeconds is how old the newest figure read from
	// Azure Monitor may get before HubprobeServiceMetricsStale fires: a
	// minute's figures come a few minutes late, so 15 minutes is ten
	// missed reads at the default interval. Raise it for intervals above
	// 5 minutes.
	ServiceMetricsMaxAgeSeconds int

	// BurnRates are the error budget's burn-rate alerts; the error ratio is
	// recorded over every window they read.
	BurnRates []BurnRate
	// ForecastHorizon is how far ahead HubprobeTierLimitForecast projects a
	// service's usage, and ForecastFit the trend it projects: also the
	// least data it needs before it says anything.
	ForecastHorizon, ForecastFit string
	// DropsPerConnectionMax is how many times each held connection may drop
	// over DropWindow before HubprobeConnectionDrops warns.
	DropsPerConnectionMax float64
	DropWindow            string

	// RunbookBase is where runbook.md is published; each alert links to
	// RunbookBase + "#" + its lower-cased name.
	RunbookBase string
}

// DefaultConfig is what the committed rule files are rendered from.
var DefaultConfig = Config{
	RateWindow:                  "5m",
	SlowShareMax:                0.01,
	NearLimitSeconds:            0.7,
	ServerLoadMax:               0.70,
	TierUsageMax:                0.70,
	LostShareMax:                0.001,
	ConnectFailureShareMax:      0.05,
	SendLagMaxSeconds:           0.1,
	ThrottleWindow:              "10m",
	RunFailureWindow:            "1h",
	RunFailureShareMax:          0.5,
	ExpectedRunIntervalSeconds:  300,
	StaleRuns:                   3,
	ServiceMetricsMaxAgeSeconds: 900,
	BurnRates:                   DefaultBurnRates,
	DropWindow:                  "1h",
	DropsPerConnectionMax:       1,
	ForecastHorizon:             "7d",
	ForecastFit:                 "1d",
	RunbookBase:                 "https://github.com/hubprobe/hubprobe/blob/main/docs/runbook.md",
}

// Severities, as the monitoring-mixin conventions use them: critical pages a
// human, warning opens a ticket.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
)

// Group names in the rendered files.
const (
	RecordingGroupName = "hubprobe.rules"
	AlertingGroupName  = "hubprobe.alerts"
)

// RuleGroups is the top level of a Prometheus rules file.
type RuleGroups struct {
	Groups []RuleGroup `yaml:"groups" json:"groups"`
}

// RuleGroup is one group of rules evaluated together.
type RuleGroup struct {
	Name  string `yaml:"name" json:"name"`
	Rules []Rule `yaml:"rules" json:"rules"`
}

// Rule is a recording rule (Record set) or an alerting rule (Alert set).
type Rule struct {
	Record      string            `yaml:"record,omitempty" json:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty" json:"alert,omitempty"`
	Expr        string            `yaml:"expr" json:"expr"`
	For         string            `yaml:"for,omitempty" json:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
}

// Groups returns the recording group followed by the alerting group.
func Groups(cfg Config) RuleGroups {
	return RuleGroups{Groups: []RuleGroup{
		{Name: RecordingGroupName, Rules: recordingRules(cfg)},
		{Name: AlertingGroupName, Rules: alertingRules(cfg)},
	}}
}

// Alerts returns the alerting rules only.
func Alerts(cfg Config) []Rule { return alertingRules(cfg) }

// selector renders metric{matchers...}, adding cfg.Selector to the matchers.
func (cfg Config) selector(metric string, matchers ...string) string {
	if cfg.Selector != "" {
		matchers = append(matchers, cfg.Selector)
	}
	return vectorSelector(metric, matchers...)
}

// vectorSelector renders metric{matchers...}, for metrics of other exporters
// than hubprobe, which cfg.Selector does not scope.
func vectorSelector(metric string, matchers ...string) string {
	if len(matchers) == 0 {
		return metric
	}
	s := metric + "{"
	for i, m := range matchers {
		if i > 0 {
			s += ", "
		}
		s += m
	}
	return s + "}"
}

// rate renders rate(metric{matchers}[window]) with the configured selector.
func (cfg Config) rate(window, metric string, matchers ...string) string {
	return fmt.Sprintf("rate(%s[%s])", cfg.selector(metric, matchers...), window)
}

// runbookURL is the link to an alert's section in docs/runbook.md. GitHub
// lower-cases heading anchors, and the headings are the alert names.
func (cfg Config) runbookURL(alert string) string {
	return cfg.RunbookBase + "#" + anchor(alert)
}
