package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/config"
)

// versionPairs are the instances whose records must agree: each way of
// ingesting on 2.x and the same on 3.x, and 3.x's native histograms with
// custom buckets (converted from the classic ones) against 2.x's classic
// buckets.
var versionPairs = [][2]ingestion{{classicOnly, classic3}, {nativeOnly, native3}, {bothForms, both3}, {classicOnly, nhcb3}}

// agreeingRecords are the records compared: the p99 and the share over 1 s.
var agreeingRecords = []string{
	"target_scenario:hubprobe_message_latency_seconds:p99_rate5m", slowShareRecord,
}

// settled is how long after a run ends its figures are in every instance:
// a scrape (1 s) and a rule evaluation (1 s) later, with a second to spare.
const settled = 3 * time.Second

// nativeBucketRatio bounds how far apart two interpolations within one
// native bucket can land: hubprobe's native buckets are at most 2^(1/8)
// wide (bucket factor 1.1), and Prometheus 3 interpolates a native
// histogram's quantile within its bucket otherwise than 2.x does.
var nativeBucketRatio = math.Pow(2, 1.0/8)

// settledInstants are, per run scenario of the default configuration, the
// moment settled after its last run ended, waited for where it has not
// come yet; after must precede each (a run must have ended since). Held
// scenarios are left out: their connections deliver all the time, so no
// instant holds the same deliveries in instances that scrape at different
// moments.
func settledInstants(ctx context.Context, t *testing.T, prom promAPI, after map[string]time.Time) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for _, s := range config.Default().Scenarios {
		if s.Mode != config.ModeRun || s.Kind == config.KindHeld {
			continue
		}
		err := eventually(ctx, firstRunsLimit, func(ctx context.Context) error {
			at, err := settledInstant(ctx, prom, s.Name)
			if err == nil && !at.After(after[s.Name]) {
				err = fmt.Errorf("scenario %s has not run since %s", s.Name, after[s.Name].Format(time.RFC3339Nano))
			}
			out[s.Name] = at
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkVersionsAgree shows that Prometheus 2.x and 3.x record the same p99
// and share over 1 s from the same traffic. The instances started scraping
// at different moments, some in the middle of a scenario's first run, so
// their 5-minute windows do not hold the same deliveries yet; each
// recording rule is evaluated instead with its window set to the span
// between two settled instants of the scenario, from and to, which holds
// the same complete runs in every instance. The share over 1 s must agree
// to rounding in every pair; so must the p99 from classic buckets (native
// ones with custom buckets included), and the p99 from native ones within
// a native bucket. It returns how many figures were compared.
func checkVersionsAgree(ctx context.Context, t *testing.T, proms []modePrometheus, from, to map[string]time.Time) int {
	t.Helper()
	byMode := map[ingestion]promAPI{}
	for _, m := range proms {
		byMode[m.mode] = m.prom
	}
	compared, shares := 0, []string{}
	defer func() { t.Logf("share over 1 s of the compared runs (2.x classic): %s", strings.Join(shares, ", ")) }()
	for scenario, at := range to {
		window := fmt.Sprintf("[%dms]", at.Sub(from[scenario]).Milliseconds())
		for _, record := range agreeingRecords {
			expr := strings.ReplaceAll(recordingRule(t, record).Expr, "["+alerts.DefaultConfig.RateWindow+"]", window)
			for _, pair := range versionPairs {
				a, errA := scenarioValueAt(ctx, byMode[pair[0]], expr, scenario, at)
				b, errB := scenarioValueAt(ctx, byMode[pair[1]], expr, scenario, at)
				native := pair[0].native && !pair[1].nhcb && record != slowShareRecord
				switch {
				case errA != nil || errB != nil:
					t.Errorf("%s of %s at %s: %s: %v; %s: %v", record, scenario, at.Format(time.RFC3339Nano), pair[0].name, errA, pair[1].name, errB)
				case !agree(a, b, native):
					t.Errorf("%s of %s over %s up to %s: %s gives %g, %s %g", record, scenario, window, at.Format(time.RFC3339Nano), pair[0].name, a, pair[1].name, b)
				default:
					compared++
					if record == slowShareRecord && pair[0] == classicOnly && pair[1] == classic3 {
						shares = append(shares, fmt.Sprintf("%s %.3g", scenario, a))
					}
				}
			}
		}
	}
	return compared
}

// agree: equal to rounding (within a native bucket where native is set),
// or both NaN (a quantile of nothing).
func agree(a, b float64, native bool) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	lo, hi := math.Min(a, b), math.Max(a, b)
	if native {
		return hi <= lo*nativeBucketRatio
	}
	return hi-lo <= 1e-9*hi
}

func recordingRule(t *testing.T, name string) alerts.Rule {
	t.Helper()
	rules := alerts.Groups(alerts.DefaultConfig).Groups[0].Rules
	i := slices.IndexFunc(rules, func(r alerts.Rule) bool { return r.Record == name })
	if i < 0 {
		t.Fatalf("package alerts has no recording rule %s; update this test", name)
	}
	return rules[i]
}

// settledInstant is the moment settled after the scenario's last run ended,
// waited for if it has not come yet.
func settledInstant(ctx context.Context, prom promAPI, scenario string) (time.Time, error) {
	res, err := prom.query(ctx, fmt.Sprintf("max(hubprobe_last_run_timestamp_seconds{scenario=%q})", scenario))
	if err != nil || len(res.Samples) != 1 {
		return time.Time{}, fmt.Errorf("last run of %s: %v %s", scenario, err, res.Raw)
	}
	end, err := strconv.ParseFloat(res.Samples[0].value(), 64)
	if err != nil {
		return time.Time{}, err
	}
	at := time.UnixMilli(int64(end * 1000)).Add(settled)
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(time.Until(at)):
	}
	return at, nil
}

// scenarioValueAt is the value expr has for the scenario at the instant at.
func scenarioValueAt(ctx context.Context, prom promAPI, expr, scenario string, at time.Time) (float64, error) {
	res, err := prom.queryAt(ctx, expr, at)
	if err != nil {
		return 0, err
	}
	for _, s := range res.Samples {
		if s.Metric["scenario"] == scenario {
			return strconv.ParseFloat(s.value(), 64)
		}
	}
	return 0, fmt.Errorf("no series of scenario %s: %s", scenario, res.Raw)
}
