package scenarios

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubprobe/hubprobe/azure"
	"github.com/hubprobe/hubprobe/config"
)

// webPubSubRESTSendToGroup is rest_send_to_group on a Web PubSub target:
// the probe adds the clients to groups of group_size through the REST API
// (by connection id), then each send is a REST send to the sender slot's
// group, delivered to every member.
type webPubSubRESTSendToGroup struct {
	groupLayout
	rest  *azure.WebPubSubRESTClient
	names []string
}

func newWebPubSubRESTSendToGroup(cfg config.Scenario) Kind {
	return &webPubSubRESTSendToGroup{groupLayout: newGroupLayout(cfg)}
}

func (k *webPubSubRESTSendToGroup) Prepare(ctx context.Context, r *Run) (err error) {
	if k.rest, err = r.webPubSubREST(); err != nil {
		return err
	}
	if err := k.joinGroups(ctx, r, k.addToGroup); err != nil {
		return err
	}
	k.names = groupNames(&k.groupLayout, r)
	return nil
}

func (k *webPubSubRESTSendToGroup) addToGroup(ctx context.Context, c *Client, group string) error {
	if err := k.rest.AddConnectionToGroup(ctx, group, c.ID); err != nil {
		return fmt.Errorf("add to group: %w", err)
	}
	return nil
}

func (k *webPubSubRESTSendToGroup) Send(ctx context.Context, r *Run, sender int, payload json.RawMessage) (int, error) {
	if err := k.rest.SendToGroup(ctx, k.names[sender], payloadType, payload); err != nil {
		return 0, err
	}
	r.restSentRaw(payload)
	return k.reach(sender), nil
}
