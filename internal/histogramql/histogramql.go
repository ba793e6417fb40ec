// Package histogramql writes the PromQL that reads hubprobe's histograms in
// whichever form Prometheus stored them, for the rules and the dashboards.
//
// hubprobe exports every histogram twice: as classic buckets and as native
// buckets. A Prometheus that does not ingest native histograms stores the
// classic series (name_bucket, name_count, name_sum). One that does
// (--enable-feature=native-histograms on 2.x, scrape_native_histograms on
// 3.x) stores the native histogram under the bare name and drops the classic
// series, unless the scrape job also keeps them (scrape_classic_histograms
// on 2.45 and later, always_scrape_classic_histograms on 3.x). A query that
// reads only one form comes back empty in the other case, so each function
// here returns both forms of the same quantity, with the same labels.
package histogramql

import "fmt"

// OneSecondBucket matches the classic bucket at 1 s, the capacity line.
// Prometheus 2 stores its le as "1" from the plain text format and as "1.0"
// from OpenMetrics and protobuf; Prometheus 3 always as "1.0".
const OneSecondBucket = `le=~"1|1.0"`

// Rate renders the per-second rate of one series over the caller's window,
// with the caller's selector added to the given matchers.
type Rate func(series string, matchers ...string) string

// Forms is one quantity computed from the native histogram and from the
// classic series. Both carry exactly the labels they are aggregated by.
type Forms struct {
	Native, Classic string
}

// Or joins the forms with `or` on one line. The native form comes first:
// where Prometheus holds both, its answer is kept and the classic one, which
// has the same labels, is dropped instead of being added twice.
func (f Forms) Or() string {
	return f.Native + " or " + f.Classic
}

// Quantile is the q-quantile of the histogram per the by labels. The native
// form interpolates within a native bucket, the classic one within a classic
// bucket; at a boundary both have (1 s, for one) they agree exactly.
func Quantile(q float64, by string, rate Rate, histogram string) Forms {
	return Forms{
		Native:  fmt.Sprintf("histogram_quantile(%g, sum by (%s) (%s))", q, by, rate(histogram)),
		Classic: fmt.Sprintf("histogram_quantile(%g, sum by (%s, le) (%s))", q, by, rate(histogram+"_bucket")),
	}
}

// ShareUnderOneSecond is the share of observations at or under 1 s. It is
// exact in both forms: 1 is a boundary of every native bucket schema, and
// the classic histogram has a bucket there.
func ShareUnderOneSecond(by string, rate Rate, histogram string) Forms {
	return Forms{
		Native: fmt.Sprintf("histogram_fraction(0, 1, sum by (%s) (%s))", by, rate(histogram)),
		Classic: fmt.Sprintf("sum by (%s) (%s) / sum by (%s) (%s)",
			by, rate(histogram+"_bucket", OneSecondBucket), by, rate(histogram+"_count")),
	}
}

// Count is the number of observations per second, per the by labels.
func Count(by string, rate Rate, histogram string) Forms {
	return Forms{
		Native:  fmt.Sprintf("histogram_count(sum by (%s) (%s))", by, rate(histogram)),
		Classic: fmt.Sprintf("sum by (%s) (%s)", by, rate(histogram+"_count")),
	}
}

// Mean is the mean observation per the by labels: for the connect phases,
// how long each phase takes on average, the means adding up as the phases
// do.
func Mean(by string, rate Rate, histogram string) Forms {
	return Forms{
		Native: fmt.Sprintf("histogram_sum(sum by (%s) (%s)) / histogram_count(sum by (%s) (%s))",
			by, rate(histogram), by, rate(histogram)),
		Classic: fmt.Sprintf("sum by (%s) (%s) / sum by (%s) (%s)", by, rate(histogram+"_sum"), by, rate(histogram+"_count")),
	}
}

// Distribution is the whole histogram's rate summed over every series, for
// a heatmap: one native histogram, or one classic series per le. Their
// labels differ, so the forms are joined with `or on ()`, which keeps the
// classic buckets only when there is no native histogram at all.
func Distribution(rate Rate, histogram string) string {
	return fmt.Sprintf("sum(%s) or on () sum by (le) (%s)", rate(histogram), rate(histogram+"_bucket"))
}
