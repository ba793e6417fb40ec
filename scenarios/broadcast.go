package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// broadcast: each sender asks the hub to send its payload to every
// connection (Broadcast(p), answered by RecordLatency(p)), so one send is
// one delivery per client of the run. Other connections on the hub
// receive it too; they are not this run's to count.
type broadcast struct{ conns []wire.Broadcaster }

func newBroadcast(config.Scenario) Kind { return &broadcast{} }

func (k *broadcast) Prepare(_ context.Context, r *Run) (err error) {
	k.conns, err = capabilities[wire.Broadcaster](r, r.Senders())
	return err
}

func (k *broadcast) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	return len(r.Clients), k.conns[sender].Broadcast(ctx, payload)
}
