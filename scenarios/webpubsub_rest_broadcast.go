package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
)

// webPubSubRESTBroadcast is rest_broadcast on a Web PubSub target: each
// send is a REST send to all, so one delivery per client of the run.
type webPubSubRESTBroadcast struct{ rest *azure.WebPubSubRESTClient }

func newWebPubSubRESTBroadcast(config.Scenario) Kind { return &webPubSubRESTBroadcast{} }

func (k *webPubSubRESTBroadcast) Prepare(_ context.Context, r *Run) (err error) {
	k.rest, err = r.webPubSubREST()
	return err
}

func (k *webPubSubRESTBroadcast) Send(ctx context.Context, r *Run, _ int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToAll(ctx, payloadType, payload); err != nil {
		return 0, err
	}
	r.restSentRaw(payload)
	return len(r.Clients), nil
}
