package exporter

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// stepQueryTimeout bounds one query; the search asks again until its
// deadline.
const stepQueryTimeout = 5 * time.Second

// StepAggregator reads the figures every shard exported as
// hubprobe_capacity_step back from the Prometheus that scrapes them, summed.
type StepAggregator struct {
	api v1.API
}

var _ capacity.StepAggregator = (*StepAggregator)(nil)

// NewStepAggregator queries the Prometheus at url (http or https, with
// any path prefix it is served under).
func NewStepAggregator(url string) (*StepAggregator, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, err
	}
	return &StepAggregator{api: v1.NewAPI(c)}, nil
}

// stepQuery sums one step's series over the shards, one sample per figure.
func stepQuery(key capacity.StepKey) string {
	return fmt.Sprintf(`sum by (figure) (%s_capacity_step{target=%q, scenario=%q, run=%q, step="%d"})`,
		namespace, key.Target, key.Scenario, key.Run, key.Step)
}

// SumStep returns the step's figures summed over the shards that exported
// them; Shards is 0 while none has.
func (a *StepAggregator) SumStep(ctx context.Context, key capacity.StepKey) (capacity.StepTotals, error) {
	ctx, cancel := context.WithTimeout(ctx, stepQueryTimeout)
	defer cancel()
	v, _, _, err := a.api.Query(ctx, stepQuery(key), time.Now())
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

// totalsOf reads the summed figures into the search's totals.
func totalsOf(sums map[string]int64, step int) capacity.StepTotals {
	return capacity.StepTotals{
		Shards:      int(sums[FigureShards]),
		Connections: int(sums[FigureConnections]),
		Saturated:   int(sums[FigureSaturated]),
		Step: capacity.Step{
			Number: step, Senders: int(sums[FigureSenders]),
			Sent: sums[FigureSent], Expected: sums[FigureExpected], Received: sums[FigureReceived], Slow: sums[FigureSlow],
			Unsent: sums[FigureUnsent], Throttled: sums[FigureThrottled], FailedConnections: int(sums[FigureFailedConnections]),
		},
	}
}
