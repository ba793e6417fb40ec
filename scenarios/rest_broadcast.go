package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/config"
	"github.com/hubprobe/hubprobe/scenarios/wire"
)

// restBroadcast: the clients only listen; each send is a REST broadcast of
// the payload to the whole hub, so one send is one delivery per client of
// the run (other listeners on the hub are not this run's to count).
type restBroadcast struct{ rest wire.REST }

func newRESTBroadcast(config.Scenario) Kind { return &restBroadcast{} }

func (k *restBroadcast) Prepare(_ context.Context, r *Run) (err error) {
	k.rest, err = r.REST()
	return err
}

func (k *restBroadcast) Send(ctx context.Context, r *Run, _ int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToAll(ctx, payload); err != nil {
		return 0, err
	}
	return len(r.Clients), nil
}
