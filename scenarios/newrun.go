package scenarios

import (
	"time"

	"github.com/hubprobe/hubprobe/config"
)

// newRun starts the state of the run scheduled at at. Kinds whose batches
// end on a known message (server_push) say so here, before any client can
// receive one.
func (rn *Runner) newRun(cfg config.Scenario, rec Recorder, kind Kind, at time.Time) *Run {
	run := &Run{
		Config: cfg, ID: runID(cfg.Name, at), shard: rn.Shard, first: rn.Shard.First(cfg.Connections),
		tracker: newTracker(rec, rn.connections()), endpoint: rn.Endpoint,
	}
	run.tracker.runID, run.tracker.first = run.ID, run.first
	run.payloads = newPayloadBuilder(runMarker(run.ID, rn.Shard), cfg.MessageSize)
	if b, ok := kind.(batchKind); ok {
		run.batchSize = b.batchSize()
		run.tracker.countBatches()
	}
	return run
}

// connections is this shard's share of the scenario's connections.
func (rn *Runner) connections() int { return rn.Shard.Share(rn.Scenario.Connections) }

// Senders is how many of this shard's connections send in a run: its share
// of senders, or all its connections when senders is 0.
func (rn *Runner) Senders() int {
	if s := rn.Scenario.Senders; s > 0 {
		return min(rn.Shard.Share(s), rn.connections())
	}
	return rn.connections()
}
