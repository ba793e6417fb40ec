package stepquery

import "github.com/hubprobe/hubprobe/scenarios/capacity"

// Series is where every shard publishes its figures of a step: one gauge
// per figure, labelled target, scenario, run, step and figure (the
// exporter's recorder, a capacity.StepPublisher, sets it).
const Series = "hubprobe_capacity_step"

// Figures of a step, the values of Series's figure label. Every one is a
// count that adds up over shards: shards is 1 on each, so the sum says how
// many shards published.
const (
	FigureShards            = "shards"
	FigureConnections       = "connections"
	FigureFailedConnections = "failed_connections"
	FigureSenders           = "senders"
	FigureSent              = "sent"
	FigureExpected          = "expected"
	FigureReceived          = "received"
	FigureSlow              = "slow"
	FigureUnsent            = "unsent"
	FigureThrottled         = "throttled"
	FigureSaturated         = "saturated"
)

// Figures are what one shard publishes of its step f, by figure.
func Figures(f capacity.StepFigures) map[string]float64 {
	s := f.Step
	saturated := 0.0
	if f.Saturated {
		saturated = 1
	}
	return map[string]float64{
		FigureShards: 1, FigureConnections: float64(f.Connections), FigureFailedConnections: float64(s.FailedConnections),
		FigureSenders: float64(s.Senders), FigureSent: float64(s.Sent), FigureExpected: float64(s.Expected),
		FigureReceived: float64(s.Received), FigureSlow: float64(s.Slow), FigureUnsent: float64(s.Unsent),
		FigureThrottled: float64(s.Throttled), FigureSaturated: saturated,
	}
}

// totalsOf reads the figures summed over the shards into the search's
// totals of step.
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
