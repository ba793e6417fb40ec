package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
)

// echo: each sender calls Echo(p) and the hub answers RecordLatency(p) (on
// a classic hub Measure) to the caller alone, so one send is one delivery.
type echo struct{}

func newEcho(config.Scenario) Kind { return echo{} }

func (echo) Prepare(context.Context, *Run) error { return nil }

func (echo) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, r.Clients[sender].hub.echo(ctx, payload)
}
