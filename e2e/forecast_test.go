package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/alerts/promtooltest"
)

const forecastBudget = time.Minute

// The backfilled days: two days of figures every ten minutes, ending at the
// last whole minute.
const (
	backfillDays = 2
	backfillStep = 10 * time.Minute
)

// backfilledTarget is one target's connections over the backfilled days:
// value(i) at the i-th sample, from first on (earlier samples are not
// written).
type backfilledTarget struct {
	name  string
	first int
	value func(i int) float64
}

// backfilledTargets: rising 0.1 a minute (588 at the end, 1596 a week on,
// past the limit of 1000), flat at 850 (near the limit, going nowhere), and
// rising steeply but for 20 hours only.
var backfilledTargets = []backfilledTarget{
	{"rising", 0, func(i int) float64 { return 300 + float64(i) }},
	{"flat", 0, func(int) float64 { return 850 }},
	{"fresh", backfillSamples() - 120, func(i int) float64 { return 500 + 10*float64(i) }},
}

func backfillSamples() int { return int(backfillDays*24*time.Hour/backfillStep) + 1 }

// openMetrics writes the targets' hubprobe_service_connections and their
// tier's connection limit as OpenMetrics text, samples up to end.
func openMetrics(end time.Time) string {
	var b strings.Builder
	n := backfillSamples()
	at := func(i int) string {
		return strconv.FormatInt(end.Add(-time.Duration(n-1-i)*backfillStep).Unix(), 10)
	}
	b.WriteString("# TYPE hubprobe_service_connections gauge\n")
	for _, tg := range backfilledTargets {
		for i := tg.first; i < n; i++ {
			fmt.Fprintf(&b, "hubprobe_service_connections{target=%q} %g %s\n", tg.name, tg.value(i), at(i))
		}
	}
	b.WriteString("# TYPE hubprobe_tier_limit gauge\n")
	for _, tg := range backfilledTargets {
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "hubprobe_tier_limit{target=%q,resource=\"connections\"} 1000 %s\n", tg.name, at(i))
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// TestTierLimitForecastOnBackfilledSeries backfills two days of a
// service's connections into the TSDB of each Prometheus (with that
// version's promtool tsdb create-blocks-from openmetrics), starts it on
// them, and evaluates HubprobeTierLimitForecast's expression at the last
// sample: only the rising target is projected past its limit, at 1596; the
// flat one and the one with 20 hours of figures are not.
func TestTierLimitForecastOnBackfilledSeries(t *testing.T) {
	bins := prometheusBins(t)
	ctx, cancel := context.WithTimeout(context.Background(), forecastBudget)
	defer cancel()
	end := time.Now().Truncate(time.Minute).Add(-time.Minute)
	input := filepath.Join(t.TempDir(), "connections.om")
	if err := os.WriteFile(input, []byte(openMetrics(end)), 0o600); err != nil {
		t.Fatal(err)
	}
	expr := alertExpr(t, alerts.AlertTierLimitForecast)
	for _, v := range []struct{ name, prometheus, promtool string }{
		{"2.x", bins.v2, promtooltest.Debian(t).Path},
		{"3.x", bins.v3, filepath.Join(filepath.Dir(bins.v3), "promtool")},
	} {
		data := t.TempDir()
		backfill(ctx, t, v.promtool, input, data)
		prom := startPrometheusOn(ctx, t, v.prometheus, "prometheus-backfilled-"+v.name, "global:\n  scrape_interval: 1m\n", data)
		res, err := prom.queryAt(ctx, expr, end)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		var got []string
		for _, s := range res.Samples {
			value, _ := strconv.ParseFloat(s.value(), 64)
			got = append(got, fmt.Sprintf("%s %s %g", s.Metric["target"], s.Metric["resource"], math.Round(value)))
		}
		if want := []string{"rising connections 1596"}; !slices.Equal(got, want) {
			t.Errorf("%s: the forecast at the last sample is %q, want %q\n%s", v.name, got, want, res.Raw)
		}
	}
}

// backfill turns the OpenMetrics file into blocks in data.
func backfill(ctx context.Context, t *testing.T, promtool, input, data string) {
	t.Helper()
	out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", input, data).CombinedOutput()
	if err != nil {
		t.Fatalf("%s tsdb create-blocks-from openmetrics: %v\n%s", promtool, err, out)
	}
}

// alertExpr is the expression of the named alert of the shipped rules.
func alertExpr(t *testing.T, name string) string {
	t.Helper()
	rule, ok := alertRule(name)
	if !ok {
		t.Fatalf("package alerts has no alert %s; update this test", name)
	}
	return rule.Expr
}
