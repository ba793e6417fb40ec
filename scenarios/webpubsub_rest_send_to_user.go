package scenarios

import (
	"context"
	"encoding/json"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
)

// webPubSubRESTSendToUser is rest_send_to_user on a Web PubSub target:
// every client connects as its own user, and each send is a REST send to
// one user, so one delivery. Senders address users as on SignalR.
type webPubSubRESTSendToUser struct {
	rest  *azure.WebPubSubRESTClient
	users []string // users[sender]
}

func newWebPubSubRESTSendToUser(config.Scenario) Kind { return &webPubSubRESTSendToUser{} }

func (k *webPubSubRESTSendToUser) Prepare(_ context.Context, r *Run) (err error) {
	if k.rest, err = r.webPubSubREST(); err != nil {
		return err
	}
	k.users = shuffledUsers(r)
	return nil
}

func (k *webPubSubRESTSendToUser) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToUser(ctx, k.users[sender], payloadType, payload); err != nil {
		return 0, err
	}
	r.restSentRaw(payload)
	return 1, nil
}
