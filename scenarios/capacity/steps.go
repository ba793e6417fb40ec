package capacity

import (
	"context"
	"sort"
	"time"

	"github.com/hubprobe/hubprobe/scenarios"
)

// StepOptions run a capacity search by another method's rules: `hubprobe
// bench` uses them to run the vendors' benchmark files, whose ramp stops
// by the benchmark's own thresholds and whose report counts latencies in
// fixed classes.
type StepOptions struct {
	// Judge decides after each step whether the ramp stops there: it
	// returns "" to go on, or the reason, one of StopSlowMessages,
	// StopConnectionFailures and StopThrottled (the bounded values the
	// exporter knows). Nil judges by the capacity definition.
	Judge func(step Step, connections int) string
	// LatencyBounds, ascending, make every step count its deliveries by
	// latency class; see StepTally.Classes.
	LatencyBounds []time.Duration
}

// StepTally is what one step's messages came to by the end of the search,
// after its last drain: deliveries that arrived after the step was judged
// are counted here too.
type StepTally struct {
	Began   time.Time // when the step started sending
	Settled time.Time // when it was judged: its sending time and settling
	// Delivered counts every delivery of the step's messages.
	Delivered int64
	// Classes[i] counts deliveries with a latency below LatencyBounds[i]
	// and at or above the bound before it; the last class holds those at
	// or above the last bound. Nil without LatencyBounds.
	Classes []int64
}

// Steps is a capacity search with the final tally of each step, in order.
type Steps struct {
	Capacity
	Tallies []StepTally
}

// SearchSteps runs rn's capacity search as Search does, unsharded, with
// opts.
func SearchSteps(ctx context.Context, rn *scenarios.Runner, opts StepOptions) Steps {
	rec := newStepRecorder(rn.Recorder)
	rec.opts = opts
	c := (&searcher{Runner: rn}).search(ctx, rec, time.Now())
	return Steps{Capacity: c, Tallies: rec.tallies(len(c.Steps))}
}

// judge applies the caller's stop rule, or the capacity definition. A
// step the probe could not drive stops any search: what it measured is
// not the hub's.
func (r *stepRecorder) judge(s Step, connections int, maxSendLag time.Duration) string {
	if probeSaturated(s, maxSendLag) {
		return StopProbeSaturated
	}
	if r.opts.Judge != nil {
		return r.opts.Judge(s, connections)
	}
	return judge(s, connections, maxSendLag)
}

// tallies copies the first n steps' final counts.
func (r *stepRecorder) tallies(n int) []StepTally {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]StepTally, 0, n)
	for _, s := range r.steps[:min(n, len(r.steps))] {
		t := StepTally{Began: s.start, Settled: s.settled, Delivered: s.received}
		if s.classes != nil {
			t.Classes = append([]int64(nil), s.classes...)
		}
		out = append(out, t)
	}
	return out
}

// latencyClass is the index of the first bound above latency, or
// len(bounds) when there is none.
func latencyClass(bounds []time.Duration, latency time.Duration) int {
	return sort.Search(len(bounds), func(i int) bool { return latency < bounds[i] })
}
