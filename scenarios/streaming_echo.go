package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// streamingEcho: each sender opens StreamingEcho(upload, delayMs) and sends
// its payloads as upload stream items; the hub streams each item back, so
// one item is one delivery. Streams end when the run closes its clients.
type streamingEcho struct {
	delay time.Duration
	sends []func(context.Context, json.RawMessage) error
}

func newStreamingEcho(cfg config.Scenario) Kind {
	return &streamingEcho{delay: cfg.StreamItemDelay}
}

func (k *streamingEcho) Prepare(ctx context.Context, r *Run) error {
	conns, err := capabilities[wire.StreamEchoer](r, r.Senders())
	if err != nil {
		return err
	}
	k.sends = make([]func(context.Context, json.RawMessage) error, len(conns))
	for i, c := range conns {
		if k.sends[i], err = c.StreamEcho(ctx, k.delay); err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
	}
	return nil
}

func (k *streamingEcho) Send(ctx context.Context, _ *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, k.sends[sender](ctx, payload)
}
