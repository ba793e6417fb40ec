package histogramql

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hubprobe/hubprobe/alerts/promtooltest"
	"github.com/hubprobe/hubprobe/internal/histogramql/histogramqltest"
)

const histogram = "m_seconds"

// rate5m is a Rate as the rules write it: the matchers inside braces, a
// five-minute window.
func rate5m(series string, matchers ...string) string {
	if len(matchers) > 0 {
		series += "{" + strings.Join(matchers, ", ") + "}"
	}
	return fmt.Sprintf("rate(%s[5m])", series)
}

// Each quantity, in each form, exactly: the native form reads the bare
// name, the classic one the _bucket and _count series, both aggregated by
// the caller's labels (the classic quantile by le as well).
func TestFormsOfEachQuantity(t *testing.T) {
	const by = "target, scenario"
	for _, c := range []struct {
		name string
		got  Forms
		want Forms
	}{
		{"Quantile", Quantile(0.99, by, rate5m, histogram), Forms{
			Native:  "histogram_quantile(0.99, sum by (target, scenario) (rate(m_seconds[5m])))",
			Classic: "histogram_quantile(0.99, sum by (target, scenario, le) (rate(m_seconds_bucket[5m])))",
		}},
		{"ShareUnderOneSecond", ShareUnderOneSecond(by, rate5m, histogram), Forms{
			Native: "histogram_fraction(0, 1, sum by (target, scenario) (rate(m_seconds[5m])))",
			Classic: `sum by (target, scenario) (rate(m_seconds_bucket{le=~"1|1.0"}[5m]))` +
				" / sum by (target, scenario) (rate(m_seconds_count[5m]))",
		}},
		{"Mean", Mean(by, rate5m, histogram), Forms{
			Native: "histogram_sum(sum by (target, scenario) (rate(m_seconds[5m])))" +
				" / histogram_count(sum by (target, scenario) (rate(m_seconds[5m])))",
			Classic: "sum by (target, scenario) (rate(m_seconds_sum[5m])) / sum by (target, scenario) (rate(m_seconds_count[5m]))",
		}},
		{"Count", Count(by, rate5m, histogram), Forms{
			Native:  "histogram_count(sum by (target, scenario) (rate(m_seconds[5m])))",
			Classic: "sum by (target, scenario) (rate(m_seconds_count[5m]))",
		}},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, c.got, c.want)
		}
		if or := c.got.Or(); or != c.want.Native+" or "+c.want.Classic {
			t.Errorf("%s: Or() = %q, want the native form, `or`, the classic form", c.name, or)
		}
		if err := histogramqltest.NativeFirst(c.got.Or(), histogram); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// The heatmap's distribution: one native histogram, or the classic
// buckets only when there is no native histogram at all.
func TestDistribution(t *testing.T) {
	got := Distribution(rate5m, histogram)
	if want := "sum(rate(m_seconds[5m])) or on () sum by (le) (rate(m_seconds_bucket[5m]))"; got != want {
		t.Errorf("Distribution = %q, want %q", got, want)
	}
	if err := histogramqltest.NativeFirst(got, histogram); err != nil {
		t.Error(err)
	}
}

// OneSecondBucket finds the 1 s bucket under both names Prometheus stores
// it by, and no other bucket. PromQL anchors the regular expression.
func TestOneSecondBucketMatchesOnlyTheOneSecondBucket(t *testing.T) {
	m := regexp.MustCompile(`^le=~"(.*)"$`).FindStringSubmatch(OneSecondBucket)
	if m == nil {
		t.Fatalf("OneSecondBucket = %s, want an le=~ matcher", OneSecondBucket)
	}
	le := regexp.MustCompile("^(?:" + m[1] + ")$")
	for value, want := range map[string]bool{
		"1": true, "1.0": true,
		"0.1": false, "10": false, "1.5": false, "11": false, "0.7": false, "2.5": false, "+Inf": false, "": false,
	} {
		if le.MatchString(value) != want {
			t.Errorf("le=%q matched %v, want %v", value, !want, want)
		}
	}
}

// Against Prometheus's own engine (promtool), on classic series alone, as
// a Prometheus without native histograms stores them: `or` falls back to
// the classic form, which answers per target and scenario only (scrape
// labels summed away, le="1" and le="1.0" both found) with the values the
// buckets give.
func TestClassicFormsAgainstPromtool(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "histogramql_test.yml")
	if err := os.WriteFile(path, []byte(promtoolTests()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := promtooltest.Run(t, "test", "rules", path)
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules:\n%s", out)
	}
}

// promtoolTests is a promtool unit test file: two scrape targets of one
// scenario, one storing the 1 s bucket as le="1" and the other as "1.0",
// each counting 100 observations a minute: 90 up to 0.5 s, 98 up to 1 s,
// 30 s in all.
func promtoolTests() string {
	const by = "target, scenario"
	var series strings.Builder
	for instance, one := range map[string]string{"a": "1", "b": "1.0"} {
		for _, b := range []struct{ le, perMinute string }{{"0.5", "90"}, {one, "98"}, {"+Inf", "100"}} {
			fmt.Fprintf(&series, "      - series: 'm_seconds_bucket{target=\"t\",scenario=\"s\",instance=%q,le=%q}'\n        values: '0+%sx20'\n",
				instance, b.le, b.perMinute)
		}
		fmt.Fprintf(&series, "      - series: 'm_seconds_count{target=\"t\",scenario=\"s\",instance=%q}'\n        values: '0+100x20'\n", instance)
		fmt.Fprintf(&series, "      - series: 'm_seconds_sum{target=\"t\",scenario=\"s\",instance=%q}'\n        values: '0+30x20'\n", instance)
	}
	check := func(expr, value string) string {
		return fmt.Sprintf("      - expr: round(%s, 0.0001)\n        eval_time: 10m\n        exp_samples:\n          - labels: '{target=\"t\",scenario=\"s\"}'\n            value: %s\n",
			expr, value)
	}
	return "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" + series.String() +
		"    promql_expr_test:\n" +
		check(ShareUnderOneSecond(by, rate5m, histogram).Or(), "0.98") +
		check(Count(by, rate5m, histogram).Or(), "3.3333") +
		check(Mean(by, rate5m, histogram).Or(), "0.3") +
		// The 90th percentile is the 0.5 s bound itself; the 94th lies
		// halfway from 90 to 98 observations, so halfway to 1 s, with
		// both targets' buckets at 1 s merged whatever their le.
		check(Quantile(0.9, by, rate5m, histogram).Or(), "0.5") +
		check(Quantile(0.94, by, rate5m, histogram).Or(), "0.75")
}
