package monitor

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/monitor/armmonitor"
)

// Shape of the query.
const (
	// windowGrains is how many time grains back each query looks for the
	// newest value of each metric: Azure Monitor publishes a minute's
	// values a few minutes late, and may leave a grain empty.
	windowGrains = 10
	// closeSeriesTop bounds the close categories Azure returns; above the
	// number it has.
	closeSeriesTop = 50
	// maxReadTimeout bounds one read when the interval is longer.
	maxReadTimeout = 30 * time.Second
)

// query is one read's request.
type query struct {
	options  armmonitor.MetricsClientListOptions
	grain    time.Duration
	end      time.Time // where the timespan ends: the grain in progress is left out
	requests []azureMetric
}

// newQuery asks for every metric in one request: their names together, both
// aggregations, and the close categories split out by a filter on their
// dimension. ValidateDimensions=false lets that filter stand beside the
// metrics that lack the dimension: the API then ignores it for them and
// returns each one's single series, where by default it refuses the whole
// query.
func newQuery(metrics []azureMetric, grain time.Duration, now time.Time) query {
	end := now.UTC().Truncate(grain)
	names := make([]string, len(metrics))
	filtered := false
	for i, m := range metrics {
		names[i] = m.name
		filtered = filtered || m.name == closeCount
	}
	q := query{grain: grain, end: end, requests: metrics}
	q.options = armmonitor.MetricsClientListOptions{
		Metricnames: ptr(strings.Join(names, ",")),
		Aggregation: ptr(queryAggregations),
		Interval:    ptr(isoDuration(grain)),
		Timespan:    ptr(end.Add(-windowGrains*grain).Format(time.RFC3339Nano) + "/" + end.Format(time.RFC3339Nano)),
	}
	if filtered {
		q.options.Filter = ptr(closeDimension + " eq '*'")
		q.options.ValidateDimensions = ptr(false)
		q.options.Top = ptr(int32(closeSeriesTop))
	}
	return q
}

func ptr[T any](v T) *T { return &v }

// isoDuration writes d as an ISO 8601 duration: PT1M, PT1H, PT0.2S.
func isoDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("PT%dH", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("PT%dM", d/time.Minute)
	}
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}

// valueKey names one exported value: a usage, and a close category.
type valueKey struct {
	usage    usage
	category string
}

// answer is what a 200 held.
type answer struct {
	values  map[valueKey]float64
	newest  time.Time // end of the newest grain a value came from
	missing []string  // metrics asked for that brought no value
}

// read sends one query and reads its answer.
func (r *Reader) read(ctx context.Context) (answer, *failure) {
	ctx, cancel := context.WithTimeout(ctx, min(r.opts.Interval, maxReadTimeout))
	defer cancel()
	q := newQuery(r.queried(), r.opts.Interval, time.Now())
	resp, err := r.client.List(ctx, strings.TrimPrefix(r.opts.Resource.String(), "/"), &q.options)
	if err != nil {
		return answer{}, classify(err, q.requests)
	}
	a := q.extract(resp.Response)
	if len(a.missing) > 0 {
		return a, &failure{reason: ReasonEmptySeries, detail: "no value for " + strings.Join(a.missing, ", ")}
	}
	return a, nil
}

// extract keeps, for every metric asked for, its newest value (per close
// category for the close count). The close count split by category has no
// series when no connection closed in the window: its throttled closes are
// then 0, not missing.
func (q query) extract(resp armmonitor.Response) answer {
	a := answer{values: map[valueKey]float64{}}
	for _, m := range q.requests {
		got := find(resp, m.name)
		found := got != nil && q.extractMetric(m, got, &a)
		if got != nil && m.name == closeCount {
			found = true
			throttled := valueKey{usageCloses, CategoryThrottled}
			a.values[throttled] += 0
		}
		if !found {
			a.missing = append(a.missing, m.name)
		}
	}
	return a
}

// extractMetric adds each series' newest value of metric m; false when none
// had one.
func (q query) extractMetric(m azureMetric, got *armmonitor.Metric, a *answer) bool {
	found := false
	for _, ts := range got.Timeseries {
		v, at, ok := q.newest(ts, m.agg)
		if !ok {
			continue
		}
		key := valueKey{usage: m.usage}
		if m.usage == usageCloses {
			key.category = closeCategory(category(ts))
		}
		a.values[key] += m.unit.convert(v, q.grain)
		a.newest = later(a.newest, at.Add(q.grain))
		found = true
	}
	return found
}

// newest is the value of the newest complete grain that has one.
func (q query) newest(ts *armmonitor.TimeSeriesElement, agg aggregation) (float64, time.Time, bool) {
	var best *armmonitor.MetricValue
	for _, p := range ts.Data {
		if p == nil || p.TimeStamp == nil || p.TimeStamp.Add(q.grain).After(q.end) || pointValue(p, agg) == nil {
			continue
		}
		if best == nil || p.TimeStamp.After(*best.TimeStamp) {
			best = p
		}
	}
	if best == nil {
		return 0, time.Time{}, false
	}
	v := *pointValue(best, agg)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, time.Time{}, false
	}
	return v, *best.TimeStamp, true
}

func pointValue(p *armmonitor.MetricValue, agg aggregation) *float64 {
	if agg == total {
		return p.Total
	}
	return p.Maximum
}

func category(ts *armmonitor.TimeSeriesElement) string {
	for _, md := range ts.Metadatavalues {
		if md != nil && md.Name != nil && strings.EqualFold(deref(md.Name.Value), closeDimension) {
			return deref(md.Value)
		}
	}
	return ""
}

// find returns the metric of that name in the answer, unless the answer
// carries it with an error of its own.
func find(resp armmonitor.Response, name string) *armmonitor.Metric {
	for _, got := range resp.Value {
		if got == nil || got.Name == nil || !strings.EqualFold(deref(got.Name.Value), name) {
			continue
		}
		if code := deref(got.ErrorCode); code != "" && !strings.EqualFold(code, "Success") {
			return nil
		}
		return got
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
