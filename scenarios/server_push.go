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

// recordLatency handles the hub's RecordLatency(p) to the client at index
// receiver and, from ServerPush, RecordLatency(p, i): one delivery of p (the
// i-th of its batch), and for the batch's last index the end of a batch.
// Payloads of other runs are ignored.
func (r *Run) recordLatency(receiver int, args []json.RawMessage) {
	if len(args) == 0 {
		return
	}
	us, id, ok := r.payloads.Parse(args[0])
	if !ok {
		return
	}
	_, seq := splitMessageID(id)
	pos := uint64(seq)
	if r.batchSize > 0 {
		index, ok := batchIndex(args, r.batchSize)
		if !ok {
			return
		}
		pos = pos*uint64(r.batchSize) + uint64(index)
	}
	latency := sinceStamp(us)
	if r.tracker.delivered(receiver, id, pos, latency) && r.batchSize > 0 && pos%uint64(r.batchSize) == uint64(r.batchSize-1) {
		r.tracker.batchDone(latency)
	}
}

// batchIndex reads the index argument of a batch message, which must be
// below size.
func batchIndex(args []json.RawMessage, size int) (int, bool) {
	if len(args) < 2 {
		return 0, false
	}
	i, err := strconv.Atoi(string(bytes.TrimSpace(args[1])))
	return i, err == nil && i >= 0 && i < size
}
