package alerts

import (
	"fmt"
	"strings"
)

// Paths of the example Alertmanager configuration, relative to the
// repository root.
const (
	AlertmanagerConfigPath = "deploy/alertmanager/alertmanager.yml"
	// AlertmanagerValuesPath carries the same configuration as values of
	// the kube-prometheus-stack chart (alertmanager.config).
	AlertmanagerValuesPath = "deploy/alertmanager/kube-prometheus-stack-values.yaml"
)

// AlertmanagerConfig is the part of Alertmanager's configuration file the
// example writes.
type AlertmanagerConfig struct {
	Route        AlertmanagerRoute `yaml:"route"`
	InhibitRules []InhibitRule     `yaml:"inhibit_rules"`
	Receivers    []Receiver        `yaml:"receivers"`
}

// AlertmanagerRoute is a node of the routing tree.
type AlertmanagerRoute struct {
	Receiver       string              `yaml:"receiver"`
	GroupBy        []string            `yaml:"group_by,omitempty"`
	Matchers       []string            `yaml:"matchers,omitempty"`
	GroupWait      string              `yaml:"group_wait,omitempty"`
	GroupInterval  string              `yaml:"group_interval,omitempty"`
	RepeatInterval string              `yaml:"repeat_interval,omitempty"`
	Routes         []AlertmanagerRoute `yaml:"routes,omitempty"`
}

// InhibitRule mutes the target alerts while a source alert with the same
// values of Equal fires.
type InhibitRule struct {
	SourceMatchers []string `yaml:"source_matchers"`
	TargetMatchers []string `yaml:"target_matchers"`
	Equal          []string `yaml:"equal"`
}

// Receiver is where a route's notifications go: here a webhook, which a
// pager's or ticket system's integration takes the place of.
type Receiver struct {
	Name           string          `yaml:"name"`
	WebhookConfigs []WebhookConfig `yaml:"webhook_configs"`
}

// WebhookConfig posts each notification as JSON to URL.
type WebhookConfig struct {
	URL          string `yaml:"url"`
	SendResolved bool   `yaml:"send_resolved"`
}

// AlertmanagerSettings are what differs between the shipped example and
// another use of the same routes and inhibitions (the end-to-end test's).
type AlertmanagerSettings struct {
	PageURL, TicketURL                       string
	GroupWait, GroupInterval, RepeatInterval string
}

// DefaultAlertmanagerSettings are the example's: webhooks to replace with
// your pager's and ticket system's, and Alertmanager's usual timings.
var DefaultAlertmanagerSettings = AlertmanagerSettings{
	PageURL:   "http://alert-receiver.example.invalid/hubprobe/page",
	TicketURL: "http://alert-receiver.example.invalid/hubprobe/ticket",
	GroupWait: "30s", GroupInterval: "5m", RepeatInterval: "4h",
}

// Receiver names of the example.
const (
	PageReceiver   = "hubprobe-page"
	TicketReceiver = "hubprobe-ticket"
)

// Alertmanager is the example configuration: hubprobe's alerts grouped by
// target, the severities that wake someone (page, critical) routed to
// PageReceiver and the others to TicketReceiver, and the inhibitions of
// Inhibitions.
func Alertmanager(s AlertmanagerSettings) AlertmanagerConfig {
	route := func(receiver string, severities ...string) AlertmanagerRoute {
		return AlertmanagerRoute{Receiver: receiver, Matchers: []string{fmt.Sprintf("severity=~%q", strings.Join(severities, "|"))}}
	}
	return AlertmanagerConfig{
		Route: AlertmanagerRoute{
			Receiver: TicketReceiver, GroupBy: []string{"target"},
			GroupWait: s.GroupWait, GroupInterval: s.GroupInterval, RepeatInterval: s.RepeatInterval,
			Routes: []AlertmanagerRoute{
				route(PageReceiver, SeverityPage, SeverityCritical),
				route(TicketReceiver, SeverityTicket, SeverityWarning),
			},
		},
		InhibitRules: Inhibitions(),
		Receivers: []Receiver{
			{Name: PageReceiver, WebhookConfigs: []WebhookConfig{{URL: s.PageURL, SendResolved: true}}},
			{Name: TicketReceiver, WebhookConfigs: []WebhookConfig{{URL: s.TicketURL, SendResolved: true}}},
		},
	}
}

// latencyAlerts are the alerts that read the scenario's latency and loss
// figures, which a saturated probe or a stale scenario leaves unfounded.
var latencyAlerts = []string{
	AlertLatencyP99OverOneSecond, AlertLatencyP99NearLimit, AlertErrorBudgetBurn, AlertMessagesLost,
}

// Inhibitions mute an alert while another that explains it fires, each for
// the same target and scenario (docs/runbook.md says why each is there):
//   - a saturated probe, or a stale scenario, mutes the latency and loss
//     alerts: their figures measure the probe, or are old; a stale
//     scenario mutes its held connections' drops too;
//   - a failing scenario mutes its connection failures and lost messages;
//   - a page of the budget mutes its tickets, and the capacity warnings of
//     the same latency;
//   - over 1 s mutes near the limit;
//   - stale figures from Azure Monitor mute the forecast made from them
//     (for the same target: they have no scenario).
func Inhibitions() []InhibitRule {
	scenario := []string{"target", "scenario"}
	named := func(names ...string) string { return fmt.Sprintf("alertname=~%q", strings.Join(names, "|")) }
	return []InhibitRule{
		{SourceMatchers: []string{named(AlertProbeSaturated)}, TargetMatchers: []string{named(latencyAlerts...)}, Equal: scenario},
		{SourceMatchers: []string{named(AlertScenarioStale)}, TargetMatchers: []string{named(append(latencyAlerts, AlertConnectionDrops)...)}, Equal: scenario},
		{SourceMatchers: []string{named(AlertScenarioFailing)}, TargetMatchers: []string{named(AlertConnectionFailures, AlertMessagesLost)}, Equal: scenario},
		{
			SourceMatchers: []string{named(AlertErrorBudgetBurn), fmt.Sprintf("severity=%q", SeverityPage)},
			TargetMatchers: []string{named(AlertErrorBudgetBurn), fmt.Sprintf("severity=%q", SeverityTicket)}, Equal: scenario,
		},
		{
			SourceMatchers: []string{named(AlertErrorBudgetBurn), fmt.Sprintf("severity=%q", SeverityPage)},
			TargetMatchers: []string{named(AlertLatencyP99OverOneSecond, AlertLatencyP99NearLimit)}, Equal: scenario,
		},
		{SourceMatchers: []string{named(AlertLatencyP99OverOneSecond)}, TargetMatchers: []string{named(AlertLatencyP99NearLimit)}, Equal: scenario},
		{SourceMatchers: []string{named(AlertServiceMetricsStale)}, TargetMatchers: []string{named(AlertTierLimitForecast)}, Equal: []string{"target"}},
	}
}

// kubePrometheusStackValues carries the configuration where the
// kube-prometheus-stack chart takes it.
type kubePrometheusStackValues struct {
	Alertmanager struct {
		Config AlertmanagerConfig `yaml:"config"`
	} `yaml:"alertmanager"`
}

// alertmanagerFiles renders the example and its Helm values.
func alertmanagerFiles() map[string]any {
	var values kubePrometheusStackValues
	values.Alertmanager.Config = Alertmanager(DefaultAlertmanagerSettings)
	return map[string]any{
		AlertmanagerConfigPath: values.Alertmanager.Config,
		AlertmanagerValuesPath: values,
	}
}
