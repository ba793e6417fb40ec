package scenarios

import "github.com/hubprobe/hubprobe/config"

// newRun starts the state of one run. Kinds whose batches end on a known
// message (server_push) say so here, before any client can receive one.
func (rn *Runner) newRun(cfg config.Scenario, rec Recorder, kind Kind) *Run {
	run := &Run{Config: cfg, ID: newRunID(), tracker: newTracker(rec, cfg.Connections), endpoint: rn.Endpoint}
	run.payloads = newPayloadBuilder(run.ID, cfg.MessageSize)
	if b, ok := kind.(batchKind); ok {
		run.batchSize = b.batchSize()
		run.tracker.countBatches()
	}
	return run
}
