package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
)

// restBroadcast: the clients only listen; each send is a REST broadcast of
// RecordLatency(p) to the whole hub, so one send is one delivery per client
// of the run (other listeners on the hub are not this run's to count).
type restBroadcast struct{ rest *azure.RESTClient }

func newRESTBroadcast(config.Scenario) Kind { return &restBroadcast{} }

func (k *restBroadcast) Prepare(_ context.Context, r *Run) (err error) {
	k.rest, err = r.restClient()
	return err
}

func (k *restBroadcast) Send(ctx context.Context, r *Run, _ int, payload json.RawMessage) (int, error) {
	if err := k.rest.Broadcast(ctx, restTarget, []json.RawMessage{payload}); err != nil {
		return 0, err
	}
	r.restSent(payload)
	return len(r.Clients), nil
}
