package monitortest

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// query is a metrics request's parameters.
type query struct {
	metrics      []string
	aggregations map[string]bool
	interval     string
	grain        time.Duration
	start, end   time.Time
	dimension    string // split by this one ($filter "<dimension> eq '*'"); empty: none
	validateDims bool
	top          int
}

// maxGrains bounds the points of one series, as Azure bounds a query.
const maxGrains = 1000

var (
	isoDurationPattern = regexp.MustCompile(`^PT(\d+(?:\.\d+)?)([HMS])$`)
	filterPattern      = regexp.MustCompile(`^\s*(\w+)\s+eq\s+'\*'\s*$`)
)

// parseQuery reads the parameters, each looked up case-insensitively as
// Azure does.
func parseQuery(v url.Values) (query, error) {
	get := func(name string) string {
		for k, vs := range v {
			if strings.EqualFold(k, name) && len(vs) > 0 {
				return vs[0]
			}
		}
		return ""
	}
	if get("api-version") == "" {
		return query{}, errors.New("no api-version")
	}
	q := query{aggregations: map[string]bool{}, validateDims: !strings.EqualFold(get("ValidateDimensions"), "false"), top: 10}
	if names := get("metricnames"); names != "" {
		q.metrics = strings.Split(names, ",")
	}
	for _, a := range strings.Split(strings.ToLower(get("aggregation")), ",") {
		q.aggregations[strings.TrimSpace(a)] = true
	}
	if n, err := strconv.Atoi(get("top")); err == nil {
		q.top = n
	}
	if err := q.parseTime(get("interval"), get("timespan")); err != nil {
		return query{}, err
	}
	// parseFilter fills q: it runs before q is returned, not beside it.
	err := q.parseFilter(get("$filter"))
	return q, err
}

func (q *query) parseTime(interval, timespan string) error {
	q.interval = interval
	m := isoDurationPattern.FindStringSubmatch(interval)
	if m == nil {
		return fmt.Errorf("invalid interval %q", interval)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	q.grain = time.Duration(n * float64(map[string]time.Duration{"H": time.Hour, "M": time.Minute, "S": time.Second}[m[2]]))
	from, to, ok := strings.Cut(timespan, "/")
	var err1, err2 error
	q.start, err1 = time.Parse(time.RFC3339Nano, from)
	q.end, err2 = time.Parse(time.RFC3339Nano, to)
	switch {
	case !ok || err1 != nil || err2 != nil || !q.start.Before(q.end):
		return fmt.Errorf("invalid timespan %q", timespan)
	case q.grain <= 0 || q.end.Sub(q.start)/q.grain > maxGrains:
		return fmt.Errorf("interval %s does not fit timespan %s", interval, timespan)
	}
	return nil
}

func (q *query) parseFilter(filter string) error {
	if filter == "" {
		return nil
	}
	m := filterPattern.FindStringSubmatch(filter)
	if m == nil {
		return fmt.Errorf("unsupported $filter %q", filter)
	}
	q.dimension = m[1]
	return nil
}

// grains are the start times of the query's time grains.
func (q query) grains() []time.Time {
	var out []time.Time
	for t := q.start; t.Before(q.end); t = t.Add(q.grain) {
		out = append(out, t)
	}
	return out
}
