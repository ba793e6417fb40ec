package alerts

import (
	"fmt"
	"strings"
)

// Alert names. Each one is also a heading of docs/runbook.md.
const (
	AlertLatencyP99OverOneSecond = "HubprobeLatencyP99OverOneSecond"
	AlertLatencyP99NearLimit     = "HubprobeLatencyP99NearLimit"
	AlertServerLoadHigh          = "HubprobeServerLoadHigh"
	AlertTierHeadroomLow         = "HubprobeTierHeadroomLow"
	AlertThrottled               = "HubprobeThrottled"
	AlertMessagesLost            = "HubprobeMessagesLost"
	AlertConnectionFailures      = "HubprobeConnectionFailures"
	AlertScenarioFailing         = "HubprobeScenarioFailing"
	AlertScenarioStale           = "HubprobeScenarioStale"
	AlertLatencySeriesMissing    = "HubprobeLatencySeriesMissing"
	AlertProbeSaturated          = "HubprobeProbeSaturated"
	AlertConfigReloadFailed      = "HubprobeConfigReloadFailed"
)

// alert is the part of an alerting rule that differs between alerts.
type alert struct {
	name, severity, forDuration, expr, summary, description string
	// labels are added to severity, to tell apart alerts of one name.
	labels map[string]string
}

func (a alert) rule(cfg Config) Rule {
	labels := map[string]string{"severity": a.severity}
	for k, v := range a.labels {
		labels[k] = v
	}
	return Rule{
		Alert:  a.name,
		Expr:   a.expr,
		For:    a.forDuration,
		Labels: labels,
		Annotations: map[string]string{
			"summary":     a.summary,
			"description": a.description,
			"runbook_url": cfg.runbookURL(a.name),
		},
	}
}

func alertingRules(cfg Config) []Rule {
	all := append(append(hubAlerts(cfg), cfg.burnAlerts()...), probeAlerts(cfg)...)
	rules := make([]Rule, 0, len(all))
	for _, a := range all {
		rules = append(rules, a.rule(cfg))
	}
	return rules
}

// unlessSaturated drops the scenarios whose probe is itself behind schedule:
// their latency and loss figures measure the probe, not the hub, and
// HubprobeProbeSaturated says so instead.
func (cfg Config) unlessSaturated(expr string) string {
	return fmt.Sprintf("%s\nunless on (target, scenario)\n  %s > %g", expr, cfg.sendLagP99Record(), cfg.SendLagMaxSeconds)
}

// hubAlerts are about the hub: its latency, load, throttling and losses.
func hubAlerts(cfg Config) []alert {
	return []alert{{
		name: AlertLatencyP99OverOneSecond, severity: SeverityWarning, forDuration: "10m",
		expr:    cfg.unlessSaturated(fmt.Sprintf("%s > %g", cfg.slowShareRecord(), cfg.SlowShareMax)),
		summary: fmt.Sprintf("More than %s of hub messages take over 1 s.", percent(cfg.SlowShareMax)),
		description: fmt.Sprintf("{{ $value | humanizePercentage }} of the messages of scenario {{ $labels.scenario }} "+
			"on target {{ $labels.target }} took over 1 s over the last %s; the capacity definition allows %s.",
			cfg.RateWindow, percent(cfg.SlowShareMax)) + cfg.whereTheTimeGoes(),
	}, {
		name: AlertLatencyP99NearLimit, severity: SeverityWarning, forDuration: "15m",
		expr:    cfg.unlessSaturated(fmt.Sprintf("%s > %g", cfg.latencyP99Record(), cfg.NearLimitSeconds)),
		summary: "Hub message p99 latency is close to the 1 s capacity limit.",
		description: fmt.Sprintf("The p99 message latency of scenario {{ $labels.scenario }} on target {{ $labels.target }} "+
			"is {{ $value | humanizeDuration }} over the last %s, above the %g s warning line.", cfg.RateWindow, cfg.NearLimitSeconds) +
			cfg.whereTheTimeGoes(),
	}, {
		name: AlertServerLoadHigh, severity: SeverityWarning, forDuration: "15m",
		expr:    fmt.Sprintf("%s > %g", ServerLoadRecord, cfg.ServerLoadMax),
		summary: fmt.Sprintf("Hub server load is above %s.", percent(cfg.ServerLoadMax)),
		description: fmt.Sprintf("Target {{ $labels.target }} reports a server load of {{ $value | humanizePercentage }}; "+
			"latency inside the service stays low only below %s.", percent(cfg.ServerLoadMax)),
	}, {
		name: AlertThrottled, severity: SeverityWarning, forDuration: "1m",
		expr: fmt.Sprintf("sum by (target, scenario, reason) (increase(%s[%s])) > 0\nor\n%s",
			cfg.selector("hubprobe_throttled_total"), cfg.ThrottleWindow, cfg.serviceThrottledExpr()),
		summary: "The hub throttled the probe.",
		description: fmt.Sprintf("{{ if $labels.scenario }}Target {{ $labels.target }} throttled scenario {{ $labels.scenario }} "+
			"over the last %s (reason {{ $labels.reason }}, {{ $value | humanize }} in total).{{ else }}"+
			"Azure Monitor reports that target {{ $labels.target }} closed connections for throttling over the last %s, "+
			"up to {{ $value | humanize }} a second (any client's, not only the probe's).{{ end }}", cfg.ThrottleWindow, cfg.ThrottleWindow),
	}, {
		name: AlertMessagesLost, severity: SeverityWarning, forDuration: "10m",
		expr:    cfg.unlessSaturated(fmt.Sprintf("%s > %g", cfg.lostShareRecord(), cfg.LostShareMax)),
		summary: "Hub messages are being lost.",
		description: fmt.Sprintf("{{ $value | humanizePercentage }} of the deliveries expected by scenario {{ $labels.scenario }} "+
			"on target {{ $labels.target }} never arrived over the last %s (limit %s).", cfg.RateWindow, percent(cfg.LostShareMax)),
	}, cfg.tierHeadroomAlert(), cfg.tierLimitForecastAlert()}
}

// whereTheTimeGoes is the latency alerts' last sentence: which side of
// the scenario's latency dominates, the hub's own time or the network's
// round trip, from their recorded p99s (a template query, so the alert
// says it when it fires, not only the dashboard).
func (cfg Config) whereTheTimeGoes() string {
	sel := "{target=%q,scenario=%q}"
	return fmt.Sprintf(` {{ $hub := printf "%[1]s%[3]s" $labels.target $labels.scenario | query }}`+
		`{{ $network := printf "%[2]s%[3]s" $labels.target $labels.scenario | query }}`+
		`{{ if and $hub $network }}The hub's own time is {{ $hub | first | value | humanizeDuration }} at p99 and the network's round trip `+
		`{{ $network | first | value | humanizeDuration }}: {{ if gt ($hub | first | value) ($network | first | value) }}`+
		`the hub dominates.{{ else }}the network dominates.{{ end }}{{ else }}No hub time or network round trip is recorded for it.{{ end }}`,
		cfg.hubTimeP99Record(), cfg.roundTripP99Record(), sel)
}

// probeAlerts are about connecting and running scenarios, and about hubprobe
// itself.
func probeAlerts(cfg Config) []alert {
	return []alert{{
		name: AlertConnectionFailures, severity: SeverityWarning, forDuration: "10m",
		expr:    fmt.Sprintf("%s > %g", cfg.connectFailureShareRecord(), cfg.ConnectFailureShareMax),
		summary: "Connections to the hub are failing.",
		description: fmt.Sprintf("{{ $value | humanizePercentage }} of the connection attempts of scenario {{ $labels.scenario }} "+
			"to target {{ $labels.target }} failed over the last %s (limit %s).", cfg.RateWindow, percent(cfg.ConnectFailureShareMax)),
	}, {
		name: AlertScenarioFailing, severity: SeverityCritical, forDuration: "10m",
		expr: fmt.Sprintf("%s > %g\nand on (target, scenario)\n  max by (target, scenario) (%s) == 0",
			cfg.runFailureShareRecord(), cfg.RunFailureShareMax, cfg.selector("hubprobe_run_success")),
		summary: "A probe scenario keeps failing.",
		description: fmt.Sprintf("{{ $value | humanizePercentage }} of the runs of scenario {{ $labels.scenario }} "+
			"against target {{ $labels.target }} failed over the last %s, the latest one included.", cfg.RunFailureWindow),
	}, cfg.staleAlert(), cfg.serviceMetricsStaleAlert(), cfg.latencySeriesMissingAlert(), {
		name: AlertProbeSaturated, severity: SeverityWarning, forDuration: "10m",
		expr:    fmt.Sprintf("%s > %g", cfg.sendLagP99Record(), cfg.SendLagMaxSeconds),
		summary: "hubprobe cannot keep to its sending schedule; its latency figures are not trustworthy.",
		description: "The probe sent the messages of scenario {{ $labels.scenario }} to target {{ $labels.target }} " +
			"up to {{ $value | humanizeDuration }} late (p99). Latency and loss alerts for this scenario are held back " +
			"until the probe keeps up again.",
	}, {
		name: AlertConfigReloadFailed, severity: SeverityWarning, forDuration: "10m",
		expr:    cfg.selector("hubprobe_config_last_reload_successful") + " == 0",
		summary: "hubprobe failed to reload its configuration.",
		description: "hubprobe {{ $labels.instance }} could not load its new configuration " +
			"(last reload successful = {{ $value }}) and keeps running the previous one.",
	}, cfg.shardMissingAlert(), cfg.dropsAlert()}
}

// staleAlert fires when a scenario that has run stopped running, and when no
// hubprobe reports any run at all (not deployed, crashed, or not scraped).
// Capacity searches are left out: they usually run nightly.
func (cfg Config) staleAlert() alert {
	lastRun := cfg.selector("hubprobe_last_run_timestamp_seconds")
	staleAfter := cfg.ExpectedRunIntervalSeconds * cfg.StaleRuns
	return alert{
		name: AlertScenarioStale, severity: SeverityWarning, forDuration: "5m",
		expr: fmt.Sprintf("time() - max by (target, scenario) (%s > 0) > %d\n%s\nor\n  absent(%s)",
			lastRun, staleAfter, cfg.unlessCapacitySearch(), lastRun),
		summary: "A probe scenario has stopped running.",
		description: "{{ if $labels.scenario }}Scenario {{ $labels.scenario }} against target {{ $labels.target }} " +
			"last ran {{ $value | humanizeDuration }} ago" +
			fmt.Sprintf(" (expected at least every %ds).", cfg.ExpectedRunIntervalSeconds) +
			"{{ else }}No hubprobe reports any scenario run: it is not running or not scraped.{{ end }}",
	}
}

// latencySeriesMissingAlert fires when a scenario delivers messages but the
// latency rules read nothing for it: neither a native histogram nor the
// classic 1 s bucket reaches them, so the latency alerts cannot fire. This
// is what a change of ingestion (native histograms turned on without the
// classic series, a renamed bucket, a metric relabelling) does silently.
// Capacity searches deliver outside hubprobe_messages_received_total, so
// they never trip it.
func (cfg Config) latencySeriesMissingAlert() alert {
	return alert{
		name: AlertLatencySeriesMissing, severity: SeverityWarning, forDuration: "10m",
		expr: fmt.Sprintf("%s (increase(%s[%s])) > 0\nunless on (target, scenario)\n  (%s and %s)",
			byTargetScenario, cfg.selector("hubprobe_messages_received_total"), cfg.RateWindow,
			cfg.slowShareRecord(), cfg.latencyP99Record()),
		summary: "hubprobe delivers messages but the latency rules see no latency histogram; the latency alerts cannot fire.",
		description: fmt.Sprintf("Scenario {{ $labels.scenario }} on target {{ $labels.target }} received {{ $value | humanize }} "+
			"messages over the last %s, yet no latency reaches the rules for it (%s or %s is missing): "+
			"Prometheus holds neither a native hubprobe_message_latency_seconds nor its classic le=\"1\" bucket and count.",
			cfg.RateWindow, cfg.slowShareRecord(), cfg.latencyP99Record()),
	}
}

// percent renders a ratio as a percentage without float noise: 0.7 → "70%".
func percent(ratio float64) string {
	return fmt.Sprintf("%.4g%%", ratio*100)
}

// anchor is the anchor GitHub gives a Markdown heading made of one word.
func anchor(heading string) string {
	return strings.ToLower(heading)
}
