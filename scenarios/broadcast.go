package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
)

// broadcast: each sender calls Broadcast(p) and the hub sends
// RecordLatency(p) to every connection, so one send is one delivery per
// client of the run. Other connections on the hub receive it too; they are
// not this run's to count.
type broadcast struct{}

func newBroadcast(config.Scenario) Kind { return broadcast{} }

func (broadcast) Prepare(context.Context, *Run) error { return nil }

func (broadcast) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return len(r.Clients), r.Clients[sender].hub.broadcast(ctx, payload)
}
