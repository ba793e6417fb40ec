package bench

import (
	"context"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/hubprobe/hubprobe/scenarios"
	"github.com/hubprobe/hubprobe/scenarios/capacity"
)

// Run runs the plan against its target: all connections, then the file's
// steps, each ended by the benchmark's conditional stop. A hub that cannot
// be reached still gives a report, one that says so.
func (p *Plan) Run(ctx context.Context, log zerolog.Logger) (*Report, error) {
	cfg, err := p.hubprobe(scenarios.Kinds())
	if err != nil {
		return nil, err
	}
	// A bench run reports on its output, it is not a canary's series.
	job, err := scenarios.Resolver{Recorder: scenarios.Discarding, Logger: log}.Job(cfg, cfg.Scenarios[0])
	if err != nil {
		return nil, err
	}
	runner, s := job.Runner, job.Runner.Scenario
	runCtx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	steps := capacity.SearchSteps(runCtx, runner, capacity.StepOptions{Judge: p.conditionalStop, LatencyBounds: latencyBounds})
	return p.report(steps), nil
}

// Report is a finished bench run: one item per step that ran.
type Report struct {
	Plan  *Plan
	Steps capacity.Steps
	Items []Item
	// Planned is how many steps the file's ramp has.
	Planned int
	// Established is the setup before the first step: connecting and
	// preparing routes (groups, target connections).
	Established time.Duration
}

// Item is one step with the benchmark's figures worked out.
type Item struct {
	Step  capacity.Step
	Tally capacity.StepTally
	// Connected is how many connections were up when the step was judged.
	Connected int
	// Seconds is the step's time as the benchmark prints it: whole
	// seconds, from its start to its judgement, at least 1.
	Seconds int
	// SentSize and ReceivedSize count payload bytes as the benchmark does:
	// the message blob plus 8 for its timestamp, per message.
	SentSize, ReceivedSize int64
	// Lost are the step's expected deliveries that never arrived; Slow
	// those that arrived after 1 s or more.
	Lost, Slow int64
	Suspicious []string
}

// Passed is hubprobe's objective for a step: something was expected, all
// of it arrived, and 99 % of it in under 1 s.
func (it Item) Passed() bool {
	return it.Step.Expected > 0 && it.Lost == 0 && it.Slow*100 <= it.Step.Expected
}

// Passed reports whether the whole file's ramp ran and every step passed.
func (r *Report) Passed() bool {
	if !r.Steps.Measured() || len(r.Items) < r.Planned {
		return false
	}
	for _, it := range r.Items {
		if !it.Passed() {
			return false
		}
	}
	return true
}

// Write prints the report as text or, when format is "json", as JSON.
func (r *Report) Write(w io.Writer, format string) error {
	if format == "json" {
		return r.WriteJSON(w)
	}
	return r.WriteText(w)
}

func (p *Plan) report(steps capacity.Steps) *Report {
	r := &Report{Plan: p, Steps: steps, Planned: p.Search.Steps(p.Connections)}
	if len(steps.Tallies) > 0 {
		r.Established = steps.Tallies[0].Began.Sub(steps.Result.Start)
	}
	perMessage := int64(p.MessageSize) + 8
	for i, st := range steps.Steps {
		tally := steps.Tallies[i]
		it := Item{
			Step: st, Tally: tally, Connected: p.Connections - st.FailedConnections,
			Seconds:  max(1, int(tally.Settled.Sub(tally.Began)/time.Second)),
			SentSize: st.Sent * perMessage, ReceivedSize: tally.Delivered * perMessage,
			Lost: max(st.Expected-tally.Delivered, 0), Slow: slowCount(tally.Classes),
		}
		it.Suspicious = suspicious(it, p.Connections)
		r.Items = append(r.Items, it)
	}
	return r
}
