package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// echo: each sender sends its payload to the hub, which answers it to the
// sender alone (wire.Echoer), so one send is one delivery: Echo(p)
// answered by RecordLatency(p) on SignalR, Measure on a classic hub, and
// on Web PubSub the upstream echo through the hub's event handler, whose
// round trip the latency then holds.
type echo struct{ conns []wire.Echoer }

func newEcho(config.Scenario) Kind { return &echo{} }

func (k *echo) Prepare(_ context.Context, r *Run) (err error) {
	k.conns, err = capabilities[wire.Echoer](r, r.Senders())
	return err
}

func (k *echo) Send(ctx context.Context, _ *Run, sender int, payload json.RawMessage) (int, error) {
	return 1, k.conns[sender].Echo(ctx, payload)
}
