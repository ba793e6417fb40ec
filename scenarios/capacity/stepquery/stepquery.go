// Package stepquery is how a sharded capacity search judges each step by
// the figures of all its shards: every shard publishes its own figures as
// the Series gauges (Figures says which), and the Aggregator reads them
// back, summed, from the Prometheus that scrapes every shard, for the
// search's capacity.StepAggregator.
package stepquery

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// queryTimeout bounds one query; the search asks again until its
// deadline.
const queryTimeout = 5 * time.Second

// Aggregator reads the figures every shard published back from the
// Prometheus that scrapes them, summed.
type Aggregator struct {
	api v1.API
}

var _ capacity.StepAggregator = (*Aggregator)(nil)

// New queries the Prometheus at prometheusURL (http or https, with any
// path prefix it is served under). The error says what the URL is not,
// without quoting it: it may carry credentials.
func New(prometheusURL string) (*Aggregator, error) {
	u, err := url.Parse(prometheusURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("not an http or https URL")
	}
	c, err := api.NewClient(api.Config{Address: prometheusURL})
	if err != nil {
		return nil, errors.New("not a URL the Prometheus client takes")
	}
	return &Aggregator{api: v1.NewAPI(c)}, nil
}

// query sums one step's series over the shards, one sample per figure.
func query(key capacity.StepKey) string {
	return fmt.Sprintf(`sum by (figure) (%s{target=%q, scenario=%q, run=%q, step="%d"})`,
		Series, key.Target, key.Scenario, key.Run, key.Step)
}

// SumStep returns the step's figures summed over the shards that published
// them; Shards is 0 while none has.
func (a *Aggregator) SumStep(ctx context.Context, key capacity.StepKey) (capacity.StepTotals, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, _, _, err := a.api.Query(ctx, query(key), time.Now())
	if err != nil {
		return capacity.StepTotals{}, fmt.Errorf("querying Prometheus: %w", err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return capacity.StepTotals{}, fmt.Errorf("querying Prometheus: a %s, not an instant vector", v.Type())
	}
	sums := map[string]int64{}
	for _, s := range vec {
		sums[string(s.Metric["figure"])] = int64(s.Value)
	}
	return totalsOf(sums, key.Step), nil
}
