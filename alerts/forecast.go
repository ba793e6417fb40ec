package alerts

import (
	"fmt"
	"strings"
)

// AlertTierLimitForecast warns before a service's own usage reaches its
// tier's limit.
const AlertTierLimitForecast = "HubprobeTierLimitForecast"

// forecastExpr projects each resource the service reports in Azure Monitor
// ForecastHorizon ahead, with predict_linear over ForecastFit, and keeps
// the projections past the tier's limit. A series that did not exist
// ForecastFit ago gives no projection: a trend fitted to a few hours says
// little about a week.
func (cfg Config) forecastExpr() string {
	horizon := int64(mustDuration(cfg.ForecastHorizon).Seconds())
	terms := make([]string, 0, len(reportedUsage))
	for _, u := range reportedUsage {
		m := cfg.selector(u.metric)
		terms = append(terms, fmt.Sprintf("  label_replace(\n    max by (target) (predict_linear(%s[%s], %d))\n"+
			"    and on (target)\n    max by (target) (%s offset %s),\n    \"resource\", %q, \"\", \"\"\n  )",
			m, cfg.ForecastFit, horizon, m, cfg.ForecastFit, u.resource))
	}
	return fmt.Sprintf("(\n%s\n)\n> on (target, resource)\n  max by (target, resource) (%s > 0)",
		strings.Join(terms, "\nor\n"), cfg.selector("hubprobe_tier_limit"))
}

func (cfg Config) tierLimitForecastAlert() alert {
	limit := `{{ with printf "max(hubprobe_tier_limit{target=%q,resource=%q})" $labels.target $labels.resource | query }}` +
		`{{ . | first | value | humanize }}{{ end }}`
	return alert{
		name: AlertTierLimitForecast, severity: SeverityWarning, forDuration: "1h",
		expr:    cfg.forecastExpr(),
		summary: fmt.Sprintf("A service's own usage is on course to pass its tier's limit within %s.", cfg.ForecastHorizon),
		description: fmt.Sprintf("Azure Monitor's figures of target {{ $labels.target }} project its {{ $labels.resource }} "+
			"at {{ $value | humanize }} in %s, from their trend over the last %s, past its tier's limit of %s. "+
			"The forecast needs %s of figures: with less it stays silent.", cfg.ForecastHorizon, cfg.ForecastFit, limit, cfg.ForecastFit),
	}
}
