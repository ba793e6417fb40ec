package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// serverPush: each sender calls ServerPush(p, batch_size) and the hub pushes
// RecordLatency(p, i), i = 0 … batch_size-1, to the caller: a server-to-
// client throughput test. Every message carries the request's timestamp,
// so each counts as a delivery with its own latency; the arrival of the
// last one (i = batch_size-1) gives the batch's time to last message.
type serverPush struct {
	batch int
	conns []wire.ServerPusher
}

// batchKind is implemented by kinds whose deliveries come in batches that
// end on a known message.
type batchKind interface{ batchSize() int }

func newServerPush(cfg config.Scenario) Kind { return &serverPush{batch: max(cfg.BatchSize, 1)} }

func (k *serverPush) batchSize() int { return k.batch }

func (k *serverPush) Prepare(_ context.Context, r *Run) (err error) {
	k.conns, err = capabilities[wire.ServerPusher](r, r.Senders())
	return err
}

func (k *serverPush) Send(ctx context.Context, _ *Run, sender int, payload json.RawMessage) (int, error) {
	return k.batch, k.conns[sender].ServerPush(ctx, payload, k.batch)
}
