package scenarios

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/hubprobe/hubprobe/config"
)

// serverPush: each sender calls ServerPush(p, batch_size) and the hub pushes
// RecordLatency(p, i), i = 0 … batch_size-1, to the caller: a server-to-
// client throughput test. Every message carries the request's timestamp,
// so each counts as a delivery with its own latency; the arrival of the
// last one (i = batch_size-1) gives the batch's time to last message.
type serverPush struct{ batch int }

// batchKind is implemented by kinds whose deliveries come in batches that
// end on a known message.
type batchKind interface{ batchSize() int }

func newServerPush(cfg config.Scenario) Kind { return serverPush{batch: max(cfg.BatchSize, 1)} }

func (k serverPush) batchSize() int { return k.batch }

func (serverPush) Prepare(context.Context, *Run) error { return nil }

func (k serverPush) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	count := json.RawMessage(strconv.Itoa(k.batch))
	return k.batch, r.Clients[sender].Conn.Send(ctx, "ServerPush", payload, count)
}
