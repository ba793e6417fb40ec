package scenarios

import (
	"bytes"
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

// recordLatency handles the hub's RecordLatency(p) and, from ServerPush,
// RecordLatency(p, i): one delivery of p, and for the batch's last index
// the end of a batch. Payloads of other runs are ignored.
func (r *Run) recordLatency(args []json.RawMessage) {
	if len(args) == 0 {
		return
	}
	us, ok := r.payloads.Parse(args[0])
	if !ok {
		return
	}
	latency := sinceStamp(us)
	r.tracker.delivered(latency)
	if r.batchSize > 0 && len(args) > 1 && isIndex(args[1], r.batchSize-1) {
		r.tracker.batchDone(latency)
	}
}

func isIndex(arg json.RawMessage, want int) bool {
	i, err := strconv.Atoi(string(bytes.TrimSpace(arg)))
	return err == nil && i == want
}
