package e2e

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubprobe/hubprobe/alerts"
	"github.com/hubprobe/hubprobe/grafana"
	"github.com/hubprobe/hubprobe/internal/histogramql/histogramqltest"
)

// checkNativeAnswerKept shows, on a Prometheus that stores both forms of
// every histogram, that the recorded series and the dashboards give the
// native histogram's answer. The forms' quantiles differ (each interpolates
// within its own buckets), so each quantile, taken at one instant, is
// compared with its native and its classic operand evaluated apart: it must
// be the native one's. The heatmap must show the one native histogram, not
// the classic buckets.
func checkNativeAnswerKept(ctx context.Context, t *testing.T, prom promAPI) {
	t.Helper()
	told := 0
	for _, r := range alerts.Groups(alerts.DefaultConfig).Groups[0].Rules {
		native, classic, ok := quantileForms(r.Expr)
		if !ok {
			continue
		}
		at, err := lastSampleTime(ctx, prom, r.Record)
		if err != nil {
			t.Errorf("recording rule %s: %v", r.Record, err)
			continue
		}
		told += compareForms(ctx, t, prom, "recording rule "+r.Record, r.Record, native, classic, at)
	}
	queries, err := grafana.Queries()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-2 * time.Second) // scrapes of that instant have landed
	for _, q := range queries {
		source := fmt.Sprintf("dashboard %s, panel %q, query %s", q.Dashboard, q.Panel, q.RefID)
		if strings.Contains(q.Expr, " or on () ") {
			checkNativeHeatmap(ctx, t, prom, source, q.Expr, at)
		} else if native, classic, ok := quantileForms(q.Expr); ok {
			told += compareForms(ctx, t, prom, source, q.Expr, native, classic, at)
		}
	}
	if told == 0 {
		t.Errorf("no quantile's native and classic answers differed for any scenario: nothing showed which answer is kept")
	}
	t.Logf("the native answer was kept in %d series whose forms differ", told)
}

// quantileForms splits an expression that is a histogram quantile's
// `native or classic` into its operands.
func quantileForms(expr string) (native, classic string, ok bool) {
	expr = strings.TrimSpace(expr)
	chains := histogramqltest.Chains(expr)
	if !strings.HasPrefix(expr, "histogram_quantile(") || len(chains) == 0 {
		return "", "", false
	}
	top := chains[len(chains)-1] // the outermost chain comes last
	if len(top) != 2 || !strings.HasPrefix(expr, top[0]) || !strings.HasSuffix(expr, top[1]) {
		return "", "", false
	}
	for _, h := range documentedHistograms() {
		for _, op := range top {
			switch n, c := histogramqltest.Forms(op, h); {
			case n && !c:
				native = op
			case c && !n:
				classic = op
			}
		}
	}
	return native, classic, native != "" && classic != ""
}

// compareForms evaluates expr and its two operands at the instant at, and
// checks that every series whose forms differ has the native answer. It
// returns how many series told the forms apart.
func compareForms(ctx context.Context, t *testing.T, prom promAPI, source, expr, native, classic string, at time.Time) int {
	t.Helper()
	var answers [3]map[string]float64
	for i, e := range []string{expr, native, classic} {
		var err error
		if answers[i], err = valuesAt(ctx, prom, e, at); err != nil {
			t.Errorf("%s: %s: %v", source, e, err)
			return 0
		}
	}
	told := 0
	for series, got := range answers[0] {
		n, hasNative := answers[1][series]
		c, hasClassic := answers[2][series]
		if !hasNative || !hasClassic || math.Abs(n-c) <= 1e-9*math.Max(math.Abs(n), math.Abs(c)) {
			continue
		}
		told++
		if math.Abs(got-n) >= math.Abs(got-c) {
			t.Errorf("%s, series %s: %g is the classic answer (%g), not the native one (%g)", source, series, got, c, n)
		}
	}
	return told
}

// checkNativeHeatmap checks that a heatmap's distribution is the one native
// histogram, not the classic buckets by le.
func checkNativeHeatmap(ctx context.Context, t *testing.T, prom promAPI, source, expr string, at time.Time) {
	t.Helper()
	res, err := prom.queryAt(ctx, expr, at)
	if err != nil {
		t.Errorf("%s: %v", source, err)
		return
	}
	if len(res.Samples) != 1 || res.Samples[0].Metric["le"] != "" {
		t.Errorf("%s shows %d series, want the one native histogram and no classic bucket: %s", source, len(res.Samples), res.Raw)
	}
}

// valuesAt is expr's value at at per series (by its labels but the name),
// NaNs left out.
func valuesAt(ctx context.Context, prom promAPI, expr string, at time.Time) (map[string]float64, error) {
	res, err := prom.queryAt(ctx, expr, at)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range res.Samples {
		v, err := strconv.ParseFloat(s.value(), 64)
		if err != nil {
			return nil, fmt.Errorf("value %q: %w", s.value(), err)
		}
		if !math.IsNaN(v) {
			delete(s.Metric, "__name__") // a recorded series is named, its operands not
			out[fmt.Sprint(s.Metric)] = v
		}
	}
	return out, nil
}

// lastSampleTime is when the rules last wrote a recorded series.
func lastSampleTime(ctx context.Context, prom promAPI, record string) (time.Time, error) {
	res, err := prom.query(ctx, "max(timestamp("+record+"))")
	if err != nil {
		return time.Time{}, err
	}
	if len(res.Samples) != 1 {
		return time.Time{}, fmt.Errorf("no sample: %s", res.Raw)
	}
	secs, err := strconv.ParseFloat(res.Samples[0].value(), 64)
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(math.Round(secs * 1000))), nil
}
